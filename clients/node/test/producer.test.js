// The producer: create, createMany, get, cancel, retry, redrive, schedules,
// the grant helper, and wait (woken by the worker's announcement).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import * as workload from '@workload/client';
import { APP, admin, dsn, setup, sign, startWorker } from './helpers.js';

let db;
before(async () => { db = await admin(); });
after(async () => { await db.end(); });

test('the grant helper builds a grant the server signs and verifies', async () => {
  const { tenant } = await setup(db);
  const body = workload.grant({ tenant, application: APP, subject: 'service:billing', capabilities: ['pdf'], databaseRole: 'wlc_app' });
  assert.deepEqual(Object.keys(body).sort(), ['application_id', 'capabilities', 'constraints', 'contract_version',
    'expires_at', 'id', 'issued_at', 'issuer', 'parent_grant', 'resources', 'revision', 'status', 'subject', 'tenant_id']);
  const signed = await sign(db, body);
  assert.equal((await db.query('SELECT workload_verify_grant($1::jsonb) AS v', [JSON.stringify(signed)])).rows[0].v, true);
  const c = new workload.Client({ connection: dsn('APP'), tenant, application: APP, grant: signed });
  try {
    const doc = await c.create('g.pdf', { n: 1 }, { key: 'g-1', capabilities: ['pdf'] });
    assert.deepEqual(doc.requested_by, { kind: 'service', id: 'billing' });
    await assert.rejects(c.create('g.zip', { n: 1 }, { key: 'g-2', capabilities: ['zip'] }), workload.UnauthorizedError);
  } finally {
    await c.close();
  }
});

test('create, get, list, cancel, retry', async () => {
  const { tenant, client } = await setup(db);
  try {
    const doc = await client.create('p.one', { n: 1 }, { key: 'one', fields: { priority: 5 } });
    assert.equal(doc.state, 'READY');
    assert.equal(doc.priority, 5);
    assert.equal(doc.tenant_id, tenant);
    assert.equal((await client.create('p.one', { n: 1 }, { key: 'one', fields: { priority: 5 } })).workload_id, doc.workload_id);
    assert.deepEqual((await client.get(doc.workload_id)).input, { n: 1 });
    assert.deepEqual((await client.list({ state: 'READY' })).map((d) => d.workload_id), [doc.workload_id]);
    assert.equal(await client.cancel(doc.workload_id, 'ops'), 'CANCELLED');
    await assert.rejects(client.retry(doc.workload_id, 'ops'), workload.TransitionDeniedError);
    assert.equal((await client.stats()).states.CANCELLED, 1);
  } finally {
    await client.close();
  }
});

test('createMany answers each item', async () => {
  const { client } = await setup(db);
  try {
    const specs = [0, 1, 2].map((i) => client.spec('p.many', { n: i }, { key: `many-${i}` }));
    specs.push(client.spec('p.many', { password: 'x' }, { key: 'many-bad' }));
    const out = await client.createMany(specs);
    assert.deepEqual(out.map((c) => c.outcome), ['created', 'created', 'created', 'refused']);
    assert.ok(out[3].error instanceof workload.SecretRejectedError);
    assert.equal(out[0].error, null);
    assert.deepEqual((await client.createMany(specs.slice(0, 1))).map((c) => c.outcome), ['existing']);
  } finally {
    await client.close();
  }
});

test('redrive moves dead letters back', async () => {
  const { tenant, client } = await setup(db);
  const w = new pg.Client({ connectionString: dsn('WORKER') });
  await w.connect();
  try {
    const ids = [];
    for (const i of [0, 1]) ids.push((await client.create('p.dead', { n: i }, { key: `dead-${i}` })).workload_id);
    const { rows } = await w.query(`SELECT workload_id, claim_id, fencing_token FROM workload_claim(
      'w', '{}', $1, 'app', max_items => 2, start => true)`, [tenant]);
    for (const r of rows) await w.query("SELECT workload_fail($1, $2, 'w', $3, 'permanent', 'no')", [r.workload_id, r.claim_id, r.fencing_token]);
    assert.deepEqual((await client.redrive('ops', { failureKind: 'permanent' })).sort(), ids.sort());
    for (const id of ids) assert.equal((await client.get(id)).state, 'READY');
  } finally {
    await w.end();
    await client.close();
  }
});

test('schedules', async () => {
  const { client } = await setup(db);
  try {
    const doc = await client.schedule('nightly', '0 3 * * *', client.template('p.nightly', {}), { timezone: 'Europe/Berlin' });
    assert.equal(doc.schedule_id, 'nightly');
    assert.equal((await client.pauseSchedule('nightly')).paused, true);
    assert.equal((await client.resumeSchedule('nightly')).paused, false);
    assert.deepEqual((await client.schedules()).map((s) => s.schedule_id), ['nightly']);
    await client.dropSchedule('nightly');
    await assert.rejects(client.dropSchedule('nightly'), workload.NotFoundError);
  } finally {
    await client.close();
  }
});

test('wait is woken by the completion, not by polling', async () => {
  const { tenant, client } = await setup(db);
  const w = startWorker(tenant, async (input) => {
    await new Promise((r) => setTimeout(r, 500));
    return { double: input.n * 2 };
  });
  try {
    const doc = await client.create('p.wait', { n: 7 }, { key: 'wait-1' });
    const t0 = Date.now();
    // poll 30: only a notification can end this wait within the bound below
    const done = await client.wait(doc.workload_id, { timeout: 20, poll: 30 });
    assert.equal(done.state, 'SUCCEEDED');
    assert.deepEqual(done.result.output, { double: 14 });
    assert.ok(Date.now() - t0 < 5000, `wait took ${Date.now() - t0} ms`);
    const never = await client.create('p.never', {}, { key: 'never', capabilities: ['nobody'] });
    await assert.rejects(client.wait(never.workload_id, { timeout: 0.5 }), { name: 'TimeoutError' });
  } finally {
    await w.stop();
    await client.close();
  }
});
