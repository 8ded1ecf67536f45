// bench/clients.sh: a Node.js worker with a no-op handler (until SIGTERM).
// usage: node noop.mjs URL TENANT CONCURRENCY
import { runWorker } from '../../clients/node/src/index.js';

const [connection, tenant, concurrency] = process.argv.slice(2);
await runWorker({ connection, tenant, application: 'bench', concurrency: Number(concurrency),
  workerId: 'node-noop', lease: 30, poll: 1 }, () => undefined);
