// When the admin removes a member from the tenant, the server renames the
// tenant's channel and says so on the old name: a running worker and a
// waiting client LISTEN on the new name and go on being woken by
// notifications, not by their poll fallback.
//
// Without a notification, the worker claims and a wait reads the document
// after 0.25, 0.5, 1, 2, 4, 8, ... seconds of quiet (doubling up to poll,
// here 30), counted from the last wake-up.  So what happens 9 s after the
// rename (its own wake-up) and is noticed within 3 s was noticed through a
// notification: the next poll would be 15.75 s after the rename.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { APP, admin, setup, startWorker, waitFor } from './helpers.js';

const QUIET = 9000;    // ms after the rename: between the polls at 7.75 s and 15.75 s
const PROMPT = 3000;   // a notification is noticed well within this; the next poll is 6.75 s away

let db;
before(async () => { db = await admin(); });
after(async () => { await db.end(); });

const channel = async (tenant) => (await db.query('SELECT workload_channel($1, $2) AS v', [tenant, APP])).rows[0].v;

/** Removes the other member; resolves to when the rename committed. */
async function rename(tenant) {
  const before = await channel(tenant);
  await db.query("SELECT workload_remove_tenant_member('wlc_other', $1, $2)", [tenant, APP]);
  const at = Date.now();
  assert.notEqual(await channel(tenant), before, 'the channel was not renamed');
  return at;
}

const until = (at) => delay(Math.max(0, at - Date.now()));

test('a running worker follows the renamed channel', async () => {
  const { tenant, client } = await setup(db);
  await db.query("SELECT workload_add_tenant_member('wlc_other', $1, $2)", [tenant, APP]);
  const claimed = new Map();
  const ended = new Map();
  const w = startWorker(tenant, async (input, ctx) => {
    await delay(input.sleep);
    ended.set(ctx.workloadId, Date.now());
    return {};
  }, { poll: 30, lease: 30, hooks: { claimed: (j) => { if (!claimed.has(j.workloadId)) claimed.set(j.workloadId, Date.now()); } } });
  try {
    const first = (await client.create('r.first', { sleep: 0 }, { key: 'first' })).workload_id;
    await waitFor(async () => (await client.get(first)).state === 'SUCCEEDED');
    await until((await rename(tenant)) + QUIET);
    const t0 = Date.now();
    const second = (await client.create('r.second', { sleep: 5000 }, { key: 'second' })).workload_id;
    await waitFor(() => claimed.has(second), 20000, 50);
    assert.ok(claimed.get(second) - t0 < PROMPT, `claimed ${claimed.get(second) - t0} ms after its create`);
    // its completion is announced on the new done channel: a wait that started with the
    // handler (whose reads come at 3.75 and 7.75 s) ends as the handler returns at 5 s
    const done = await client.wait(second, { timeout: 20, poll: 30 });
    const returned = Date.now();
    assert.equal(done.state, 'SUCCEEDED');
    assert.ok(returned - ended.get(second) < 1500, `the wait ended ${returned - ended.get(second)} ms late`);
  } finally {
    await w.stop();
    await client.close();
  }
});

test('a wait follows the renamed channel', async () => {
  const { tenant, client } = await setup(db);
  await db.query("SELECT workload_add_tenant_member('wlc_other', $1, $2)", [tenant, APP]);
  const id = (await client.create('r.wait', {}, { key: 'wait' })).workload_id;
  let ended = null;
  const waiting = client.wait(id, { timeout: 60, poll: 30 }).then((doc) => { ended = [doc.state, Date.now()]; });
  let w;
  try {
    await delay(1000);   // it LISTENs
    await until((await rename(tenant)) + QUIET);
    const t0 = Date.now();
    w = startWorker(tenant, () => ({}));   // it asks for the channel's name at its start
    await waiting;
    assert.equal(ended[0], 'SUCCEEDED');
    assert.ok(ended[1] - t0 < PROMPT, `the wait ended ${ended[1] - t0} ms after the worker started`);
  } finally {
    await w?.stop();
    await client.close();
  }
});
