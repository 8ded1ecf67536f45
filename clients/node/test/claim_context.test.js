// The worker's claims carry each workload's execution context (context: true,
// the default): the handler gets what workload_execution_context answers with
// no second call, and work whose authority no longer verifies is
// dead-lettered by the claim instead of being handed out; context: false asks
// in a second statement, and secret references are always asked for.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { grant } from '@workload/client';
import { APP, admin, dsn, setup, sign, startWorker, states, waitFor } from './helpers.js';

let db;
before(async () => { db = await admin(); });
after(async () => { await db.end(); });

/** What workload_execution_context answers for the job's claim, asked by the claim's role. */
async function asked(ctx, refs = []) {
  const c = new pg.Client({ connectionString: dsn('WORKER') });
  await c.connect();
  try {
    return (await c.query('SELECT workload_execution_context($1, $2, $3, $4, $5::text[]) AS v',
      [ctx.workloadId, ctx.claimId, ctx.workerId, ctx.fencingToken, refs])).rows[0].v;
  } finally {
    await c.end();
  }
}

/** Rotates the signing key and retires the one signed was signed under; resolves to a grant signed under the new key. */
async function retireTheKeyOf(signed, tenant) {
  await db.query('SELECT workload_rotate_signing_key()');
  await db.query('SELECT workload_retire_signing_key($1)', [signed.key_id]);
  return sign(db, grant({ tenant, application: APP, subject: 'service:billing', capabilities: ['*'] }));
}

test('each claimed job carries what workload_execution_context answers', async () => {
  const { tenant, client } = await setup(db);
  const ids = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await client.create('c.ctx', { n: i }, { key: `ctx-${i}`, capabilities: ['pdf'], fields: { connection_scopes: ['db:invoices'] } })).workload_id);
  }
  const seen = [];
  // one claim of three (concurrency 3), no heartbeat before the handlers ask (lease 30)
  const w = startWorker(tenant, async (input, ctx) => {
    seen.push([ctx.workloadId, ctx.executionContext, await asked(ctx)]);
    return {};
  }, { capabilities: ['pdf'], context: true, concurrency: 3, lease: 30 });
  try {
    await waitFor(async () => (await states(client, ids)).every((s) => s === 'SUCCEEDED'));
  } finally {
    await w.stop();
  }
  assert.deepEqual(seen.map(([id]) => id).sort(), [...ids].sort());
  for (const [id, got, answer] of seen) {
    assert.equal(typeof got, 'object');
    assert.equal(got.workload_id, id);
    assert.deepEqual(got, answer);
    assert.deepEqual([got.capabilities, got.connection_scopes, got.secret_references], [['pdf'], ['db:invoices'], []]);
  }
  await client.close();
});

test('work whose signing key was retired is dead-lettered by the claim', async () => {
  const { tenant, signed, client } = await setup(db);
  const old = (await client.create('c.old', {}, { key: 'old' })).workload_id;
  const newer = await retireTheKeyOf(signed, tenant);
  const fresh = (await client.create('c.new', {}, { key: 'new', grant: newer })).workload_id;
  const ran = [];
  const failed = [];
  const w = startWorker(tenant, (input, ctx) => { ran.push(ctx.workloadId); }, { context: true, hooks: { failed: (j) => failed.push(j.workloadId) } });
  try {
    await waitFor(async () => JSON.stringify(await states(client, [old, fresh])) === '["DEAD_LETTER","SUCCEEDED"]');
  } finally {
    await w.stop();
  }
  assert.deepEqual([ran, failed], [[fresh], []]);
  const doc = await client.get(old);
  const last = doc.events.at(-1);
  assert.deepEqual([last.to_state, last.actor, last.evidence], ['DEAD_LETTER', 'workload.claim', { cause: 'authorization_invalid' }]);
  assert.equal(doc.last_failure, null);
  await client.close();
});

test('without context the worker asks, and fails that work itself', async () => {
  const { tenant, signed, client } = await setup(db);
  const old = (await client.create('c.old', {}, { key: 'old' })).workload_id;
  await retireTheKeyOf(signed, tenant);
  const ran = [];
  const failed = [];
  const w = startWorker(tenant, (input, ctx) => { ran.push(ctx.workloadId); },
    { context: false, hooks: { failed: (j, kind, error, state) => failed.push([j.workloadId, kind, state]) } });
  try {
    await waitFor(async () => (await client.get(old)).state === 'DEAD_LETTER');
  } finally {
    await w.stop();
  }
  assert.deepEqual(ran, []);
  assert.deepEqual(failed, [[old, 'authorization_denied', 'DEAD_LETTER']]);
  assert.equal((await client.get(old)).last_failure.kind, 'authorization_denied');
  await client.close();
});

test('secret references reach the context', async () => {
  const { tenant, client } = await setup(db);
  const refs = ['secret://vault/smtp'];
  const id = (await client.create('c.refs', {}, { key: 'refs' })).workload_id;
  const seen = [];
  const w = startWorker(tenant, async (input, ctx) => {
    seen.push([ctx.executionContext, await asked(ctx, refs)]);
    return {};
  }, { context: true, secretReferences: refs, lease: 30 });
  try {
    await waitFor(async () => (await client.get(id)).state === 'SUCCEEDED');
  } finally {
    await w.stop();
  }
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0][0].secret_references, refs);
  assert.deepEqual(seen[0][0], seen[0][1]);
  await client.close();
});
