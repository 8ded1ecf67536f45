// Compiled with tsc (npm test) against index.d.ts: the types say what the API is.
import {
  Client, ClaimInvalidError, FenceError, PermanentError, Worker, grant, runWorker,
  type Context, type Doc, type ExecutionContext, type Hooks, type SignedGrant,
} from '@workload/client';

declare const signed: SignedGrant;
const body = grant({ tenant: 'acme', application: 'billing', subject: 'service:billing', capabilities: ['pdf'] });
const issued: string = body.expires_at;
const client = new Client({ connection: 'postgres:///app', tenant: 'acme', application: 'billing', grant: signed });

async function produce(): Promise<string> {
  const doc: Doc = await client.create('invoice.render', { invoice: 1 }, { key: 'k', fields: { priority: 5 } });
  const many = await client.createMany([client.spec('x', {}, { key: 'a' })]);
  if (many[0].error instanceof ClaimInvalidError) return 'never';
  const done = await client.wait(doc.workload_id, { timeout: 10 });
  const state: string = await client.cancel(doc.workload_id, 'ops');
  return done.state + state + issued;
}

const hooks: Hooks = {
  failed: (job, kind, error, state) => console.log(job.workloadId, kind, error, state),
  lost: (job, error: FenceError) => console.log(job.attempt, error.code),
};

async function work(): Promise<void> {
  await runWorker({ tenant: 'acme', application: 'billing', concurrency: 2, hooks, context: true }, async (input, ctx: Context) => {
    const from = (await ctx.resume()) ?? { page: 0 };
    await ctx.checkpoint({ page: from.page + 1 });
    ctx.signal.addEventListener('abort', () => {});
    if (ctx.cancelled) throw new PermanentError('stopped', 'cancelled_by_user');
    const token: string = ctx.fencingToken;
    const granted: ExecutionContext = ctx.executionContext;
    const scopes: string[] = granted.connection_scopes;
    const attemptId: string = granted.attempt_id;
    return { token, caps: granted.capabilities, scopes, attemptId, refs: granted.secret_references };
  });
  const w = new Worker({ tenant: 'acme', application: 'billing', context: false, secretReferences: ['secret://vault/smtp'] }, () => undefined);
  w.stop();
  await w.run();
}
void produce;
void work;
