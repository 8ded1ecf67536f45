// What the tests share: the database test/clients/node.sh made (WL_*_DSN), a
// tenant of each test's own (tests never see each other's workloads), a grant
// signed for it, and a worker run in this process.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { Client, Worker, grant } from '@workload/client';

export const APP = 'app';

export function dsn(name) {
  const v = process.env[`WL_${name}_DSN`];
  if (!v) throw new Error(`WL_${name}_DSN is not set: run test/clients/node.sh`);
  return v;
}

export async function admin() {
  const c = new pg.Client({ connectionString: dsn('ADMIN') });
  await c.connect();
  return c;
}

/** A new tenant with both roles as members, a grant signed for it, and a producer. */
export async function setup(db, { capabilities = ['*'], ttlSeconds } = {}) {
  const tenant = `n${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  for (const role of ['wlc_app', 'wlc_worker']) {
    await db.query('SELECT workload_add_tenant_member($1, $2, $3)', [role, tenant, APP]);
  }
  const signed = await sign(db, grant({ tenant, application: APP, subject: 'service:billing', capabilities, ttlSeconds }));
  const client = new Client({ connection: dsn('APP'), tenant, application: APP, grant: signed, environment: 'test' });
  return { tenant, signed, client };
}

export async function sign(db, body) {
  return (await db.query('SELECT workload_sign_grant($1::jsonb) AS v', [JSON.stringify(body)])).rows[0].v;
}

/** A Worker in this process; stop() resolves once it has drained. */
export function startWorker(tenant, handler, options = {}) {
  const w = new Worker({ connection: dsn('WORKER'), tenant, application: APP, lease: 3, poll: 1, ...options }, handler);
  const running = w.run();
  running.catch(() => {});
  return { worker: w, running, stop: async () => { w.stop(); await running; } };
}

export async function waitFor(fn, timeout = 20000, every = 100) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await delay(every);
  }
  throw new Error(`not within ${timeout} ms: ${fn}`);
}

export async function states(client, ids) {
  return Promise.all(ids.map(async (id) => (await client.get(id)).state));
}
