// Real worker processes, one of them SIGKILLed: nothing is lost, nothing is
// completed twice, the killed one's work is recovered under a higher fence,
// a checkpointed handler resumes where the killed one stopped, and SIGTERM
// drains.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { admin, setup, waitFor } from './helpers.js';

let db;
let dir;
before(async () => { db = await admin(); dir = mkdtempSync(join(tmpdir(), 'wlc-node-')); });
after(async () => { await db.end(); });

function start(mode, tenant, workerId, { concurrency = 8, lease = 2 } = {}) {
  const log = join(dir, `${workerId}.log`);
  const p = spawn(process.execPath, [join(import.meta.dirname, 'worker_proc.mjs'), mode, tenant, workerId,
    String(concurrency), String(lease), log], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => p.on('exit', (code, sig) => resolve(code ?? sig)));
  return { p, log, exited };
}

const lines = (log) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
const q = async (sql, params) => (await db.query(sql, params)).rows;

/** The tick's first step, every half second (the test cluster runs no background worker). */
function recovery() {
  const t = setInterval(() => db.query('SELECT workload_recover_expired()').catch(() => {}), 500);
  return () => clearInterval(t);
}

test('1000 workloads drained while a worker is SIGKILLed', { timeout: 180000 }, async (t) => {
  const { tenant, client } = await setup(db);
  const specs = [];
  for (let i = 0; i < 1000; i++) {
    specs.push(client.spec('k.sleep', { n: i, ms: 20 + ((i * 37) % 60) }, { key: `k-${i}`,
      fields: { retry_policy: { max_attempts: 5, initial_delay_ms: 0 } } }));
  }
  assert.deepEqual([...new Set((await client.createMany(specs)).map((c) => c.outcome))], ['created']);
  const stopRecovery = recovery();
  const t0 = Date.now();
  const w1 = start('sleep', tenant, 'node-w1');
  const w2 = start('sleep', tenant, 'node-w2');
  const heldSql = `SELECT workload_id, fencing_token::int AS token FROM workload.workloads
    WHERE tenant_id = $1 AND worker_id = 'node-w2' AND state = 'RUNNING'`;
  let held;
  let took;
  try {
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM workload.workloads WHERE tenant_id = $1 AND state = 'SUCCEEDED'", [tenant]))[0].n >= 250
      && (await q(heldSql, [tenant])).length >= 3, 60000, 50);
    w2.p.kill('SIGKILL');
    await w2.exited;
    held = new Map((await q(heldSql, [tenant])).map((r) => [r.workload_id, r.token]));
    assert.ok(held.size > 0, 'the killed worker held nothing');
    await waitFor(async () => (await q(`SELECT count(*)::int AS n FROM workload.workloads WHERE tenant_id = $1
      AND state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')`, [tenant]))[0].n === 0, 120000, 200);
    took = (Date.now() - t0) / 1000;
  } finally {
    stopRecovery();
    w1.p.kill('SIGTERM');
    assert.equal(await w1.exited, 0);
  }
  assert.deepEqual(await q('SELECT state::text, count(*)::int AS n FROM workload.workloads WHERE tenant_id = $1 GROUP BY 1', [tenant]),
    [{ state: 'SUCCEEDED', n: 1000 }]);
  // exactly one result each, and it is the workload's own
  assert.deepEqual(await q('SELECT count(*)::int AS n, count(DISTINCT workload_id)::int AS d FROM workload.results WHERE tenant_id = $1', [tenant]),
    [{ n: 1000, d: 1000 }]);
  assert.equal((await q(`SELECT count(*)::int AS n FROM workload.results WHERE tenant_id = $1
    AND output ->> 'n' IS DISTINCT FROM workload_get(workload_id) -> 'input' ->> 'n'`, [tenant]))[0].n, 0);
  // the killed worker's claims were recovered and completed under a higher fence
  for (const [id, token] of held) {
    const doc = await client.get(id);
    const lost = doc.attempts.filter((a) => a.worker_id === 'node-w2' && a.fencing_token === token);
    assert.equal(lost[0]?.outcome, 'WORKER_LOST', id);
    assert.ok(doc.result.provenance.fencing_token > token, id);
    assert.equal(doc.result.provenance.worker_id, 'node-w1');
  }
  const starts = [...lines(w1.log), ...lines(w2.log)].filter((x) => x.ev === 'start');
  assert.equal(new Set(starts.map((x) => x.id)).size, 1000);
  t.diagnostic(`node: 1000 drained in ${took.toFixed(1)} s by two processes of concurrency 8; node-w2 SIGKILLed holding ${held.size}, each recovered under a higher fence by node-w1`);
  await client.close();
});

test('a checkpointed handler resumes after a kill', { timeout: 120000 }, async () => {
  const { tenant, client } = await setup(db);
  const id = (await client.create('k.steps', { steps: 6 }, { key: 'steps', fields: { retry_policy: { initial_delay_ms: 0 } } })).workload_id;
  const stopRecovery = recovery();
  let b;
  let doneAtKill;
  try {
    const a = start('steps', tenant, 'node-a', { concurrency: 1 });
    await waitFor(() => lines(a.log).some((x) => x.ev === 'checkpoint' && x.done === 3), 30000, 50);
    a.p.kill('SIGKILL');
    await a.exited;
    doneAtKill = Math.max(...lines(a.log).filter((x) => x.ev === 'checkpoint').map((x) => x.done));
    b = start('steps', tenant, 'node-b', { concurrency: 1 });
    await waitFor(async () => (await client.get(id)).state === 'SUCCEEDED', 60000);
  } finally {
    stopRecovery();
    if (b) {
      b.p.kill('SIGTERM');
      assert.equal(await b.exited, 0);
    }
  }
  const resumed = lines(b.log).filter((x) => x.ev === 'resume');
  assert.ok(doneAtKill >= 3);
  assert.equal(resumed[0].done, doneAtKill);
  const doc = await client.get(id);
  assert.deepEqual(doc.result.output, { steps: 6, resumed_from: doneAtKill });
  assert.deepEqual(doc.checkpoints.map((c) => c.state.done), [1, 2, 3, 4, 5, 6]);
  assert.equal(doc.result.provenance.fencing_token, 2);
  await client.close();
});

test('SIGTERM lets running handlers finish', { timeout: 60000 }, async () => {
  const { tenant, client } = await setup(db);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push((await client.create('k.sleep', { n: i, ms: 1500 }, { key: `t-${i}` })).workload_id);
  const w = start('sleep', tenant, 'node-term', { concurrency: 4, lease: 5 });
  await waitFor(() => lines(w.log).filter((x) => x.ev === 'start').length === 4, 30000, 50);
  w.p.kill('SIGTERM');
  assert.equal(await w.exited, 0);
  for (const id of ids) assert.equal((await client.get(id)).state, 'SUCCEEDED');
  assert.equal(lines(w.log).at(-1).ev, 'exit');
  await client.close();
});
