// The quick start's snippets (examples/) run as written: the worker drains,
// the producer's workload succeeds and its wait prints the result.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { grant } from '@workload/client';
import { admin, dsn, sign } from './helpers.js';

const examples = join(import.meta.dirname, '..', 'examples');

test('the examples run as written', { timeout: 90000 }, async () => {
  const db = await admin();
  let worker;
  try {
    for (const role of ['wlc_app', 'wlc_worker']) await db.query("SELECT workload_add_tenant_member($1, 'acme', 'billing')", [role]);
    const signed = await sign(db, grant({ tenant: 'acme', application: 'billing', subject: 'service:billing', capabilities: ['pdf'], databaseRole: 'wlc_app' }));
    const env = { ...process.env, APP_DSN: dsn('APP'), WORKER_DSN: dsn('WORKER'), BILLING_GRANT: JSON.stringify(signed) };
    worker = spawn(process.execPath, [join(examples, 'worker.mjs')], { env, stdio: 'inherit' });
    worker.exited = new Promise((resolve) => worker.on('exit', (code) => resolve(code)));
    const { stdout } = await promisify(execFile)(process.execPath, [join(examples, 'producer.mjs')], { env, timeout: 60000 });
    assert.equal(stdout.trim(), 'SUCCEEDED {"pages":3,"invoice":42}');
  } finally {
    worker?.kill('SIGTERM');
    assert.equal(await worker?.exited, 0);
    await db.end();
  }
});
