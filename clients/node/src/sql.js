// The SQL the library sends, in one place: the claim, the fenced calls in
// their tenant-first form (on Citus they run on the tenant's node with no
// lookup), the channel a finished workload is announced on, and following
// the tenant's channel when the server renames it.

export const FINAL_STATES = new Set(['SUCCEEDED', 'CANCELLED', 'DEAD_LETTER']);
export const FENCE_CODES = new Set(['WORKLOAD_CLAIM_INVALID', 'WORKLOAD_STALE_FENCE', 'WORKLOAD_LEASE_EXPIRED']);

export const CHANNEL = 'SELECT workload_channel($1, $2) AS channel';
// The payload the server sends on a tenant's channel as it renames it (a member was
// removed): the listener asks workload_channel again.  A workload id never equals it.
export const CHANNEL_ROTATED = 'workload.channel_rotated';
export const TENANT_NODE = 'SELECT host, port FROM workload_tenant_node($1)';
// whether workload_claim can hand the execution context out with each row
export const CLAIM_HAS_CONTEXT = `SELECT EXISTS (SELECT 1 FROM pg_proc
  WHERE proname = 'workload_claim' AND 'context' = ANY (proargnames)) AS yes`;

const COLUMNS = 'workload_id, claim_id, fencing_token, lease_expires_at, attempt, ' +
  'definition_id, definition_revision, input, checkpoint_sequence';

/**
 * The claim (and start); with the context, each row carries its verified
 * execution context, and work whose authority no longer holds is
 * dead-lettered by the claim.
 */
export function claimSql(withContext) {
  return withContext
    ? `SELECT ${COLUMNS}, execution_context FROM workload_claim($1, $2::text[], $3, $4, $5::interval, $6, start => true, context => true)`
    : `SELECT ${COLUMNS}, NULL::jsonb AS execution_context FROM workload_claim($1, $2::text[], $3, $4, $5::interval, $6, start => true)`;
}

/**
 * The channel a finished workload is announced on: its tenant's channel with
 * "_done".  As secret as the tenant's channel (only members learn it); the
 * payload is the workload id, which a waiter checks with workload_get.
 */
export const doneChannel = (channel) => `${channel}_done`;

const names = (channel, done) => (done ? [channel, doneChannel(channel)] : [channel]);

/**
 * Makes a pg.Client LISTEN on the tenant's channel as workload_channel names
 * it now (with done, its done channel too), and stop listening on current's;
 * resolves to the name.  It asks again after each LISTEN until the answer
 * holds still: a rename that commits meanwhile is either seen by the next
 * question or announced on the name already listened to.
 */
export async function follow(client, tenant, application, current, { done = false } = {}) {
  for (;;) {
    const name = (await client.query(CHANNEL, [tenant, application])).rows[0].channel;
    if (name === current) return name;
    for (const n of names(name, done)) await client.query(`LISTEN ${client.escapeIdentifier(n)}`);
    if (current) for (const n of names(current, done)) await client.query(`UNLISTEN ${client.escapeIdentifier(n)}`);
    current = name;
  }
}

// Fenced calls: $1..$5 are tenant, workload_id, claim_id, worker_id,
// fencing_token; then the call's own arguments; then, where a call finishes
// the workload, the done channel and the workload id (pg_notify, at commit).
const FENCE = '$1, $2, $3, $4, $5';
export const EXECUTION_CONTEXT = `SELECT workload_execution_context(${FENCE}, $6::text[]) AS v`;
// the contexts of a claim's rows in one statement (tenant, worker_id, secret references,
// items); a refusal of any one refuses the statement, and each then asks on its own
export const EXECUTION_CONTEXTS = `SELECT x.workload_id, workload_execution_context($1, x.workload_id,
  x.claim_id, $2, x.fencing_token, $3::text[]) AS v FROM jsonb_to_recordset($4::jsonb)
  AS x(workload_id text, claim_id text, fencing_token bigint)`;
export const RESUME = `SELECT workload_resume(${FENCE}, $6::jsonb) AS v`;
export const CHECKPOINT = `SELECT workload_checkpoint(${FENCE}, $6::jsonb) AS v`;
export const HEARTBEAT = `SELECT workload_heartbeat(${FENCE}, $6::interval, $7::jsonb) AS v`;
export const FAIL = `WITH r AS (SELECT workload_fail(${FENCE}, $6, $7)::text AS s)
  SELECT s AS v, CASE WHEN s = 'DEAD_LETTER' THEN pg_notify($8, $2) END FROM r`;
export const CONFIRM_CANCEL = `WITH r AS (SELECT workload_confirm_cancel(${FENCE}))
  SELECT pg_notify($6, $2) FROM r`;
export const COMPLETE = `WITH c AS (SELECT workload_complete(${FENCE}, $6, $7::jsonb) AS answer)
  SELECT answer AS v, pg_notify($8, $2) FROM c`;
// tenant, worker_id, items, the done channel
export const COMPLETE_MANY = `SELECT r.workload_id, r.outcome, r.code, r.result,
  CASE WHEN r.outcome <> 'refused' THEN pg_notify($4, r.workload_id) END
  FROM workload_complete_many($1, $2, $3::jsonb) r`;
// tenant, worker_id, items, extend
export const HEARTBEAT_MANY = `SELECT workload_id, outcome, code, answer
  FROM workload_heartbeat_many($1, $2, $3::jsonb, $4::interval)`;
