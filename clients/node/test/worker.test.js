// The worker in process: outcomes from the handler's value or error, hooks,
// cancellation through the AbortSignal, checkpoints, the execution context.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import * as workload from '@workload/client';
import { APP, admin, dsn, setup, sign, startWorker, states, waitFor } from './helpers.js';

let db;
before(async () => { db = await admin(); });
after(async () => { await db.end(); });

test('the handler value completes the workload and hooks see it', async () => {
  const { tenant, client } = await setup(db);
  const seen = { claimed: [], succeeded: [] };
  const contexts = [];
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await client.create('w.add', { a: i, b: 1 }, { key: `add-${i}`, capabilities: ['math'] })).workload_id);
  const w = startWorker(tenant, (input, ctx) => {
    contexts.push(ctx.executionContext);
    assert.equal(ctx.fencingToken, '1');
    assert.equal(ctx.attempt, 1);
    return { sum: input.a + input.b };
  }, { capabilities: ['math'], concurrency: 2, hooks: {
    claimed: (j) => seen.claimed.push(j.workloadId),
    succeeded: (j, out) => seen.succeeded.push([j.workloadId, out]),
  } });
  try {
    await waitFor(async () => (await states(client, ids)).every((s) => s === 'SUCCEEDED'));
  } finally {
    await w.stop();
  }
  assert.deepEqual(await Promise.all(ids.map(async (id) => (await client.get(id)).result.output.sum)), [1, 2, 3, 4, 5]);
  assert.deepEqual(seen.claimed.sort(), [...ids].sort());
  assert.deepEqual(seen.succeeded.map(([id]) => id).sort(), [...ids].sort());
  assert.equal(contexts.length, 5);
  assert.ok(contexts.every((c) => JSON.stringify(c.capabilities) === '["math"]'));
  await client.close();
});

test('a PermanentError dead-letters; other errors are retried', async () => {
  const { tenant, client } = await setup(db);
  const failed = [];
  const bad = (await client.create('w.bad', {}, { key: 'bad' })).workload_id;
  const flaky = (await client.create('w.flaky', {}, { key: 'flaky', fields: { retry_policy: { initial_delay_ms: 0 } } })).workload_id;
  const w = startWorker(tenant, (input, ctx) => {
    if (ctx.definitionId === 'w.bad') throw new workload.PermanentError('the invoice does not exist');
    if (ctx.attempt === 1) throw new Error('smtp went away');
    return { sent: true };
  }, { hooks: { failed: (j, kind, err, state) => failed.push([j.attempt, kind, state]) } });
  try {
    await waitFor(async () => JSON.stringify(await states(client, [bad, flaky])) === '["DEAD_LETTER","SUCCEEDED"]');
  } finally {
    await w.stop();
  }
  const doc = await client.get(bad);
  assert.equal(doc.attempt_count, 1);
  assert.equal(doc.last_failure.kind, 'permanent');
  assert.match(doc.last_failure.error, /the invoice does not exist/);
  assert.equal((await client.get(flaky)).attempt_count, 2);
  assert.deepEqual(failed.sort(), [[1, 'permanent', 'DEAD_LETTER'], [1, 'worker_failure', 'READY']]);
  await client.close();
});

test('cancellation aborts ctx.signal and is confirmed', async () => {
  const { tenant, client } = await setup(db);
  const cancelled = [];
  const id = (await client.create('w.long', {}, { key: 'long' })).workload_id;
  const w = startWorker(tenant, (input, ctx) => new Promise((resolve, reject) => {
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
  }), { lease: 1.5, hooks: { cancelled: (j) => cancelled.push(j.workloadId) } });
  try {
    await waitFor(async () => (await client.get(id)).state === 'RUNNING');
    const t0 = Date.now();
    assert.equal(await client.cancel(id, 'ops'), 'CANCELLATION_REQUESTED');
    await waitFor(async () => (await client.get(id)).state === 'CANCELLED');
    assert.ok(Date.now() - t0 < 2500, `took ${Date.now() - t0} ms`);   // one heartbeat (lease / 3)
  } finally {
    await w.stop();
  }
  assert.deepEqual(cancelled, [id]);
  await client.close();
});

test('checkpoint and resume through the context', async () => {
  const { tenant, client } = await setup(db);
  const id = (await client.create('w.steps', { steps: 4 }, { key: 'steps', fields: { retry_policy: { initial_delay_ms: 0 } } })).workload_id;
  const runs = [];
  const w = startWorker(tenant, async (input, ctx) => {
    const state = (await ctx.resume()) ?? { done: 0 };
    runs.push([ctx.attempt, state.done]);
    let n = state.done;
    while (n < input.steps) {
      n++;
      await ctx.checkpoint({ done: n });
      if (n === 2 && ctx.attempt === 1) throw new workload.RetryableError('crashed after step 2', 'transient_connection');
    }
    return { steps: n };
  });
  try {
    await waitFor(async () => (await client.get(id)).state === 'SUCCEEDED');
  } finally {
    await w.stop();
  }
  assert.deepEqual(runs, [[1, 0], [2, 2]]);
  const doc = await client.get(id);
  assert.deepEqual(doc.checkpoints.map((c) => c.state.done), [1, 2, 3, 4]);
  assert.equal(doc.last_failure.kind, 'transient_connection');
  await client.close();
});

test('work whose grant expired is never run', async () => {
  const { tenant, client } = await setup(db, { ttlSeconds: 2 });
  const id = (await client.create('w.late', {}, { key: 'late' })).workload_id;
  await delay(2500);   // the grant has expired; the workload is still READY
  const ran = [];
  const w = startWorker(tenant, (input, ctx) => { ran.push(ctx.workloadId); });
  try {
    await waitFor(async () => (await client.get(id)).state === 'DEAD_LETTER');
  } finally {
    await w.stop();
  }
  assert.deepEqual(ran, []);
  // the claim dead-letters it, with the cause (SPEC section 5.1)
  const last = (await client.get(id)).events.at(-1);
  assert.deepEqual([last.to_state, last.actor, last.evidence], ['DEAD_LETTER', 'workload.claim', { cause: 'authorization_expired' }]);
  await client.close();
});

test('a setup refusal rejects run()', async () => {
  const w = new workload.Worker({ connection: dsn('WORKER'), tenant: 'not-my-tenant', application: APP }, () => ({}));
  await assert.rejects(w.run(), workload.UnauthorizedError);
});

test('sign() of the helpers is what Client.signGrant does', async () => {
  const { tenant } = await setup(db);
  const c = new workload.Client({ connection: dsn('ADMIN'), tenant, application: APP });
  try {
    const signed = await c.signGrant(workload.grant({ tenant, application: APP, subject: 'human:ann' }));
    assert.equal(signed.grant.subject.id, 'ann');
    assert.match(signed.signature, /^[0-9a-f]{64}$/);
    assert.ok(await sign(db, signed.grant));
  } finally {
    await c.close();
  }
});
