// Refusals are typed errors: one class per code of workload_error_codes(),
// the same class whether a single call raised its SQLSTATE or a batch item
// answered its code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import * as workload from '@workload/client';
import { admin, dsn, setup } from './helpers.js';

let db;
before(async () => { db = await admin(); });
after(async () => { await db.end(); });

test('every server code has its class', async () => {
  const { rows } = await db.query('SELECT code, sqlstate FROM workload_error_codes()');
  assert.ok(rows.length > 0);
  for (const { code, sqlstate } of rows) {
    const cls = workload.ERRORS[code];
    assert.ok(cls, `no class for ${code}`);
    assert.equal(cls.sqlstate, sqlstate, code);
    assert.equal(workload[cls.name], cls);
    assert.ok(new cls('m') instanceof workload.WorkloadError);
  }
});

test('a single call and a batch item give the same class', async () => {
  const { tenant, client } = await setup(db);
  await client.create('e.stale', { n: 1 }, { key: 'stale-1' });
  const w = new pg.Client({ connectionString: dsn('WORKER') });
  await w.connect();
  try {
    const { rows: [row] } = await w.query(`SELECT workload_id, claim_id, fencing_token FROM workload_claim(
      'w1', '{}', $1, 'app', start => true)`, [tenant]);
    const fence = [row.workload_id, row.claim_id, row.fencing_token];
    await w.query("SELECT workload_fail($1, $2, 'w1', $3, 'permanent', 'x')", fence);
    const single = await w.query("SELECT workload_heartbeat($1, $2, 'w1', $3, '30 seconds')", fence).catch((e) => e);
    assert.equal(single.code, 'WL006');
    const { rows: [item] } = await w.query(`SELECT code FROM workload_heartbeat_many('w1', jsonb_build_array(
      jsonb_build_object('workload_id', $1::text, 'claim_id', $2::text, 'fencing_token', $3::bigint)), '30 seconds')`, fence);
    assert.equal(item.code, 'WORKLOAD_CLAIM_INVALID');
    const a = workload.fromPg(single);
    const b = workload.fromCode(item.code);
    assert.equal(a.constructor, workload.ClaimInvalidError);
    assert.equal(b.constructor, workload.ClaimInvalidError);
    assert.ok(a instanceof workload.FenceError && a.detail);
  } finally {
    await w.end();
    await client.close();
  }
});

test('producer calls reject with typed errors', async () => {
  const { client } = await setup(db);
  try {
    await client.create('e.idem', { n: 1 }, { key: 'idem-1' });
    await assert.rejects(client.create('e.idem', { n: 2 }, { key: 'idem-1' }),
      (e) => e instanceof workload.IdempotencyConflictError && e.sqlstate === 'WL012');
    await assert.rejects(client.get('workload_000000000000000000000000'), workload.NotFoundError);
    await assert.rejects(client.create('e.secret', { password: 'x' }, { key: 's' }), workload.SecretRejectedError);
  } finally {
    await client.close();
  }
});
