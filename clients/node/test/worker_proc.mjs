// A worker process for the tests that kill one (kill.test.js): runs until
// SIGTERM, writing a JSON line per handler start and checkpoint to LOG.
// usage: node worker_proc.mjs MODE TENANT WORKER_ID CONCURRENCY LEASE LOG
// MODE sleep: sleep input.ms, return {n: input.n}
// MODE steps: resume, then checkpoint steps up to input.steps, 0.3 s each
import { appendFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { runWorker } from '@workload/client';

const [mode, tenant, workerId, concurrency, lease, log] = process.argv.slice(2);
const note = (o) => appendFileSync(log, `${JSON.stringify({ ...o, pid: process.pid, t: Date.now() })}\n`);

const handlers = {
  async sleep(input, ctx) {
    note({ ev: 'start', id: ctx.workloadId, attempt: ctx.attempt, token: Number(ctx.fencingToken) });
    await delay(input.ms);
    return { n: input.n };
  },
  async steps(input, ctx) {
    const state = (await ctx.resume()) ?? { done: 0 };
    note({ ev: 'resume', id: ctx.workloadId, attempt: ctx.attempt, done: state.done });
    for (let n = state.done + 1; n <= input.steps; n++) {
      await delay(300);
      await ctx.checkpoint({ done: n });
      note({ ev: 'checkpoint', id: ctx.workloadId, attempt: ctx.attempt, done: n });
    }
    return { steps: input.steps, resumed_from: state.done };
  },
};

await runWorker({
  connection: process.env.WL_WORKER_DSN, tenant, application: 'app', workerId,
  concurrency: Number(concurrency), lease: Number(lease), poll: 1, grace: 10,
}, handlers[mode]);
note({ ev: 'exit' });
