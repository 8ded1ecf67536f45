// @workload/client: producers create workloads and wait for them (Client);
// workers run a handler for each workload they claim (runWorker, Worker).
// Refusals reject with the typed errors of errors.js.  docs/node.md in the
// repository is the guide.
export { Client } from './client.js';
export { Worker, runWorker } from './worker.js';
export { grant, principal, spec } from './grants.js';
export * from './errors.js';
