/*
 * store_sql.c: the text of every SQL statement workload runs against its
 * tables, one entry per plan.  store.c prepares each once per backend and
 * runs it; the typed wrappers (store_rows.c, store_create.c, store_claim.c,
 * store_parts.c, store_meta.c, store_bulk.c, store_sched.c, store_citus.c) are the only code that knows a statement's parameters and columns.
 * Nothing else in src/ spells SQL for our tables.  Layer 2.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "row.h"
#include "store_sql.h"

#define DOC_FIELDS \
	"'workload_id', w.workload_id, 'tenant_id', w.tenant_id, 'application_id', w.application_id, " \
	"'environment', s.environment, 'definition_id', s.definition_id, " \
	"'definition_revision', s.definition_revision, 'trigger', s.trigger, 'input', s.input, " \
	"'input_hash', s.input_hash, 'requested_by', s.requested_by, " \
	"'authorization_snapshot', sa.authorization_snapshot - 'signature' - 'signature_sha256', " \
	"'capability_snapshot', to_jsonb(w.capability_snapshot), " \
	"'connection_scopes', to_jsonb(s.connection_scopes), 'priority', w.priority, " \
	"'idempotency_key', s.idempotency_key, " \
	"'retry_policy', jsonb_build_object('max_attempts', s.max_attempts, " \
	"  'initial_delay_ms', s.initial_delay_ms, 'max_delay_ms', s.max_delay_ms, " \
	"  'backoff', s.backoff, 'retry_on', to_jsonb(s.retry_on)), " \
	"'timeouts', s.timeouts, 'dependencies', s.dependencies, " \
	"'completion_criteria', s.completion_criteria, 'governing_snapshots', s.governing_snapshots, " \
	"'not_before', s.not_before, 'contract_version', s.contract_version, 'state', w.state, 'created_at', w.created_at, " \
	"'updated_at', w.updated_at, 'attempt_count', w.attempt_count, 'retry_count', w.retry_count, " \
	"'next_attempt_at', w.next_attempt_at, 'last_failure', w.last_failure, " \
	"'fencing_token', w.fencing_token, 'checkpoint_sequence', w.checkpoint_sequence, " \
	"'current_claim', CASE WHEN w.claim_id IS NULL THEN NULL ELSE jsonb_build_object(" \
	"  'claim_id', w.claim_id, 'worker_id', w.worker_id, 'fencing_token', w.fencing_token, " \
	"  'attempt', w.attempt_count, 'lease_expires_at', w.lease_expires_at) END, " \
	"'progress', w.progress"

/* a stored result's document (wl_store_result_doc, store_parts.c, builds the same for one just stored) */
#define RESULT_DOC \
	"jsonb_build_object('result_id', r.result_id, 'workload_id', r.workload_id, " \
	"'outcome', 'succeeded', 'output', r.output, 'output_hash', r.output_hash, " \
	"'artifacts', to_jsonb(r.artifacts), 'schema_version', r.schema_version, " \
	"'created_at', r.created_at, 'provenance', jsonb_build_object('claim_id', r.claim_id, " \
	"'worker_id', r.worker_id, 'fencing_token', r.fencing_token, 'attempt', r.attempt_number))"

/*
 * A result is stored on its run row, by the completion's own update where
 * it runs without a statement (store_fenced.c); here, after the row's save
 * (the slow paths, Citus): its application (result ids are unique per
 * tenant and application: runs_result_key), output, hash, artifacts,
 * schema version and worker.  The rest of what workload.results shows is
 * on the run row already.
 */
#define RESULT_PUT_MANY_UPDATE(t) \
	"UPDATE workload.runs r SET result_application_id = x.application_id, output = x.output, " \
	"  output_hash = x.output_hash, " \
	"  artifacts = ARRAY(SELECT json_array_elements_text(x.artifacts)), " \
	"  schema_version = x.schema_version, result_worker_id = $8 " \
	"FROM unnest($1::text[], $2::int8[], $3::text[], $4::jsonb[], $5::text[], $6::json[], " \
	"  $7::int4[]) x(tenant_id, seq, application_id, output, output_hash, artifacts, schema_version) " \
	"WHERE r.tenant_id = " t " AND r.seq = x.seq AND r.tenant_id = x.tenant_id"

#define RESULT_PUT_UPDATE \
	"UPDATE workload.runs r SET result_application_id = $3, output = $4, output_hash = $5, " \
	"  artifacts = $6, schema_version = $7, result_worker_id = $8 " \
	"WHERE r.tenant_id = $1 AND r.seq = $2 "

#define CHECKPOINT_PUT_INSERT \
	"INSERT INTO workload.checkpoints AS c (workload_id, sequence, checkpoint_id, " \
	"  attempt_number, fencing_token, state, state_hash, created_at, key_id, tag, tenant_id, " \
	"  workload_seq) " \
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "

#define COMP_PUT_INSERT \
	"INSERT INTO workload.compensations AS p (workload_id, step, capability_id, input, " \
	"  input_hash, authorization_digest, attempt_number, fencing_token, created_at, tenant_id) " \
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "

#define CHECKPOINT_DOC \
	"jsonb_build_object('checkpoint_id', c.checkpoint_id, 'workload_id', c.workload_id, " \
	"'sequence', c.sequence, 'attempt', c.attempt_number, 'fencing_token', c.fencing_token, " \
	"'state_hash', c.state_hash, 'created_at', c.created_at, 'key_id', c.key_id, 'tag', c.tag)"

#define WAIT_DOC \
	"jsonb_build_object('wait_number', x.wait_number, 'kind', x.kind, 'wake_key', x.wake_key, " \
	"'deadline', x.deadline, 'attempt', x.attempt_number, 'created_at', x.created_at, " \
	"'resolved_at', x.resolved_at, 'outcome', x.outcome) || CASE x.kind " \
	"WHEN 'event' THEN jsonb_build_object('payload', x.payload) " \
	"WHEN 'human_approval' THEN jsonb_build_object('approved', x.approved, " \
	"  'approver', x.approver, 'approver_role', x.approver_role, 'note', x.note) " \
	"ELSE '{}'::jsonb END"

#define COMP_DOC \
	"jsonb_build_object('workload_id', p.workload_id, 'step', p.step, " \
	"'capability_id', p.capability_id, 'input', p.input, 'input_hash', p.input_hash, " \
	"'authorization_digest', p.authorization_digest, 'attempt', p.attempt_number, " \
	"'fencing_token', p.fencing_token, 'created_at', p.created_at, " \
	"'compensation_id', p.compensation_id, 'compensated_at', p.compensated_at, " \
	"'compensated_by', p.compensated_by)"

/* an attempt document: a = the columns of a closed attempt, or of the open one */
#define ATTEMPT_DOC(n, claim, worker, token, claimed, started, finished, outcome, kind, err) \
	"jsonb_build_object('attempt_id', workload.attempt_id_for(w.workload_id, " n "), " \
	"  'attempt', " n ", 'claim_id', " claim ", 'worker_id', " worker ", " \
	"  'fencing_token', " token ", 'claimed_at', " claimed ", 'started_at', " started ", " \
	"  'finished_at', " finished ", 'outcome', " outcome ", 'failure_kind', " kind ", " \
	"  'error', " err ")"

/* a workload's child rows: keyed by its tenant and creation sequence */
#define CHILD_OF_W(x) CHILD_OF(x, "w.tenant_id")
#define CHILD_OF(x, t) " " x ".tenant_id = " t " AND " x ".workload_seq = w.seq "

/*
 * a workload row, its spec and its spec's authority (sa), looked up by its
 * key for each row (OFFSET 0: never a join plan)
 */
#define FROM_DOC \
	" FROM workload.workloads w CROSS JOIN LATERAL (SELECT * FROM workload.specs s " \
	"  WHERE s.tenant_id = w.tenant_id AND s.workload_seq = w.seq OFFSET 0) s " \
	AUTHORITY_OF("w.tenant_id", " OFFSET 0")
#define AUTHORITY_OF(t, offset) \
	"CROSS JOIN LATERAL (SELECT a.authorization_snapshot FROM workload.spec_authority a " \
	"  WHERE a.tenant_id = " t " AND a.workload_seq = w.seq" offset ") sa "
/*
 * ... on Citus, which runs a statement on one node only when every table in
 * it is constrained by a tenant it can read off the statement ($4, not
 * w.tenant_id), and not through a LATERAL with OFFSET
 */
#define FROM_DOC_CITUS FROM_DOC_IN("$4")
#define FROM_DOC_IN(t) \
	" FROM workload.workloads w JOIN workload.specs s " \
	"  ON s.tenant_id = " t " AND s.workload_seq = w.seq " \
	"JOIN workload.spec_authority sa ON sa.tenant_id = " t " AND sa.workload_seq = w.seq "

/*
 * Statements reach rows by key, and say so in a way no plan can undo: a
 * table joined to another is also bounded by the keys it must have (= ANY of
 * the ids), and a row looked up for each row of another is a scalar subquery.
 * A plan made while the tables were small would otherwise be free to put a
 * whole-table index scan on the outside of a join, and keep it.
 */
/* the state of the workload whose id is the expression id in tenant t (NULL if none) */
#define DEP_STATE(id, t) \
	"(SELECT CASE WHEN pr.seq IS NULL THEN p.state ELSE pr.state END " \
	"  FROM workload.workload_rows p LEFT JOIN workload.runs pr " \
	"    ON pr.seq = p.seq AND pr.tenant_id = " t " " \
	"  WHERE p.workload_id = " id " AND p.tenant_id = " t ")"

/* The timeout columns, in WL_TIMEOUTS order ("w.queue_ms, w.claim_ms, ..."). */
#define TIMEOUT_COL(f) "w." #f ", "
#define TIMEOUT_NAME(f) #f ", "
#define TIMEOUT_COLUMNS WL_TIMEOUTS(TIMEOUT_COL)
#define TIMEOUT_NAMES WL_TIMEOUTS(TIMEOUT_NAME)

/*
 * A workload's mutable columns are on its workload row (w) until its first
 * claim, then on its run row (r, workload.runs, keyed as w by seq and
 * tenant): RUN_OF joins it, CUR(c) is column c as it stands.
 */
#define RUN_OF(w) RUN_OF_IN(w, w ".tenant_id")
/* ... with the tenant as an expression Citus can read off the statement */
#define RUN_OF_IN(w, t) " workload.runs r ON r.seq = " w ".seq AND r.tenant_id = " t " "
#define CUR(c) "CASE WHEN r.seq IS NULL THEN w." #c " ELSE r." #c " END"
#define AT_W(c) "w." #c
#define AT_R(c) "r." #c

/*
 * The columns of a locked row, as store_rows.c reads them into a WlRow: the
 * immutable ones from w, the mutable ones as M gives them, and whether the
 * row has a run row.
 */
#define ROW_COLUMNS_BY(M, in_run) \
	"w.tenant_id, w.application_id, " M(state) ", " M(attempt_count) ", " M(retry_count) ", " \
	M(fencing_token) ", " M(checkpoint_sequence) ", " M(claim_id) ", " M(worker_id) ", " \
	M(lease_expires_at) ", " M(next_attempt_at) ", " M(state_entered_at) ", w.created_at, " \
	M(last_heartbeat_at) ", w.capability_snapshot, " TIMEOUT_COLUMNS \
	M(deadline_at) ", " M(wait_count) ", w.has_criteria, " M(claimed_by) ", w.seq, w.priority, " \
	"w.has_dependencies, " M(claimed_at) ", " M(started_at) ", " M(result_id) ", " \
	"w.authority_expires_at, " in_run " AS in_run "
/* a workload row never claimed */
#define ROW_COLUMNS ROW_COLUMNS_BY(AT_W, "false")
/* a workload row with its run row, if it has one (RUN_OF) */
#define ROW_COLUMNS_CUR ROW_COLUMNS_BY(CUR, "r.seq IS NOT NULL")

/*
 * a new workload's spec (P_SPEC_PUT, P_SPEC_PUT_AT); a concurrent create's
 * key wins.  Its authority documents go beside it (P_AUTHORITY_PUT).
 */
#define SPEC_PUT_SQL \
	"INSERT INTO workload.specs (tenant_id, workload_seq, workload_id, application_id, " \
	"  idempotency_key, environment, definition_id, definition_revision, trigger, input, " \
	"  input_hash, requested_by, connection_scopes, max_attempts, " \
	"  initial_delay_ms, max_delay_ms, backoff, retry_on, timeouts, dependencies, " \
	"  completion_criteria, governing_snapshots, contract_version, created_by, " \
	"  grant_ids, not_before) " \
	"VALUES ($2, $24, $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, " \
	"  $18, $19, $20, $21, $22, $23, $25, $26) ON CONFLICT DO NOTHING"
#define SPEC_PUT_TYPES \
	TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, \
	TEXTOID, JSONBOID, TEXTARRAYOID, INT4OID, INT8OID, INT8OID, TEXTOID, \
	TEXTARRAYOID, JSONBOID, JSONBOID, JSONBOID, JSONBOID, INT4OID, NAMEOID, INT8OID, \
	TEXTARRAYOID, TIMESTAMPTZOID
/* a new workload's row (P_ROW_PUT, P_ROW_PUT_AT), returned as the row's columns */
#define ROW_PUT_SQL \
	"INSERT INTO workload.workload_rows AS w (tenant_id, workload_id, seq, application_id, priority, " \
	"  created_at, capability_snapshot, has_dependencies, has_criteria, " \
	"  " TIMEOUT_NAMES "state, state_entered_at, updated_at, next_attempt_at, attempt_count, " \
	"  retry_count, wait_count, checkpoint_sequence, fencing_token, deadline_at, " \
	"  unheld_deadline_at, authority_expires_at) " \
	"VALUES ($2, $1, $14, $3, $4, $7, $5, $6, $13, $8, $9, $10, $11, $12, " \
	"  $15, $7, $7, $17, 0, 0, 0, 0, 0, $16, $16, $18) " \
	"RETURNING " ROW_COLUMNS
#define ROW_PUT_TYPES \
	TEXTOID, TEXTOID, TEXTOID, INT4OID, TEXTARRAYOID, BOOLOID, TIMESTAMPTZOID, \
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, BOOLOID, INT8OID, ST, TIMESTAMPTZOID, \
	TIMESTAMPTZOID, TIMESTAMPTZOID
/* a workload row with its run row */
#define ROW_COLUMNS_RUN ROW_COLUMNS_BY(AT_R, "true")

/*
 * Membership, decided in the statement that locks: $2 says the caller acts
 * everywhere (a superuser, workload_admin, or the domain acting for the
 * system); else a row is seen, and locked, only when the role named $3 is a
 * member (itself or through a role it belongs to) of the row's tenant and
 * application.  A row the caller may not touch is never locked.
 */
#define MAY_TOUCH(w) MAY_TOUCH_AS(w, "$2", "$3")

/*
 * MAY_TOUCH with the caller in other parameters.  A membership names its
 * role by identity (workload.member_role: its OID; on Citus, where each node
 * gives a role its own OID, its exact name), never by a parsed or
 * case-folded name; a membership of a role that no longer exists counts for
 * nobody.  The role is not joined to pg_roles, so that Citus runs the
 * statement on the one node of its tenant (a join with a local catalog is
 * planned across the cluster).
 */
#define MAY_TOUCH_AS(w, admin, role) \
	"(" admin " OR EXISTS (SELECT 1 FROM workload.tenant_members m " \
	"  WHERE m.tenant_id = " w ".tenant_id AND m.application_id = " w ".application_id " \
	"    AND " HAS_ROLE(role, "m") "))"
/*
 * ... on Citus: a statement Citus delegates must not mix a distributed
 * table with a reference table (tenant_members), so the applications of the
 * row's tenant that the caller may act in come as a parameter (read before,
 * P_MEMBER_APPS)
 */
#define MAY_TOUCH_CITUS(w, admin, apps) "(" admin " OR " w ".application_id = ANY(" apps "))"
#define HAS_ROLE(who, m) \
	"pg_catalog.pg_has_role(" who ", workload.member_role(" m ".role_oid, " m ".role), 'MEMBER')"

/*
 * A fenced call's one conditional statement (store_rows.c,
 * wl_store_fenced): the row moves only if the fence the worker presents
 * ($1 workload, $2 claim, $3 worker, $4 token) is the row's current claim,
 * the lease has not expired at $5, the claim belongs to the calling role
 * ($7; $8: a superuser, who may act on any role's claim) and the caller may
 * touch the row ($6: acts everywhere).  The same checks, in the order SPEC
 * section 4 gives them, are what fence.c decides when this matches nothing.
 */
#define FENCE_HOLDS(touch) \
	" w.workload_id = $1 AND r.seq = w.seq AND r.tenant_id = w.tenant_id " \
	"  AND r.claim_id = $2 AND r.worker_id = $3 AND r.fencing_token = $4 " \
	"  AND r.lease_expires_at > $5 AND (r.claimed_by IS NULL OR $8 OR r.claimed_by = $7::text) " \
	"  AND " touch
#define FENCE_TOUCH MAY_TOUCH_AS("w", "$6", "$7")
#define FENCED_ARGS TEXTOID, TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID, BOOLOID, NAMEOID, BOOLOID

/* on one node: the tenant the call named, if it named one */
#define ANY_TENANT(p) " AND (" p "::text IS NULL OR w.tenant_id = " p ") "

/*
 * The lock of a workload: its queue row, its run row, then its workload row
 * (the LockRows of w sits above the lateral subqueries that lock the other
 * two: a claim locks the queue row and then the run row, a fenced call only
 * the run row, so none of them waits for another in a circle).  queued says
 * whether the queue row was there to lock: a workload this statement's
 * snapshot shows READY with no run row whose queue row is gone was claimed
 * by a transaction that committed meanwhile (store_rows.c locks again).
 * skip: "" (wait) or " SKIP LOCKED" (the tick; a row skipped is seen by
 * exists_q and exists_r, read without a lock).
 */
#define LOCKED_PARTS(skip, t) LOCKED_PARTS_AS(" FOR UPDATE" skip, " FOR NO KEY UPDATE" skip, t)
#define LOCKED_PARTS_AS(qlock, rlock, t) \
	" LEFT JOIN LATERAL (SELECT q.seq FROM workload.queue q " \
	"  WHERE q.seq = w.seq AND q.tenant_id = " t qlock ") q ON true " \
	" LEFT JOIN LATERAL (SELECT r.* FROM workload.runs r " \
	"  WHERE r.seq = w.seq AND r.tenant_id = " t rlock ") r ON true "
#define LOCKED_SEEN(t) \
	", q.seq IS NOT NULL AS queued, " \
	"  EXISTS (SELECT 1 FROM workload.queue q2 WHERE q2.seq = w.seq AND q2.tenant_id = " t ") " \
	"    AND q.seq IS NULL AS queue_busy, " \
	"  EXISTS (SELECT 1 FROM workload.runs r2 WHERE r2.seq = w.seq AND r2.tenant_id = " t ") " \
	"    AND r.seq IS NULL AS run_busy "
/* t: the tenant as the other tables are constrained by it (on Citus, $4) */
#define LOCK_SQL_AS(touch, tenant, skip, t) \
	"SELECT " ROW_COLUMNS_CUR LOCKED_SEEN(t) \
	"FROM workload.workload_rows w " LOCKED_PARTS(skip, t) "WHERE w.workload_id = $1 AND " touch tenant \
	" FOR NO KEY UPDATE OF w" skip
#define LOCK_SQL(touch, tenant, t) LOCK_SQL_AS(touch, tenant, "", t)
#define LOCK_MANY_SQL(touch, tenant, t) \
	"SELECT " ROW_COLUMNS_CUR LOCKED_SEEN(t) ", w.workload_id " \
	"FROM workload.workload_rows w " LOCKED_PARTS("", t) "WHERE w.workload_id = ANY($1) AND " touch tenant \
	" ORDER BY w.workload_id COLLATE \"C\" FOR NO KEY UPDATE OF w"
/* a fenced call's statements update the run row (a claim made it) */
#define FENCED_START_SQL(touch, tenant) \
	"UPDATE workload.runs r SET state = $10, updated_at = $5, state_entered_at = $5, " \
	"  started_at = $5, " \
	"  deadline_at = workload.claim_deadline(w.created_at, $5, NULL, w.execution_ms, w.overall_ms, true) " \
	"FROM workload.workload_rows w WHERE" FENCE_HOLDS(touch) tenant " AND r.state = $9 " \
	"RETURNING " ROW_COLUMNS_RUN
#define FENCED_BEAT_SQL(touch, tenant) \
	"UPDATE workload.runs r SET lease_expires_at = $9, last_heartbeat_at = $5, " \
	"  updated_at = $5, progress = COALESCE($10, r.progress) " \
	"FROM workload.workload_rows w WHERE" FENCE_HOLDS(touch) tenant \
	" RETURNING " ROW_COLUMNS_RUN
#define FENCED_COMPLETE_SQL(touch, tenant) \
	"UPDATE workload.runs r SET state = $10, updated_at = $5, state_entered_at = $5, " \
	"  claim_id = NULL, worker_id = NULL, claimed_by = NULL, deadline_at = NULL, result_id = $11, " \
	"  result_application_id = w.application_id, output = $14, output_hash = $15, " \
	"  artifacts = $16, schema_version = $17, result_worker_id = $3 " \
	"FROM workload.workload_rows w WHERE" FENCE_HOLDS(touch) tenant " AND r.state = $9 AND NOT w.has_criteria " \
	"RETURNING " ROW_COLUMNS_RUN

/*
 * The maintenance scans answer (workload_id, due, tenant_id, rank), fairly
 * between tenants: each tenant's due rows soonest first, the tenants in
 * turn (every tenant's soonest, then every tenant's second, ...), so that a
 * pass that takes the first `limit` reaches a quiet tenant's one due row
 * however many another tenant has.  A scan locks nothing: each row is locked
 * again, SKIP LOCKED, by the step that acts on it (recovery.c, act_range).
 */
#define FAIR(inner, limit) \
	"SELECT f.workload_id, f.due, f.tenant_id, f.rn FROM (SELECT u.workload_id, u.due, u.tenant_id, " \
	"  row_number() OVER (PARTITION BY u.tenant_id ORDER BY u.due, u.workload_id) AS rn " \
	"  FROM (" inner ") u) f ORDER BY f.rn, f.due, f.workload_id LIMIT " limit
/*
 * Due deadlines come from two places: a row nobody holds carries its
 * deadline in unheld_deadline_at too, which workloads_deadline_idx reads
 * soonest first; a held row (runs_held_idx) is read by its lease, like the
 * heartbeat scan, so the claim, start and complete that move its deadline
 * change no indexed column.  A deadline of a row nobody holds is kept in
 * two places: a workload never claimed (workload_rows) and a run row
 * (runs), each through its own partial index.
 */
#define DEADLINE_DUE_FROM(wt, rt) FAIR( \
	"SELECT w.workload_id, w.unheld_deadline_at AS due, w.tenant_id " \
	"  FROM " wt " w WHERE w.unheld_deadline_at <= $1 " \
	"UNION ALL SELECT w.workload_id, r.unheld_deadline_at, w.tenant_id " \
	"  FROM " rt " r JOIN " wt " w ON w.seq = r.seq AND w.tenant_id = r.tenant_id " \
	"  WHERE r.unheld_deadline_at <= $1", "$2")
#define DEADLINE_DUE_SQL DEADLINE_DUE_FROM("workload.workload_rows", "workload.runs")
/*
 * A workload that holds a claim has a run row: the held scans read the run
 * rows runs_held_idx lists, then the workload row (rt, wt).  On one node
 * (HELD_RUNS_FIRST) the workload row is read for each run row that passed
 * the run row's conditions, in a subquery the planner cannot turn around:
 * planned on run rows no ANALYZE had seen yet (a new store, the first
 * minute after an upgrade), the silent-heartbeat scan read every workload
 * row to find the few with heartbeat_ms, half a second a tick with 400,000
 * of them.
 */
#define HELD_FROM(rt, wt) " FROM " rt " r JOIN " wt " w ON w.seq = r.seq AND w.tenant_id = r.tenant_id "
#define HELD_RUNS_FIRST \
	" FROM workload.runs r CROSS JOIN LATERAL (SELECT * FROM workload.workload_rows w0 " \
	"  WHERE w0.seq = r.seq AND w0.tenant_id = r.tenant_id OFFSET 0) w "
#define HELD_DEADLINE_DUE_FROM(from, held) FAIR( \
	"SELECT w.workload_id, r.deadline_at AS due, w.tenant_id" from \
	"WHERE " held "r.claim_id IS NOT NULL AND r.deadline_at <= $1", "$2")
#define HEARTBEAT_SILENT_SINCE \
	"COALESCE(r.last_heartbeat_at, r.claimed_at) + w.heartbeat_ms * interval '1 millisecond'"
#define HEARTBEAT_DUE_FROM(from, held) FAIR( \
	"SELECT w.workload_id, " HEARTBEAT_SILENT_SINCE " AS due, w.tenant_id" from \
	"WHERE " held "r.claim_id IS NOT NULL " \
	"  AND w.heartbeat_ms IS NOT NULL " \
	"  AND r.state IN " SQL_CAN_TIME_OUT " AND " HEARTBEAT_SILENT_SINCE " <= $1", "$2")
/*
 * The cascades a maintenance pass left for the next (workload.cascades):
 * each workload whose dependents are still to be looked at, oldest first
 * within its tenant ($1, the time, is not needed).
 */
#define CASCADES_DUE_SQL FAIR( \
	"SELECT c.workload_id, min(c.queued_at) AS due, c.tenant_id FROM workload.cascades c " \
	"  WHERE $1 IS NOT NULL GROUP BY c.tenant_id, c.workload_id", "$2")
#define EXPIRED_FROM(from, held, touch) FAIR( \
	"SELECT w.workload_id, r.lease_expires_at AS due, w.tenant_id" from \
	"WHERE " held "r.claim_id IS NOT NULL AND r.lease_expires_at <= $1 AND " touch, "$2")

/*
 * The grants revoked whose queued work the tick has not dead-lettered yet: a
 * claim never hands such work out (an InitPlan, once per statement; the
 * partial index revoked_grants_unswept_idx keeps it to the few there are).
 */
#define REVOKED_NOW \
	"(SELECT COALESCE(array_agg(r.grant_id), '{}') FROM workload.revoked_grants r " \
	" WHERE r.swept_at IS NULL)"

/*
 * the workloads that hold a claim, a parameter (n) read once a maintenance
 * pass by P_HELD_SEQS (store_meta.c, wl_store_held_begin): an array the
 * planner takes for a few rows, whatever the statistics say of the run rows
 */
#define HELD_SEQS(n) "($" #n "::int8[])"

/* whether a revocation waits for the tick's sweep (an InitPlan, once per statement) */
#define REVOCATION_PENDING \
	"EXISTS (SELECT 1 FROM workload.revoked_grants r WHERE r.swept_at IS NULL)"

/*
 * A queue row of the tenant and application that this worker may claim now:
 * due, capabilities held, authorization not revoked (the chain is in the
 * spec, asked only while a revocation waits to be swept), dependencies met
 * (asked only of a row that checks_dependencies; a row waiting for final
 * states is blocked instead).  Both are asked through functions, not
 * subqueries: a subquery's plan is set up by every claim, whether or not a
 * candidate needs it.
 */
/*
 * One queue's rows, by the claim's index (queue_ready_idx leads with
 * workload.queue_key of the tenant and application); the tenant and
 * application themselves keep apart two queues that shared a key.
 */
#define QUEUE_OF(t, a) \
	"workload.queue_key(q.tenant_id, q.application_id) = workload.queue_key(" t "::text, " a "::text) " \
	"AND q.tenant_id = " t " AND q.application_id = " a

#define CLAIMABLE \
	" NOT q.blocked AND q.available_at <= $3 AND q.capability_snapshot <@ $4 " \
	"    AND (NOT " REVOCATION_PENDING " OR NOT workload.chain_revoked($1, q.seq)) " \
	"    AND (NOT q.checks_dependencies OR NOT workload.dependencies_unmet($1, q.seq)) "

/*
 * The claim, after `picked` (queue rows locked SKIP LOCKED; the queue row
 * is the lock of a READY workload, see LOCKED_PARTS): a workload claimed
 * for the first time gets its run row (first, ins), read from its workload
 * row, which is neither locked nor written (unless it keeps a deadline for
 * the tick, which is cleared, its row locked SKIP LOCKED); one claimed
 * before has its run row locked, skipping any another transaction holds, and
 * updated (again, retried): so a claim never waits.  Token and attempt are
 * bumped and the attempt opened on the run row; the
 * queue rows deleted (never updated: a claimer that
 * meets a row another claim took finds it gone, with no newer version to
 * follow and wait for); append the claimed event (CLAIM_EVENTS; with start
 * => true, CLAIM_START_EVENTS: move straight on to RUNNING with its started
 * event, after the claimed one): one statement per batch, whatever its
 * size.  The event evidence has the shape of wl_fence_evidence (its token
 * and attempt in their columns, as store_rows.c's evidence_args puts them; the rest,
 * {"worker_id": ...}, is $14, built by wl_store_claim).  The rows
 * come back in no order (wl_store_claim puts them best first).
 */
#define CLAIM_EVIDENCE \
	"u.fencing_token, u.attempt_count, $14"
#define CLAIM_EVENTS \
	"ev AS (INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, at, " \
	"  db_role, fencing_token, attempt, evidence) " \
	"  SELECT $1, u.seq, $12, $13, $6, $3, $11, " CLAIM_EVIDENCE " FROM upd u) "
#define CLAIM_START_EVENTS \
	"ev AS (INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, at, " \
	"  db_role, fencing_token, attempt, evidence) " \
	"  SELECT $1, u.seq, x.from_state, x.to_state, $6, $3, $11, " CLAIM_EVIDENCE \
	"  FROM upd u, (VALUES (1, $12, $13), (2, $13, $9)) x(n, from_state, to_state) " \
	"  ORDER BY u.seq, x.n) "
#define CLAIM_TAIL(events) \
	", first AS MATERIALIZED (SELECT w.seq, w.workload_id, w.priority, w.created_at, w.claim_ms, " \
	"    w.authority_expires_at, " \
	"    w.execution_ms, w.overall_ms, w.next_attempt_at, w.retry_count, w.wait_count, " \
	"    w.checkpoint_sequence, w.last_failure, w.attempt_count, w.fencing_token, w.progress, " \
	"    w.unheld_deadline_at IS NOT NULL AS has_deadline FROM workload.workload_rows w " \
	"  WHERE w.seq = ANY (ARRAY(SELECT p.seq FROM picked p WHERE NOT p.has_run)) " \
	"    AND w.tenant_id = $1 AND w.state = $12), " \
	"unheld AS (SELECT w.seq FROM workload.workload_rows w " \
	"  WHERE w.seq = ANY (ARRAY(SELECT f.seq FROM first f WHERE f.has_deadline)) AND w.tenant_id = $1 " \
	"  FOR NO KEY UPDATE OF w SKIP LOCKED), " \
	"cleared AS (UPDATE workload.workload_rows w SET unheld_deadline_at = NULL " \
	"  WHERE w.seq = ANY (ARRAY(SELECT u.seq FROM unheld u)) AND w.tenant_id = $1), " \
	"ins AS (INSERT INTO workload.runs (tenant_id, seq, next_attempt_at, unheld_deadline_at, " \
	"    retry_count, wait_count, checkpoint_sequence, last_failure, attempt_count, fencing_token, " \
	"    claimed_at, claim_id, worker_id, claimed_by, result_id, state, state_entered_at, " \
	"    updated_at, started_at, deadline_at, lease_expires_at, last_heartbeat_at, progress) " \
	"  SELECT $1, f.seq, f.next_attempt_at, NULL, f.retry_count, f.wait_count, " \
	"    f.checkpoint_sequence, f.last_failure, f.attempt_count + 1, f.fencing_token + 1, $3, " \
	"    workload.claim_id_for(f.workload_id, f.fencing_token + 1, $6), $6, $11, NULL, $9, $3, $3, " \
	"    CASE WHEN $10 THEN $3::timestamptz END, " \
	"    workload.claim_deadline(f.created_at, $3, f.claim_ms, f.execution_ms, f.overall_ms, $10), " \
	"    $3 + $7, NULL, f.progress " \
	"  FROM first f WHERE NOT f.has_deadline OR f.seq = ANY (ARRAY(SELECT u.seq FROM unheld u)) " \
	"  ORDER BY f.seq " \
	"  RETURNING seq, claim_id, fencing_token, lease_expires_at, attempt_count, checkpoint_sequence), " \
	"again AS (SELECT r.seq FROM workload.runs r " \
	"  WHERE r.seq = ANY (ARRAY(SELECT p.seq FROM picked p WHERE p.has_run)) AND r.tenant_id = $1 " \
	"    AND r.state = $12 FOR NO KEY UPDATE OF r SKIP LOCKED), " \
	"retried AS (UPDATE workload.runs r SET state = $9, fencing_token = r.fencing_token + 1, " \
	"  attempt_count = r.attempt_count + 1, worker_id = $6, claimed_by = $11, " \
	"  claim_id = workload.claim_id_for(w.workload_id, r.fencing_token + 1, $6), " \
	"  lease_expires_at = $3 + $7, updated_at = $3, state_entered_at = $3, claimed_at = $3, " \
	"  started_at = CASE WHEN $10 THEN $3::timestamptz END, last_heartbeat_at = NULL, " \
	"  deadline_at = workload.claim_deadline(w.created_at, $3, w.claim_ms, w.execution_ms, w.overall_ms, $10), " \
	"  unheld_deadline_at = NULL " \
	"  FROM workload.workload_rows w " \
	"  WHERE r.seq = ANY (ARRAY(SELECT a.seq FROM again a)) AND r.tenant_id = $1 " \
	"    AND w.seq = r.seq AND w.tenant_id = $1 " \
	"  RETURNING w.workload_id, r.claim_id, r.fencing_token, r.lease_expires_at, r.attempt_count, " \
	"    r.checkpoint_sequence, r.seq, w.priority, w.created_at, w.authority_expires_at), " \
	"upd AS (SELECT f.workload_id, i.claim_id, i.fencing_token, i.lease_expires_at, " \
	"    i.attempt_count, i.checkpoint_sequence, i.seq, f.priority, f.created_at, " \
	"    f.authority_expires_at " \
	"  FROM ins i JOIN first f ON f.seq = i.seq " \
	"  UNION ALL SELECT * FROM retried), " \
	"gone AS (DELETE FROM workload.queue q " \
	"  WHERE q.tenant_id = $1 AND q.seq = ANY (ARRAY(SELECT u.seq FROM upd u))), " \
	events \
	"SELECT u.workload_id, u.claim_id, u.fencing_token, u.lease_expires_at, u.attempt_count, " \
	"  s.definition_id, s.definition_revision, s.input, u.checkpoint_sequence, " \
	"  u.priority, u.created_at, u.seq, u.authority_expires_at " \
	"FROM upd u CROSS JOIN LATERAL (SELECT s.definition_id, s.definition_revision, s.input " \
	"  FROM workload.specs s WHERE s.tenant_id = $1 AND s.workload_seq = u.seq OFFSET 0) s"

#define CLAIM_ARGS 14, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTARRAYOID, INT4OID, TEXTOID, INTERVALOID, \
	INT8OID, ST, BOOLOID, TEXTOID, ST, ST, JSONBOID}
/*
 * Retention: one bounded batch of workloads whose final event (through the
 * partial index the states name, and for SUCCEEDED the completions run rows
 * carry: PURGE_CARRIED) is older than $1 and that are still in that state,
 * with everything that hangs off them, skipping rows someone holds and
 * workloads a not-yet-finished dependent still waits on.
 *
 * The completions run rows carry have no index of their own (an entry on
 * finished_at would cost each completion's update one index entry more).
 * They are found in creation
 * order instead, through runs_pkey, among the workloads created before $1
 * (none created later can have finished before it): PURGE_BOUND finds the
 * first creation sequence after them by a binary search of
 * workloads_seq_key (about forty probes; sequences follow creation times
 * but for transactions that overlap, whose workloads a later call takes),
 * so that a call reads the run rows of old workloads only, never the young
 * ones a retention period holds.  What it reads besides the batch: the old
 * workloads that stay (dead letters not asked for, runs still going).
 */
#define PURGE_MID "(s.lo + (s.hi - s.lo) / 2)"
#define PURGE_BOUND \
	"bound AS (WITH RECURSIVE s(lo, hi) AS (" \
	"  SELECT coalesce((SELECT b.seq FROM workload.workload_rows b ORDER BY b.seq LIMIT 1), 0), " \
	"         coalesce((SELECT b.seq FROM workload.workload_rows b ORDER BY b.seq DESC LIMIT 1), -1) " \
	"  UNION ALL " \
	"  SELECT CASE WHEN p.created_at < $1 THEN p.seq + 1 ELSE s.lo END, " \
	"         CASE WHEN p.created_at < $1 THEN s.hi ELSE " PURGE_MID " - 1 END " \
	"  FROM s LEFT JOIN LATERAL (SELECT b.seq, b.created_at FROM workload.workload_rows b " \
	"      WHERE b.seq >= " PURGE_MID " ORDER BY b.seq LIMIT 1) p ON true " \
	"  WHERE s.lo <= s.hi) " \
	"SELECT max(s.lo) AS lo FROM s), "
#define PURGE_CARRIED \
	" UNION ALL SELECT c.tenant_id, c.seq, 'SUCCEEDED', c.finished_at FROM (" \
	"  SELECT r.tenant_id, r.seq, r.finished_at FROM workload.runs r " \
	"  WHERE r.seq < (SELECT bound.lo FROM bound) AND r.finished_at < $1 " \
	"    AND NOT EXISTS (SELECT 1 FROM workload.workload_rows q JOIN workload.dependencies d " \
	"        ON d.tenant_id = q.tenant_id AND d.depends_on = q.workload_id " \
	"      WHERE q.tenant_id = r.tenant_id AND q.seq = r.seq " \
	"        AND " DEP_STATE("d.workload_id", "d.tenant_id") " NOT IN " SQL_FINAL ") " \
	"  ORDER BY r.seq LIMIT $2) c"
#define PURGE_BY_SEQ(tbl, seqcol) \
	"DELETE FROM workload." tbl " c USING unnest((SELECT t FROM ids), (SELECT s FROM ids)) x(t, s) " \
	"  WHERE c.tenant_id = ANY ((SELECT t FROM ids)::text[]) AND c." seqcol " = ANY ((SELECT s FROM ids)::int8[]) " \
	"    AND c.tenant_id = x.t AND c." seqcol " = x.s"
#define PURGE_BY_ID(tbl) \
	"DELETE FROM workload." tbl " c USING unnest((SELECT t FROM ids), (SELECT w FROM ids)) x(t, w) " \
	"  WHERE c.tenant_id = ANY ((SELECT t FROM ids)::text[]) AND c.workload_id = ANY ((SELECT w FROM ids)::text[]) " \
	"    AND c.tenant_id = x.t AND c.workload_id = x.w"
#define PURGE(final_states, bound, carried) \
	"WITH " bound "doomed AS (SELECT w.workload_id, w.tenant_id, w.seq " \
	"  FROM workload.workload_rows w LEFT JOIN" RUN_OF("w") \
	"  WHERE (w.tenant_id, w.seq) IN (SELECT e.tenant_id, e.workload_seq " \
	"      FROM (SELECT f.tenant_id, f.workload_seq, f.to_state, f.at FROM workload.event_rows f " \
	"          WHERE f.to_state IN " final_states " AND f.at < $1" carried ") e " \
	"        CROSS JOIN LATERAL (SELECT p.workload_id, " \
	"          CASE WHEN pr.seq IS NULL THEN p.state ELSE pr.state END AS state, " \
	"          CASE WHEN pr.seq IS NULL THEN p.state_entered_at ELSE pr.state_entered_at END " \
	"            AS state_entered_at " \
	"          FROM workload.workload_rows p LEFT JOIN workload.runs pr " \
	"            ON pr.seq = p.seq AND pr.tenant_id = p.tenant_id " \
	"          WHERE p.tenant_id = e.tenant_id AND p.seq = e.workload_seq OFFSET 0) p " \
	"      WHERE p.state = e.to_state AND p.state_entered_at < $1 " \
	"        AND NOT EXISTS (SELECT 1 FROM workload.dependencies d " \
	"          WHERE d.tenant_id = e.tenant_id AND d.depends_on = p.workload_id " \
	"            AND " DEP_STATE("d.workload_id", "d.tenant_id") " NOT IN " SQL_FINAL ") " \
	"      ORDER BY e.at LIMIT $2) " \
	"    AND " CUR(state) " IN " final_states " AND " CUR(state_entered_at) " < $1 " \
	"  FOR UPDATE OF w SKIP LOCKED), " \
	"ids AS (SELECT array_agg(workload_id) AS w, array_agg(tenant_id) AS t, array_agg(seq) AS s " \
	"  FROM doomed), " \
	"ev AS (" PURGE_BY_SEQ("event_rows", "workload_seq") "), " \
	"at AS (" PURGE_BY_SEQ("attempts", "workload_seq") "), " \
	"ck AS (" PURGE_BY_SEQ("checkpoints", "workload_seq") "), " \
	"sp AS (" PURGE_BY_SEQ("specs", "workload_seq") "), " \
	"sa AS (" PURGE_BY_SEQ("spec_authority", "workload_seq") "), " \
	"qu AS (" PURGE_BY_SEQ("queue", "seq") "), " \
	"ru AS (" PURGE_BY_SEQ("runs", "seq") "), " \
	"dp AS (" PURGE_BY_ID("dependencies") "), " \
	"wt AS (" PURGE_BY_ID("waits") "), " \
	"cp AS (" PURGE_BY_ID("compensations") ") " \
	PURGE_BY_ID("workload_rows")

/* a schedule's document (its template's grant without the stored signature digest) */
#define SCHED_DOC \
	"jsonb_build_object('schedule_id', s.schedule_id, 'tenant_id', s.tenant_id, " \
	"'application_id', s.application_id, 'cron', s.cron, 'timezone', s.timezone, " \
	"'template', s.template || CASE WHEN s.template ? 'authorization_snapshot' THEN " \
	"  jsonb_build_object('authorization_snapshot', " \
	"    (s.template -> 'authorization_snapshot') - 'signature_sha256') ELSE '{}'::jsonb END, " \
	"'overlap', s.overlap, 'catch_up', s.catch_up, 'paused', s.paused, " \
	"'next_run_at', s.next_run_at, 'last_run_at', s.last_run_at, " \
	"'last_workload_id', s.last_workload_id, 'last_error', s.last_error, " \
	"'grant_expires_at', s.grant_expires_at, " \
	"'created_by', s.created_by, 'created_at', s.created_at, 'updated_at', s.updated_at)"

/*
 * a workload's document: the row and its spec; the full one adds attempts,
 * checkpoints, result, events, waits and compensation steps (the attempts
 * written, then the open one, or the succeeded one: an attempt that
 * succeeds is not written, its row and its result are its record)
 */
#define DOC_SQL(from, touch, tenant) \
	"SELECT jsonb_build_object(" DOC_FIELDS ")" from "WHERE w.workload_id = $1 AND " \
	touch tenant
/* an event's evidence as it was given: its token and attempt are columns */
#define EVENT_EVIDENCE(e) \
	"workload.event_evidence(" e ".evidence, " e ".fencing_token, " e ".attempt)"

#define DOC_FULL_SQL(from, t, touch, tenant) \
	"SELECT jsonb_build_object(" DOC_FIELDS ", " \
	"'attempts', COALESCE((SELECT jsonb_agg(" \
	ATTEMPT_DOC("a.attempt_number", "a.claim_id", "a.worker_id", "a.fencing_token", \
	"a.claimed_at", "a.started_at", "a.finished_at", "a.outcome", \
	"a.failure_kind", "a.error") " ORDER BY a.attempt_number) " \
	"  FROM workload.attempts a WHERE" CHILD_OF("a", t) "), '[]') || " \
	"  CASE WHEN w.claim_id IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(" \
	ATTEMPT_DOC("w.attempt_count", "w.claim_id", "w.worker_id", "w.fencing_token", \
	"w.claimed_at", "w.started_at", "NULL::timestamptz", "NULL::text", \
	"NULL::text", "NULL::text") ") END || " \
	"  CASE WHEN w.state <> 'SUCCEEDED' OR EXISTS (SELECT 1 FROM workload.attempts a " \
	"      WHERE" CHILD_OF("a", t) "AND a.attempt_number = w.attempt_count) THEN '[]'::jsonb " \
	"    ELSE COALESCE((SELECT jsonb_build_array(" \
	ATTEMPT_DOC("w.attempt_count", "r.claim_id", "r.worker_id", "r.fencing_token", \
	"w.claimed_at", "w.started_at", "w.state_entered_at", "'SUCCEEDED'::text", \
	"NULL::text", "NULL::text") ") FROM workload.results r WHERE r.tenant_id = " t " " \
	"      AND r.application_id = w.application_id AND r.result_id = w.result_id), '[]') END, " \
	"'checkpoints', COALESCE((SELECT jsonb_agg(" CHECKPOINT_DOC " || jsonb_build_object('state', c.state) " \
	"  ORDER BY c.sequence) FROM workload.checkpoints c WHERE" CHILD_OF("c", t) "), '[]'), " \
	"'result', (SELECT " RESULT_DOC " FROM workload.results r WHERE r.tenant_id = " t " " \
	"  AND r.application_id = w.application_id AND r.result_id = w.result_id), " \
	"'events', COALESCE((SELECT jsonb_agg(jsonb_build_object('sequence', e.sequence, " \
	"  'event_type', workload.event_type(e.to_state), 'from_state', e.from_state, " \
	"  'to_state', e.to_state, 'actor', e.actor, 'at', e.at, 'db_role', e.db_role, " \
	"  'evidence', " EVENT_EVIDENCE("e") ") ORDER BY e.sequence) FROM workload.events e " \
	"  WHERE" CHILD_OF("e", t) "), '[]'), " \
	"'waits', COALESCE((SELECT jsonb_agg(" WAIT_DOC " ORDER BY x.wait_number) " \
	"  FROM workload.waits x WHERE x.tenant_id = " t " AND x.workload_id = w.workload_id), '[]'), " \
	"'compensations', COALESCE((SELECT jsonb_agg(" COMP_DOC " ORDER BY p.step) " \
	"  FROM workload.compensations p WHERE p.tenant_id = " t " " \
	"    AND p.workload_id = w.workload_id), '[]'))" \
	from "WHERE w.workload_id = $1 AND " touch tenant

#define LIST_SQL(from) \
	"SELECT jsonb_build_object(" DOC_FIELDS ")" from \
	"WHERE w.tenant_id = $1 AND w.application_id = $2 AND ($3 IS NULL OR w.state = $3) " \
	"ORDER BY w.priority DESC, w.created_at, w.seq LIMIT $4"

/*
 * A batch's rows looked up by key, from arrays ($t: the tenants): on Citus
 * a batch is of one tenant (it runs on that tenant's node), named as the
 * first element, which Citus reads off the statement; and no OFFSET in a
 * LATERAL over unnest, which Citus cannot push down.
 */
#define BATCH_TENANT(t) "(" t "::text[])[1]"
/* a final state is left only under the workload row's lock: it is what is locked here */
#define DEAD_LETTERS_SQL(t) \
	"SELECT w.workload_id FROM workload.workload_rows w LEFT JOIN" RUN_OF_IN("w", "$1") \
	"WHERE w.tenant_id = $1 AND w.application_id = $2 AND " CUR(state) " = $6 " \
	"  AND ($4::text IS NULL OR " CUR(last_failure) " ->> 'kind' = $4) " \
	"  AND ($3::text IS NULL OR (SELECT s.definition_id FROM workload.specs s " \
	"    WHERE s.tenant_id = " t " AND s.workload_seq = w.seq) = $3) " \
	"ORDER BY w.created_at, w.seq LIMIT $5 FOR NO KEY UPDATE OF w SKIP LOCKED"
#define RESULT_GET_MANY_SQL(t, offset) \
	"SELECT r.workload_id, r.claim_id, r.worker_id, r.fencing_token, " RESULT_DOC \
	", r.result_id, r.tenant_id, r.application_id " \
	"FROM unnest($2::text[], $3::text[], $1::text[]) x(tenant_id, application_id, result_id), " \
	"  LATERAL (SELECT * FROM workload.results r WHERE r.tenant_id = " t " " \
	"    AND r.application_id = x.application_id AND r.result_id = x.result_id" offset ") r"
#define IDEM_MANY_SQL(t, offset) \
	"SELECT x.n, s.workload_id, s.not_before " \
	"FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY x(t, a, k, n) " \
	"CROSS JOIN LATERAL (SELECT s.workload_id, s.not_before FROM workload.specs s " \
	"  WHERE s.tenant_id = " t " AND s.application_id = x.a AND s.idempotency_key = x.k" offset ") s"
#define DOC_MANY_SQL(t, st, offset) \
	"SELECT x.n, jsonb_build_object(" DOC_FIELDS ") " \
	"FROM unnest($1::text[], $2::text[]) WITH ORDINALITY x(id, t, n) " \
	"CROSS JOIN LATERAL (SELECT * FROM workload.workloads w " \
	"  WHERE w.workload_id = x.id AND w.tenant_id = " t offset ") w " \
	"CROSS JOIN LATERAL (SELECT * FROM workload.specs s " \
	"  WHERE s.tenant_id = " st " AND s.workload_seq = w.seq" offset ") s " \
	AUTHORITY_OF(st, offset)

#define SAVE_SET \
	"state = $2, updated_at = $3, state_entered_at = $4, " \
	"  next_attempt_at = $5, attempt_count = $6, retry_count = $7, fencing_token = $8, " \
	"  checkpoint_sequence = $9, claim_id = $10, worker_id = $11, lease_expires_at = $12, " \
	"  last_heartbeat_at = $13, " \
	"  last_failure = CASE WHEN $14 THEN $15 ELSE last_failure END, " \
	"  progress = CASE WHEN $16 THEN $17 ELSE progress END, " \
	"  deadline_at = $18, unheld_deadline_at = CASE WHEN $10 IS NULL THEN $18 END, " \
	"  wait_count = $19, claimed_by = $20, claimed_at = $21, " \
	"  started_at = $22, result_id = $23 "
#define SAVE_ARGS \
	25, {TEXTOID, ST, TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID, \
		INT4OID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, BOOLOID, JSONBOID, BOOLOID, \
	JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, \
	INT8OID}

/* P_SAVE_MANY's SET, for the workload rows and for the run rows (both w) */
#define SAVE_MANY_SET \
	"state = x.state, updated_at = $3, " \
	"  state_entered_at = x.state_entered_at, next_attempt_at = x.next_attempt_at, " \
	"  attempt_count = x.attempt_count, retry_count = x.retry_count, " \
	"  fencing_token = x.fencing_token, checkpoint_sequence = x.checkpoint_sequence, " \
	"  claim_id = x.claim_id, worker_id = x.worker_id, lease_expires_at = x.lease_expires_at, " \
	"  claimed_by = CASE WHEN x.claim_id IS NULL THEN NULL ELSE w.claimed_by END, " \
	"  claimed_at = x.claimed_at, started_at = x.started_at, result_id = x.result_id, " \
	"  last_heartbeat_at = x.last_heartbeat_at, " \
	"  last_failure = CASE WHEN x.failure_changed THEN x.last_failure ELSE w.last_failure END, " \
	"  progress = CASE WHEN x.progress_changed THEN x.progress ELSE w.progress END, " \
	"  deadline_at = x.deadline_at, " \
	"  unheld_deadline_at = CASE WHEN x.claim_id IS NULL THEN x.deadline_at END, " \
	"  wait_count = x.wait_count "

/*
 * A writer of run rows other than the direct paths (store_claim_direct.c,
 * store_fenced.c) appends the events a run row carries (the claim's, the
 * start's, the completion's: workload.carried_events) as event rows, with
 * their sequences, and clears them, before it changes what they read (the
 * token, the attempt, the times): a READY run row carries none.  Not on
 * Citus, where nothing is carried (workload.citus_distribute_tables appends
 * them).
 */
#define CARRIED_OUT(cond) \
	"mat AS (INSERT INTO workload.event_rows SELECT c.* FROM workload.carried_events c WHERE " cond ") "
#define CARRIED_CLEAR ", started_seq = NULL, claimed_seq = NULL, finished_seq = NULL, finished_at = NULL "
#define SAVE_RUN_SQL(with, clear) \
	with "UPDATE workload.runs SET " SAVE_SET clear "WHERE seq = $25 AND tenant_id = $24"
#define SAVE_MANY_SQL(mat, clear) \
	"WITH x AS (SELECT * FROM unnest($1, $2, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, " \
	"  $14, $15, $16, $17, $18, $19, $20, $24, $25, $26, $27, $28, $29, $30, $31, $32) WITH ORDINALITY " \
	"  AS x(workload_id, state, state_entered_at, next_attempt_at, attempt_count, " \
	"    retry_count, fencing_token, checkpoint_sequence, claim_id, worker_id, " \
	"    lease_expires_at, last_heartbeat_at, failure_changed, last_failure, " \
	"    progress_changed, progress, deadline_at, wait_count, from_state, evidence, " \
	"    tenant_id, seq, claimed_at, started_at, result_id, ev_token, ev_attempt, in_run, n)), " \
	mat \
	"upd AS (UPDATE workload.workload_rows w SET " SAVE_MANY_SET \
	"  FROM x WHERE w.workload_id = ANY($1) AND w.workload_id = x.workload_id " \
	"    AND w.tenant_id = x.tenant_id AND NOT x.in_run " \
	"  RETURNING w.workload_id), " \
	"updr AS (UPDATE workload.runs w SET " SAVE_MANY_SET clear \
	"  FROM x WHERE w.seq = ANY($26) AND w.seq = x.seq AND w.tenant_id = x.tenant_id AND x.in_run " \
	"  RETURNING w.seq), " \
	"ev AS (INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, " \
	"  at, db_role, evidence, fencing_token, attempt) " \
	"  SELECT x.tenant_id, x.seq, x.from_state, $21, $22, $3, $23, x.evidence, x.ev_token, " \
	"    x.ev_attempt " \
	"  FROM x ORDER BY x.n) " \
	"SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM updr)"

const WlPlanDef wl_plan_defs[P_COUNT] = {
	/*
	 * $4 is the workload's tenant on Citus (store_citus.c finds it), where
	 * FOR UPDATE is allowed only on one tenant's shard; on one node, the
	 * tenant the call named (a tenant-first overload), or NULL
	 */
	/*
	 * $4 is the workload's tenant on Citus (store_citus.c finds it), where
	 * FOR UPDATE is allowed only on one tenant's shard; on one node, the
	 * tenant the call named (a tenant-first overload), or NULL.  $5: on
	 * Citus, the applications of that tenant the caller may act in
	 */
	[P_LOCK] = {LOCK_SQL(MAY_TOUCH("w"), ANY_TENANT("$4"), "w.tenant_id"), 5,
		{TEXTOID, BOOLOID, NAMEOID, TEXTOID, TEXTARRAYOID}, false,
	LOCK_SQL(MAY_TOUCH_CITUS("w", "$2", "$5"), " AND w.tenant_id = $4", "$4")},
	/* P_LOCK for the tick: a row another transaction holds is passed over, never waited for */
	[P_LOCK_SKIP] = {LOCK_SQL_AS(MAY_TOUCH("w"), ANY_TENANT("$4"), " SKIP LOCKED", "w.tenant_id"), 5,
		{TEXTOID, BOOLOID, NAMEOID, TEXTOID, TEXTARRAYOID}, false,
	LOCK_SQL_AS(MAY_TOUCH_CITUS("w", "$2", "$5"), " AND w.tenant_id = $4", " SKIP LOCKED", "$4")},
	/* a batch's rows, locked in workload_id order (byte order, as the C sorts them) */
	[P_LOCK_MANY] = {LOCK_MANY_SQL(MAY_TOUCH("w"), ANY_TENANT("$4"), "w.tenant_id"), 5,
		{TEXTARRAYOID, BOOLOID, NAMEOID, TEXTOID, TEXTARRAYOID}, false,
	LOCK_MANY_SQL(MAY_TOUCH_CITUS("w", "$2", "$5"), " AND w.tenant_id = $4", "$4")},
	/*
	 * A locked row's mutable columns: on its workload row until it has a run
	 * row (P_SAVE, by workload id), then on the run row (P_SAVE_RUN, by
	 * sequence, $25)
	 */
	[P_SAVE] = {"UPDATE workload.workload_rows SET " SAVE_SET
		"WHERE workload_id = $1 AND tenant_id = $24", SAVE_ARGS},
	[P_SAVE_RUN] = {SAVE_RUN_SQL("WITH " CARRIED_OUT("c.workload_seq = $25 AND c.tenant_id = $24"),
								 CARRIED_CLEAR), SAVE_ARGS, false, SAVE_RUN_SQL("", "")},
	/*
	 * Fenced calls: start ($9 -> $10, the RUNNING deadline), a heartbeat
	 * (lease $9, progress $10 when not NULL), a completion ($9 -> $10,
	 * result $11, the claim released; not for a workload with completion
	 * criteria).  Each returns the row as it is now.  On one node these
	 * statements run only where wl_store_fenced_direct cannot (a row
	 * trigger on the table): store_fenced.c does the same without a plan.
	 */
	/* the last parameter is the tenant, as $4 of P_LOCK */
	[P_FENCED_START] = {FENCED_START_SQL(FENCE_TOUCH, ANY_TENANT("$11")), 12,
		{FENCED_ARGS, ST, ST, TEXTOID, TEXTARRAYOID}, false,
	FENCED_START_SQL(MAY_TOUCH_CITUS("w", "$6", "$12"), " AND w.tenant_id = $11 AND r.tenant_id = $11 ")},
	[P_FENCED_BEAT] = {FENCED_BEAT_SQL(FENCE_TOUCH, ANY_TENANT("$11")), 12,
		{FENCED_ARGS, TIMESTAMPTZOID, JSONBOID, TEXTOID, TEXTARRAYOID}, false,
	FENCED_BEAT_SQL(MAY_TOUCH_CITUS("w", "$6", "$12"), " AND w.tenant_id = $11 AND r.tenant_id = $11 ")},
	[P_FENCED_COMPLETE] = {FENCED_COMPLETE_SQL(FENCE_TOUCH, ANY_TENANT("$12")), 17,
		{FENCED_ARGS, ST, ST, TEXTOID, TEXTOID, TEXTARRAYOID, JSONBOID, TEXTOID, TEXTARRAYOID,
		INT4OID}, false,
	FENCED_COMPLETE_SQL(MAY_TOUCH_CITUS("w", "$6", "$13"), " AND w.tenant_id = $12 AND r.tenant_id = $12 ")},
	/*
	 * A batch of completions ($1..$8 and $17, one element per item:
	 * workload, claim, token, result id, output, output hash, artifacts as a
	 * json array (NULL: none), schema version, the event's evidence (built
	 * in C: jsonb_build_object here cost one call an event); worker $11, now $9, caller $13, superuser
	 * $14, acts everywhere $15, the tenant the call named $16) as one
	 * statement: each row whose fence
	 * holds (FENCE_HOLDS, item by item), that is in $12 (RUNNING), has no
	 * completion criteria and whose result id is free in its tenant and
	 * application moves to $10 (SUCCEEDED) with its claim released; its
	 * event is appended and its result stored (its run row leaves runs_held_idx).  What
	 * matches nothing is decided under the row lock by complete.c.  Returns
	 * the rows moved.  A result id another workload took meanwhile stops it
	 * (wl_store_run_results).
	 */
	[P_FENCED_COMPLETE_MANY] = {
		"WITH x AS MATERIALIZED (SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], "
		"    $4::text[], $5::jsonb[], $6::text[], $7::json[], $8::int4[], $17::jsonb[]) WITH ORDINALITY "
		"  x(id, claim, token, rid, output, hash, artifacts, sv, ev, n)), "
		"upd AS (UPDATE workload.runs r SET state = $10, updated_at = $9, state_entered_at = $9, "
		"    claim_id = NULL, worker_id = NULL, claimed_by = NULL, deadline_at = NULL, result_id = x.rid, "
		"    result_application_id = w.application_id, output = x.output, output_hash = x.hash, "
		"    artifacts = CASE WHEN x.artifacts IS NULL THEN '{}'::text[] "
		"      ELSE ARRAY(SELECT json_array_elements_text(x.artifacts)) END, schema_version = x.sv, "
		"    result_worker_id = $11 "
		"  FROM x, workload.workload_rows w "
		"  WHERE w.workload_id = x.id AND r.seq = w.seq AND r.tenant_id = w.tenant_id "
		"    AND r.claim_id = x.claim AND r.worker_id = $11 "
		"    AND r.fencing_token = x.token AND r.lease_expires_at > $9 "
		"    AND (r.claimed_by IS NULL OR $14 OR r.claimed_by = $13::text) "
		"    AND " MAY_TOUCH_AS("w", "$15", "$13") ANY_TENANT("$16") " AND r.state = $12 "
		"    AND NOT w.has_criteria "
		"    AND NOT EXISTS (SELECT 1 FROM workload.runs o WHERE o.result_id = x.rid "
		"      AND o.tenant_id = w.tenant_id AND o.result_application_id = w.application_id) "
		"  RETURNING w.workload_id, w.tenant_id, w.application_id, w.seq, r.attempt_count, "
		"    r.fencing_token, x.n), "
		"ev AS (INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, "
		"    at, db_role, fencing_token, attempt, evidence) "
		"  SELECT u.tenant_id, u.seq, $12, $10, $11, $9, $13, u.fencing_token, u.attempt_count, "
		"    x.ev "
		"  FROM upd u JOIN x ON x.n = u.n ORDER BY u.n) "
		"SELECT u.n, u.tenant_id, u.application_id, u.seq, u.attempt_count FROM upd u",
	17, {TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID,
		JSONARRAYOID, INT4ARRAYOID, TIMESTAMPTZOID, ST, TEXTOID, ST, NAMEOID, BOOLOID, BOOLOID,
	TEXTOID, JSONBARRAYOID}},
	/* a workload's queue row: inserted when it becomes READY */
	[P_QUEUE_PUT] = {
		"INSERT INTO workload.queue (tenant_id, seq, application_id, priority, "
		"  created_at, available_at, capability_snapshot, checks_dependencies, blocked, has_run) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
	10, {TEXTOID, INT8OID, TEXTOID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTARRAYOID,
	BOOLOID, BOOLOID, BOOLOID}},
	[P_QUEUE_DEL] = {
		"DELETE FROM workload.queue WHERE tenant_id = $1 AND seq = $2",
	2, {TEXTOID, INT8OID}},
	[P_EVENT] = {
		"INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, at, "
		"  db_role, evidence, fencing_token, attempt) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
	10, {TEXTOID, INT8OID, ST, ST, TEXTOID, TIMESTAMPTZOID, TEXTOID, JSONBOID, INT8OID, INT4OID}},
	/*
	 * P_SAVE and P_EVENT for n locked rows moving to one state, in one
	 * statement: the same columns as arrays, one element per row; events
	 * in array order.  $21..$23 are the event's to state, actor, db role.
	 */
	[P_SAVE_MANY] = {SAVE_MANY_SQL(CARRIED_OUT("c.workload_seq = ANY($26) AND (c.tenant_id, c.workload_seq) "
											   "IN (SELECT x.tenant_id, x.seq FROM x WHERE x.in_run)") ", ",
								   CARRIED_CLEAR),
	32, {TEXTARRAYOID, STA, TIMESTAMPTZOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID, INT4ARRAYOID,
		INT4ARRAYOID, INT8ARRAYOID, INT4ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, BOOLARRAYOID, JSONBARRAYOID, BOOLARRAYOID, JSONBARRAYOID,
		TIMESTAMPTZARRAYOID, INT4ARRAYOID, STA, ST, TEXTOID, TEXTOID, JSONBARRAYOID,
	TEXTARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID, TEXTARRAYOID,
	INT8ARRAYOID, INT4ARRAYOID, BOOLARRAYOID}, false, SAVE_MANY_SQL("", "")},
	[P_IDEM] = {
		"SELECT s.workload_id, s.not_before FROM workload.specs s "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.idempotency_key = $3",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_SPEC_PUT] = {SPEC_PUT_SQL, 26, {SPEC_PUT_TYPES}},
	/* P_SPEC_PUT, and where it wrote the spec (a single node: a queue row's hint) */
	[P_SPEC_PUT_AT] = {SPEC_PUT_SQL " RETURNING ctid", 26, {SPEC_PUT_TYPES}},
	/* a new spec's authority documents, beside it (once P_SPEC_PUT wrote it) */
	[P_AUTHORITY_PUT] = {
		"INSERT INTO workload.spec_authority (tenant_id, workload_seq, authorization_snapshot, "
		"  run_authority) VALUES ($1, $2, $3, $4)",
	4, {TEXTOID, INT8OID, JSONBOID, JSONBOID}, true},
	[P_ROW_PUT] = {ROW_PUT_SQL, 18, {ROW_PUT_TYPES}},
	/* P_ROW_PUT, and where it wrote the row (its last column; a single node) */
	[P_ROW_PUT_AT] = {ROW_PUT_SQL ", w.ctid", 18, {ROW_PUT_TYPES}},
	/*
	 * a dependency's state, held while the dependent is made (its queue row,
	 * run row and workload row FOR SHARE, as P_LOCK locks them: no claim,
	 * fenced call or transition moves it meanwhile, so the transition that
	 * meets the dependency sees the dependent), with LOCKED_SEEN's columns
	 */
	[P_DEP_STATE] = {
		"SELECT " CUR(state) ", r.seq IS NOT NULL AS in_run" LOCKED_SEEN("$2")
		"FROM workload.workload_rows w " LOCKED_PARTS_AS(" FOR SHARE", " FOR SHARE", "$2")
		"WHERE w.workload_id = $1 AND w.tenant_id = $2 AND w.application_id = $3 FOR SHARE OF w",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_DEP_PUT] = {
		"INSERT INTO workload.dependencies (tenant_id, workload_id, depends_on, required_state) "
		"VALUES ($4, $1, $2, $3)",
	4, {TEXTOID, TEXTOID, ST, TEXTOID}},
	/* $4: the workload's tenant when the call knows it (on Citus: routed to its node) */
	[P_DOC] = {DOC_SQL(FROM_DOC, MAY_TOUCH("w"), ANY_TENANT("$4")), 5,
		{TEXTOID, BOOLOID, NAMEOID, TEXTOID, TEXTARRAYOID}, false,
	DOC_SQL(FROM_DOC_CITUS, MAY_TOUCH_CITUS("w", "$2", "$5"), " AND w.tenant_id = $4")},
	[P_DOC_FULL] = {DOC_FULL_SQL(FROM_DOC, "w.tenant_id", MAY_TOUCH("w"), ANY_TENANT("$4")), 5,
		{TEXTOID, BOOLOID, NAMEOID, TEXTOID, TEXTARRAYOID}, false,
	DOC_FULL_SQL(FROM_DOC_CITUS, "$4", MAY_TOUCH_CITUS("w", "$2", "$5"), " AND w.tenant_id = $4")},
	[P_LIST] = {LIST_SQL(FROM_DOC), 4, {TEXTOID, TEXTOID, ST, INT4OID}, false, LIST_SQL(FROM_DOC_IN("$1"))},
	/* $2: the workload's tenant when the call knows it (on Citus, always) */
	[P_HISTORY] = {
		"SELECT e.sequence, workload.event_type(e.to_state), e.from_state, e.to_state, e.actor, "
		"  e.at, " EVENT_EVIDENCE("e") " "
		"FROM workload.events e WHERE (e.tenant_id, e.workload_seq) = "
		"  (SELECT w.tenant_id, w.seq FROM workload.workload_rows w WHERE w.workload_id = $1 "
		ANY_TENANT("$2") ") "
		"ORDER BY e.sequence",
	2, {TEXTOID, TEXTOID}, false,
		"SELECT e.sequence, workload.event_type(e.to_state), e.from_state, e.to_state, e.actor, "
		"  e.at, " EVENT_EVIDENCE("e") " "
		"FROM workload.events e WHERE e.tenant_id = $2 AND e.workload_seq = "
		"  (SELECT w.seq FROM workload.workload_rows w WHERE w.workload_id = $1 AND w.tenant_id = $2) "
	"ORDER BY e.sequence"},
	/* the claim from the start of the queue: best first (and with start => true) */
#define CLAIM_MANY_SQL(events) \
		"WITH picked AS (SELECT q.seq, q.has_run FROM workload.queue q " \
		"  WHERE " QUEUE_OF("$1", "$2") " AND " CLAIMABLE \
		"  ORDER BY q.priority DESC, q.created_at, q.seq LIMIT $5 " \
		"  FOR UPDATE OF q SKIP LOCKED)" CLAIM_TAIL(events)
	[P_CLAIM_MANY] = {CLAIM_MANY_SQL(CLAIM_EVENTS), CLAIM_ARGS},
	[P_CLAIM_MANY_START] = {CLAIM_MANY_SQL(CLAIM_START_EVENTS), CLAIM_ARGS},
	/* one named workload, whose row the caller has locked and checked */
	[P_CLAIM_ONE] = {
		"WITH picked AS (SELECT q.seq, q.has_run FROM workload.queue q "
		"  WHERE q.tenant_id = $1 AND q.seq = $8 FOR UPDATE OF q)" CLAIM_TAIL(CLAIM_EVENTS),
	CLAIM_ARGS},
	[P_DEPS_UNMET] = {
		"SELECT count(*) FROM workload.dependencies d "
		"WHERE d.tenant_id = $2 AND d.workload_id = $1 "
		"  AND " DEP_STATE("d.depends_on", "$2") " <> d.required_state",
	2, {TEXTOID, TEXTOID}},
	/*
	 * A READY workload's queue row: whether each claim checks its
	 * dependencies (it requires a state that is not final, which a
	 * dependency may leave again), and whether it is blocked (it does not,
	 * and a dependency has not reached its final required state yet; once
	 * reached it stays).
	 */
	[P_DEPS_QUEUE] = {
		"SELECT c.checks, NOT c.checks AND EXISTS (SELECT 1 FROM workload.dependencies d "
		"    WHERE d.tenant_id = $2 AND d.workload_id = $1 "
		"      AND " DEP_STATE("d.depends_on", "$2") " <> d.required_state) "
		"FROM (SELECT EXISTS (SELECT 1 FROM workload.dependencies d "
		"    WHERE d.tenant_id = $2 AND d.workload_id = $1 AND d.required_state NOT IN " SQL_FINAL ") "
		"  AS checks) c",
	2, {TEXTOID, TEXTOID}},
	/* a dependent, locked (waiting) if it is READY; by its whole key */
	[P_UNBLOCK_LOCK] = {
		"SELECT w.seq FROM workload.workload_rows w LEFT JOIN" RUN_OF_IN("w", "$2")
		"WHERE w.workload_id = $1 AND w.tenant_id = $2 AND " CUR(state) " = 'READY' "
		"FOR NO KEY UPDATE OF w",
	2, {TEXTOID, TEXTOID}},
	/* the queue row (seq $3) of locked workload $1 of tenant $2, unblocked if its dependencies are all met */
	[P_UNBLOCK] = {
		"UPDATE workload.queue q SET blocked = false "
		"WHERE q.tenant_id = $2 AND q.seq = $3 AND q.blocked "
		"  AND NOT EXISTS (SELECT 1 FROM workload.dependencies u "
		"    WHERE u.tenant_id = $2 AND u.workload_id = $1 "
		"      AND " DEP_STATE("u.depends_on", "$2") " <> u.required_state) "
		"RETURNING q.application_id, q.priority, q.created_at, q.available_at",
	3, {TEXTOID, TEXTOID, INT8OID}},
	/* the attempt a claim held, written once, when it ends other than in success */
	[P_ATTEMPT_CLOSE] = {
		"INSERT INTO workload.attempts (tenant_id, workload_seq, attempt_number, workload_id, "
		"  claim_id, worker_id, fencing_token, claimed_at, lease_expires_at, started_at, "
		"  finished_at, outcome, failure_kind, error) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
	14, {TEXTOID, INT8OID, INT4OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID,
	TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID}},
	/*
	 * each result id looked up by its key (tenant, application, result id);
	 * OFFSET 0 keeps the lookup per row, so no plan can turn it into a scan
	 */
	[P_RESULT_GET_MANY] = {RESULT_GET_MANY_SQL("x.tenant_id", " OFFSET 0"),
	3, {TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID}, false, RESULT_GET_MANY_SQL(BATCH_TENANT("$2"), "")},
	/* P_RESULT_PUT for n results of one worker; artifacts come as json arrays of strings */
	[P_RESULT_PUT_MANY] = {
		RESULT_PUT_MANY_UPDATE("x.tenant_id") " RETURNING r.result_id",
	8, {TEXTARRAYOID, INT8ARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID, JSONARRAYOID,
	INT4ARRAYOID, TEXTOID}, false, RESULT_PUT_MANY_UPDATE(BATCH_TENANT("$1")) " RETURNING r.result_id"},
	[P_RESULT_GET] = {
		"SELECT r.workload_id, r.claim_id, r.worker_id, r.fencing_token, " RESULT_DOC
		" FROM workload.results r "
		"WHERE r.tenant_id = $2 AND r.application_id = $3 AND r.result_id = $1",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_RESULT_PUT] = {
		RESULT_PUT_UPDATE "RETURNING r.result_id",
	8, {TEXTOID, INT8OID, TEXTOID, JSONBOID, TEXTOID, TEXTARRAYOID, INT4OID, TEXTOID}, true},
	[P_CHECKPOINT_PUT] = {
		CHECKPOINT_PUT_INSERT "RETURNING " CHECKPOINT_DOC,
	12, {TEXTOID, INT4OID, TEXTOID, INT4OID, INT8OID, JSONBOID, TEXTOID, TIMESTAMPTZOID,
	TEXTOID, TEXTOID, TEXTOID, INT8OID},
	false, "WITH c AS (" CHECKPOINT_PUT_INSERT "RETURNING c.*) SELECT " CHECKPOINT_DOC " FROM c"},
	[P_POLICY] = {
		"SELECT s.max_attempts, s.initial_delay_ms, s.max_delay_ms, s.backoff, s.retry_on "
		"FROM workload.specs s WHERE s.tenant_id = $1 AND s.workload_seq = $2",
	2, {TEXTOID, INT8OID}},
	/* what the domain reads of a spec after create (store_parts.c: WlSpecRow) */
	/*
	 * whether any of the grants $1 is revoked: each workload keeps its whole
	 * chain (spec grant_ids), so the chains of a batch need no lineage walk
	 */
	[P_REVOKED_AMONG] = {
		"SELECT EXISTS (SELECT 1 FROM workload.revoked_grants r WHERE r.grant_id = ANY($1))",
	1, {TEXTARRAYOID}, true},
	[P_SPEC_READ] = {
		"SELECT a.authorization_snapshot, a.run_authority, s.connection_scopes, s.definition_id, "
		"  s.definition_revision, s.environment, s.governing_snapshots, s.completion_criteria, "
		"  s.created_by::text, s.grant_ids "
		"FROM workload.specs s JOIN workload.spec_authority a "
		"  ON a.tenant_id = $1 AND a.workload_seq = $2 "
		"WHERE s.tenant_id = $1 AND s.workload_seq = $2",
	2, {TEXTOID, INT8OID}},
	/*
	 * Expired leases the caller may touch (MAY_TOUCH: $3, $4), among the
	 * claimed rows (runs_held_idx, $5), the first $2 in fair order (FAIR).
	 */
	[P_EXPIRED] = {EXPIRED_FROM(HELD_RUNS_FIRST, "r.seq = ANY " HELD_SEQS(5) " AND ",
								MAY_TOUCH_AS("w", "$3", "$4")),
	5, {TIMESTAMPTZOID, INT4OID, BOOLOID, NAMEOID, INT8ARRAYOID}, false,
	EXPIRED_FROM(HELD_FROM("workload.runs", "workload.workload_rows"), "", MAY_TOUCH_AS("w", "$3", "$4"))},
	/* which of these workloads (ids[i] of tenants[i]) have a dependent */
	[P_DEPENDED_ON] = {
		"SELECT x.id, x.t FROM unnest($1::text[], $2::text[]) x(id, t) "
		"WHERE EXISTS (SELECT 1 FROM workload.dependencies d "
		"  WHERE d.depends_on = x.id AND d.tenant_id = x.t)",
	2, {TEXTARRAYOID, TEXTARRAYOID}},
	/* the dependents of a workload that reached final state $2, and whether each required it */
	[P_DEPENDENTS] = {
		"SELECT d.workload_id, d.required_state = $2 FROM workload.dependencies d "
		"WHERE d.tenant_id = $3 AND d.depends_on = $1 "
		"  AND ($4::text IS NULL OR d.workload_id > $4) AND ($5::text IS NULL OR d.workload_id = $5) "
		"ORDER BY d.workload_id",
	5, {TEXTOID, ST, TEXTOID, TEXTOID, TEXTOID}},
	/*
	 * A tenant's use, counted (quota.c): its workloads not final, and the
	 * bytes of the inputs, checkpoint states and results it stores, each
	 * as large as it is before compression (a value made anew is not
	 * compressed), as the API counts what it stores.
	 */
#define RAW_SIZE(v) "pg_column_size((" v ")::text::jsonb)"
	[P_TENANT_USE] = {
		"SELECT (SELECT count(*) FROM workload.workload_rows w LEFT JOIN workload.runs r "
		"    ON r.seq = w.seq AND r.tenant_id = w.tenant_id "
		"  WHERE w.tenant_id = $1 AND COALESCE(r.state, w.state) NOT IN " SQL_FINAL "), "
		"  (SELECT COALESCE(sum(" RAW_SIZE("s.input") "), 0) FROM workload.specs s "
		"     WHERE s.tenant_id = $1) "
		"  + (SELECT COALESCE(sum(" RAW_SIZE("c.state") "), 0) FROM workload.checkpoints c "
		"     WHERE c.tenant_id = $1) "
		"  + (SELECT COALESCE(sum(" RAW_SIZE("r.output") "), 0) FROM workload.runs r "
		"     WHERE r.tenant_id = $1 AND r.output IS NOT NULL)",
	1, {TEXTOID}},
	/* a tenant's schedules but the one named */
	[P_TENANT_SCHEDULES] = {
		"SELECT count(*) FROM workload.schedules s WHERE s.tenant_id = $1 "
		"  AND NOT (s.application_id = $2 AND s.schedule_id = $3)",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	/* the cascades a maintenance pass left for the next (recovery.c, transition.c) */
	[P_CASCADES_DUE] = {CASCADES_DUE_SQL, 2, {TIMESTAMPTZOID, INT4OID}},
	/*
	 * what is left of the cascade from workload $2: its dependents after
	 * $4 (a frame, $5 ''; never moved back), or the one dependent $5 (whose row
	 * was held)
	 */
	[P_CASCADE_PUT] = {
		"INSERT INTO workload.cascades AS c (tenant_id, workload_id, final_state, after_id, dependent_id, queued_at) "
		"VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, workload_id, dependent_id) "
		"DO UPDATE SET after_id = GREATEST(c.after_id, EXCLUDED.after_id)",
	6, {TEXTOID, TEXTOID, ST, TEXTOID, TEXTOID, TIMESTAMPTZOID}},
	/* what is left of the cascades from workload $2, taken to be done now */
	[P_CASCADE_TAKE] = {
		"DELETE FROM workload.cascades c WHERE c.tenant_id = $1 AND c.workload_id = $2 "
		"RETURNING c.final_state, c.after_id, c.dependent_id",
	2, {TEXTOID, TEXTOID}, true},
	[P_PURGE] = {PURGE(SQL_FINAL, PURGE_BOUND, PURGE_CARRIED), 2, {TIMESTAMPTZOID, INT4OID}},
	[P_PURGE_DEAD] = {PURGE("('DEAD_LETTER')", "", ""), 2, {TIMESTAMPTZOID, INT4OID}},
	[P_KEY_CURRENT] = {
		"SELECT k.key_id, k.secret FROM workload.signing_keys k WHERE k.retired_at IS NULL "
		"ORDER BY k.created_at DESC, k.key_id DESC LIMIT 1",
	0, {InvalidOid}},
	[P_KEY_GET] = {
		"SELECT k.secret, k.retired_at IS NOT NULL FROM workload.signing_keys k WHERE k.key_id = $1",
	1, {TEXTOID}},
	[P_KEY_PUT] = {
		"INSERT INTO workload.signing_keys (key_id, secret, created_at) VALUES ($1, $2, $3)",
	3, {TEXTOID, BYTEAOID, TIMESTAMPTZOID}},
	[P_KEY_RETIRE] = {
		"UPDATE workload.signing_keys SET retired_at = $2 WHERE key_id = $1 AND retired_at IS NULL",
	2, {TEXTOID, TIMESTAMPTZOID}},
	[P_KEY_OTHERS] = {
		"SELECT count(*) FROM workload.signing_keys WHERE retired_at IS NULL AND key_id <> $1",
	1, {TEXTOID}},
	/*
	 * A grant's chain: the grants in $1 (itself, its parent) and every grant
	 * they derive from by the recorded lineage; whether any of them is revoked.
	 */
	[P_GRANT_CHAIN] = {
		"WITH RECURSIVE chain(id, depth) AS ("
		"  SELECT g, 0 FROM unnest($1::text[]) g WHERE g IS NOT NULL "
		"  UNION SELECT l.parent_grant, c.depth + 1 FROM chain c "
		"    JOIN workload.grant_lineage l ON l.grant_id = c.id "
		"    WHERE l.parent_grant IS NOT NULL AND c.depth < 32) "
		"SELECT EXISTS (SELECT 1 FROM workload.revoked_grants r "
		"    WHERE r.grant_id = ANY (ARRAY(SELECT id FROM chain))), "
		"  ARRAY(SELECT DISTINCT id FROM chain ORDER BY id)",
	1, {TEXTARRAYOID}},
	[P_LINEAGE_PUT] = {
		"INSERT INTO workload.grant_lineage (grant_id, parent_grant, tenant_id, application_id, "
		"  recorded_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
	5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID}},
	/* a revocation; its tenant and application when the lineage knows them */
	[P_REVOKE_PUT] = {
		"INSERT INTO workload.revoked_grants (grant_id, revoked_at, revoked_by, tenant_id, "
		"  application_id, sweep_after) "
		"SELECT $1, $2, $3, l.tenant_id, l.application_id, '' "
		"FROM (SELECT 1) one LEFT JOIN workload.grant_lineage l ON l.grant_id = $1 "
		"ON CONFLICT DO NOTHING",
	3, {TEXTOID, TIMESTAMPTZOID, NAMEOID}},
	/* revocations whose queued work is still to be dead-lettered */
	[P_REVOKED_UNSWEPT] = {
		"SELECT r.grant_id, r.sweep_after FROM workload.revoked_grants r WHERE r.swept_at IS NULL "
		"ORDER BY r.revoked_at, r.grant_id LIMIT $1",
	1, {INT4OID}},
	/*
	 * One slice of a revocation's sweep: the next $3 workloads (in id order,
	 * after $2) and, of them, the ones not yet final whose chain holds grant $1.
	 */
	[P_REVOKED_SLICE] = {
		"WITH slice AS (SELECT w.workload_id, w.state, (SELECT s.grant_ids FROM workload.specs s "
		"    WHERE s.tenant_id = w.tenant_id AND s.workload_seq = w.seq) AS grant_ids "
		"  FROM workload.workloads w "
		"  WHERE w.workload_id > $2 ORDER BY w.workload_id LIMIT $3) "
		"SELECT (SELECT max(workload_id) FROM slice), (SELECT count(*) FROM slice), "
		"  ARRAY(SELECT s.workload_id FROM slice s WHERE s.grant_ids @> ARRAY[$1] "
		"    AND s.state NOT IN " SQL_FINAL " AND s.state <> 'DEAD_LETTER' ORDER BY s.workload_id)",
	3, {TEXTOID, TEXTOID, INT4OID}},
	[P_REVOKED_PROGRESS] = {
		"UPDATE workload.revoked_grants SET sweep_after = $2, swept_at = $3 WHERE grant_id = $1",
	3, {TEXTOID, TEXTOID, TIMESTAMPTZOID}},
	[P_CHANNEL_SECRET] = {
		"SELECT c.secret FROM workload.channel_secret c",
	0, {InvalidOid}},
	/* the tenants' and applications' own channel secrets, rotated since CREATE EXTENSION */
	[P_CHANNEL_PAIRS] = {
		"SELECT c.tenant_id, c.application_id, c.secret FROM workload.channel_secrets c",
	0, {InvalidOid}},
	[P_CHANNEL_PAIR_PUT] = {
		"INSERT INTO workload.channel_secrets (tenant_id, application_id, secret, rotated_at) "
		"VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, application_id) "
		"DO UPDATE SET secret = EXCLUDED.secret, rotated_at = EXCLUDED.rotated_at",
	4, {TEXTOID, TEXTOID, BYTEAOID, TIMESTAMPTZOID}},
	[P_CHANNEL_SECRET_PUT] = {
		"INSERT INTO workload.channel_secret (secret, created_at) VALUES ($1, $2)",
	2, {BYTEAOID, TIMESTAMPTZOID}},
	/* A role is a member through itself or any role it belongs to. */
	[P_MEMBER] = {
		"SELECT 1 FROM workload.tenant_members m "
		"WHERE m.tenant_id = $2 AND m.application_id = $3 AND " HAS_ROLE("$1", "m") " "
		"LIMIT 1",
	3, {NAMEOID, TEXTOID, TEXTOID}},
	/* the applications of tenant $2 that role $1 may act in (for MAY_TOUCH_CITUS) */
	[P_MEMBER_APPS] = {
		"SELECT COALESCE(array_agg(m.application_id), '{}') FROM workload.tenant_members m "
		"WHERE m.tenant_id = $2 AND " HAS_ROLE("$1", "m"),
	2, {NAMEOID, TEXTOID}, true},
	[P_MEMBER_PUT] = {
		"INSERT INTO workload.tenant_members (role, tenant_id, application_id, role_oid) "
		"VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
	4, {NAMEOID, TEXTOID, TEXTOID, OIDOID}},
	[P_MEMBER_DEL] = {
		"DELETE FROM workload.tenant_members WHERE role_oid = $1 AND tenant_id = $2 AND application_id = $3",
	3, {OIDOID, TEXTOID, TEXTOID}},
	/*
	 * memberships recorded under a name whose role was dropped since (read,
	 * then deleted by key: Citus refuses a write to a reference table that
	 * calls a STABLE function on its columns)
	 */
	[P_MEMBER_DROPPED] = {
		"SELECT m.role_oid FROM workload.tenant_members m WHERE m.role = $1 AND m.tenant_id = $2 "
		"  AND m.application_id = $3 AND workload.member_role(m.role_oid, m.role) IS NULL",
	3, {NAMEOID, TEXTOID, TEXTOID}},

	/* ---- maintenance (recovery.c's passes) ---- */
	/*
	 * The workloads that hold a claim (runs_held_idx): as many as are in
	 * flight, and the entries of the claims ended since they were last
	 * read, each a visit of its run row (once: the visit marks it dead)
	 */
	[P_HELD_SEQS] = {
		"SELECT ARRAY(SELECT l.seq FROM workload.runs l WHERE l.claim_id IS NOT NULL)",
	0, {InvalidOid}},
	/*
	 * Rows whose timeout or wait deadline has come, through
	 * workloads_deadline_idx, after the keyset ($3, $4) the pass has reached.
	 */
	/*
	 * The first $2 in fair order (FAIR) at $1.
	 */
	[P_DEADLINE_DUE] = {DEADLINE_DUE_SQL, 2, {TIMESTAMPTZOID, INT4OID}},
	/* deadlines of held rows: only rows holding a claim (runs_held_idx, $3) */
	[P_HELD_DEADLINE_DUE] = {HELD_DEADLINE_DUE_FROM(HELD_RUNS_FIRST, "r.seq = ANY " HELD_SEQS(3) " AND "),
	3, {TIMESTAMPTZOID, INT4OID, INT8ARRAYOID}, false,
	HELD_DEADLINE_DUE_FROM(HELD_FROM("workload.runs", "workload.workload_rows"), "")},
	/*
	 * Heartbeat timeouts: only rows holding a claim (runs_held_idx, $3);
	 * silence counts from the last heartbeat, else from the claim.
	 */
	[P_HEARTBEAT_DUE] = {HEARTBEAT_DUE_FROM(HELD_RUNS_FIRST, "r.seq = ANY " HELD_SEQS(3) " AND "),
	3, {TIMESTAMPTZOID, INT4OID, INT8ARRAYOID}, false,
	HEARTBEAT_DUE_FROM(HELD_FROM("workload.runs", "workload.workload_rows"), "")},

	/* ---- orchestration (checkpoints, waits, compensations) ---- */
	[P_CHECKPOINT_LAST] = {
		"SELECT c.sequence, c.checkpoint_id, c.state, c.state_hash, c.key_id, c.tag, "
		"  " CHECKPOINT_DOC " || jsonb_build_object('state', c.state) "
		"FROM workload.checkpoints c WHERE c.tenant_id = $1 AND c.workload_seq = $2 "
		"ORDER BY c.sequence DESC LIMIT 1",
	2, {TEXTOID, INT8OID}},
	[P_WAIT_PUT] = {
		"INSERT INTO workload.waits (workload_id, wait_number, tenant_id, application_id, kind, "
		"  wake_key, deadline, attempt_number, fencing_token, created_at) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
	10, {TEXTOID, INT4OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID,
	TIMESTAMPTZOID}},
	[P_WAIT_OPEN] = {
		"SELECT x.wait_number, x.kind, x.wake_key, x.deadline FROM workload.waits x "
		"WHERE x.tenant_id = $2 AND x.workload_id = $1 AND x.resolved_at IS NULL "
		"ORDER BY x.wait_number DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}},
	[P_WAIT_RESOLVE] = {
		"UPDATE workload.waits SET resolved_at = $3, outcome = $4, payload = $5, approved = $6, "
		"  approver = $7, note = $8, approver_role = $9 "
		"WHERE tenant_id = $10 AND workload_id = $1 AND wait_number = $2 AND resolved_at IS NULL",
	10, {TEXTOID, INT4OID, TIMESTAMPTZOID, TEXTOID, JSONBOID, BOOLOID, TEXTOID, TEXTOID, NAMEOID,
	TEXTOID}},
	[P_WAIT_CLOSE] = {
		"UPDATE workload.waits SET resolved_at = $2, outcome = $3 "
		"WHERE tenant_id = $4 AND workload_id = $1 AND resolved_at IS NULL",
	4, {TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID}},
	[P_WAIT_LAST] = {
		"SELECT " WAIT_DOC " FROM workload.waits x "
		"WHERE x.tenant_id = $2 AND x.workload_id = $1 AND x.resolved_at IS NOT NULL "
		"ORDER BY x.wait_number DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}},
	[P_WAIT_KEYED] = {
		"SELECT DISTINCT x.workload_id FROM workload.waits x "
		"WHERE x.tenant_id = $1 AND x.application_id = $2 AND x.wake_key = $3 "
		"  AND x.resolved_at IS NULL AND x.kind = 'event' AND x.deadline > $4 "
		"ORDER BY x.workload_id",
	4, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID}},
	[P_COMP_PUT] = {
		COMP_PUT_INSERT "RETURNING " COMP_DOC,
	10, {TEXTOID, INT4OID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, INT4OID, INT8OID, TIMESTAMPTZOID,
	TEXTOID},
	false, "WITH p AS (" COMP_PUT_INSERT "RETURNING p.*) SELECT " COMP_DOC " FROM p"},
	[P_COMP_LIST] = {
		"SELECT p.step, p.capability_id, p.input, p.authorization_digest, p.compensation_id "
		"FROM workload.compensations p WHERE p.tenant_id = $2 AND p.workload_id = $1 ORDER BY p.step",
	2, {TEXTOID, TEXTOID}},
	[P_COMP_BIND] = {
		"UPDATE workload.compensations SET compensation_id = $3, compensated_at = $4, "
		"  compensated_by = $5 WHERE tenant_id = $6 AND workload_id = $1 AND step = $2 "
		"  AND compensation_id IS NULL",
	6, {TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID}},
	/*
	 * What an operator looks at first, for one tenant and application: one
	 * aggregate over its rows (workloads_tenant_idx), which Citus runs on the
	 * tenant's node.  $4 (a NULL of the state type) is not used.
	 */
	[P_STATS] = {
		"SELECT jsonb_build_object('tenant_id', $1::text, 'application_id', $2::text, 'at', $3, "
		"  'states', " SQL_COUNT_BY_STATE ", "
		"  'total', count(*), "
		"  'ready_due', count(*) FILTER (WHERE x.state = 'READY' AND x.next_attempt_at <= $3), "
		"  'ready_delayed', count(*) FILTER (WHERE x.state = 'READY' AND x.next_attempt_at > $3), "
		"  'oldest_due_ready_age_ms', floor(extract(epoch FROM $3 - min(x.next_attempt_at) "
		"    FILTER (WHERE x.state = 'READY' AND x.next_attempt_at <= $3)) * 1000)::bigint, "
		"  'held', count(*) FILTER (WHERE x.state IN " SQL_HOLDS_CLAIM "), "
		"  'dead_letters', count(*) FILTER (WHERE x.state = 'DEAD_LETTER'), "
		"  'completed_last_minute', count(*) FILTER (WHERE x.state = 'SUCCEEDED' "
		"    AND x.state_entered_at > $3 - interval '1 minute'), "
		"  'failed_last_minute', count(*) FILTER (WHERE x.last_failure IS NOT NULL "
		"    AND (x.last_failure ->> 'at')::timestamptz > $3 - interval '1 minute')) "
		"FROM workload.workloads x WHERE x.tenant_id = $1 AND x.application_id = $2",
	4, {TEXTOID, TEXTOID, TIMESTAMPTZOID, ST}},
	/* ---- scheduling and bulk work (workload_create_many, workload_redrive) ---- */
	/* P_IDEM for n keys ($1 tenants, $2 applications, $3 keys): the item number of each found */
	[P_IDEM_MANY] = {IDEM_MANY_SQL("x.t", " OFFSET 0"), 3, {TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID},
	false, IDEM_MANY_SQL(BATCH_TENANT("$1"), "")},
	/*
	 * The specs of n new workloads, one row per array element (text[]
	 * columns come as their text form); a key a concurrent create
	 * won is skipped.  Returns the creation sequence of each row written.
	 */
	[P_CREATE_SPECS_MANY] = {
		"INSERT INTO workload.specs (tenant_id, workload_seq, workload_id, application_id, "
		"  idempotency_key, environment, definition_id, definition_revision, trigger, input, "
		"  input_hash, requested_by, connection_scopes, max_attempts, "
		"  initial_delay_ms, max_delay_ms, backoff, retry_on, timeouts, dependencies, "
		"  completion_criteria, governing_snapshots, contract_version, created_by, "
		"  grant_ids, not_before) "
		"SELECT x.t, x.seq, x.id, x.a, x.k, x.env, x.def, x.rev, x.trg, x.input, x.ih, x.rb, "
		"  x.cs::text[], x.ma, x.idm, x.mdm, x.bo, "
		"  x.ro::text[], x.tos, '[]'::jsonb, x.cc, x.gs, $20, $21, "
		"  x.gi::text[], x.nb "
		"FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], "
		"  $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::text[], $12::jsonb[], "
		"  $13::text[], $14::int4[], $15::int8[], $16::int8[], $17::text[], $18::text[], "
		"  $19::jsonb[], $22::jsonb[], $23::jsonb[], $24::text[], $25::timestamptz[]) "
		"  x(t, seq, id, a, k, env, def, rev, trg, input, ih, rb, cs, ma, idm, mdm, bo, ro, "
		"    tos, cc, gs, gi, nb) "
		"ON CONFLICT DO NOTHING RETURNING workload_seq",
	25, {TEXTARRAYOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
		TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID, JSONBARRAYOID,
		TEXTARRAYOID, INT4ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, TEXTARRAYOID,
		TEXTARRAYOID, JSONBARRAYOID, INT4OID, NAMEOID, JSONBARRAYOID,
	JSONBARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID}},
	/* the authority documents of the specs just written (P_CREATE_SPECS_MANY), one row each */
	[P_CREATE_AUTHORITY_MANY] = {
		"INSERT INTO workload.spec_authority (tenant_id, workload_seq, authorization_snapshot, "
		"  run_authority) "
		"SELECT * FROM unnest($1::text[], $2::int8[], $3::jsonb[], $4::jsonb[])",
	4, {TEXTARRAYOID, INT8ARRAYOID, JSONBARRAYOID, JSONBARRAYOID}},
	/*
	 * The rows of n new READY workloads (no dependencies): the workload
	 * rows, their queue rows and their CREATED and READY events, in one
	 * statement; events in array order.  $16 now, $17 READY, $18 CREATED,
	 * $19 the database role.
	 */
	[P_CREATE_ROWS_MANY] = {
		"WITH x AS MATERIALIZED (SELECT u.*, u.cj::text[] AS caps "
		"  FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[], $5::int4[], $6::text[], "
		"    $7::bool[], $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], "
		"    $13::timestamptz[], $14::timestamptz[], $15::text[], $20::timestamptz[]) WITH ORDINALITY "
		"  AS u(t, id, seq, a, prio, cj, crit, q_ms, c_ms, e_ms, h_ms, o_ms, due, dl, actor, ax, n)), "
		"w AS (INSERT INTO workload.workload_rows (tenant_id, workload_id, seq, application_id, priority, "
		"  created_at, capability_snapshot, has_dependencies, has_criteria, "
		"  " TIMEOUT_NAMES "state, state_entered_at, updated_at, next_attempt_at, attempt_count, "
		"  retry_count, wait_count, checkpoint_sequence, fencing_token, deadline_at, "
		"  unheld_deadline_at, authority_expires_at) "
		"  SELECT x.t, x.id, x.seq, x.a, x.prio, $16, x.caps, false, x.crit, x.q_ms, x.c_ms, x.e_ms, "
		"    x.h_ms, x.o_ms, $17, $16, $16, x.due, 0, 0, 0, 0, 0, x.dl, x.dl, x.ax FROM x ORDER BY x.n), "
		"q AS (INSERT INTO workload.queue (tenant_id, seq, application_id, priority, created_at, "
		"  available_at, capability_snapshot, checks_dependencies, blocked, has_run) "
		"  SELECT x.t, x.seq, x.a, x.prio, $16, x.due, x.caps, false, false, false FROM x ORDER BY x.n), "
		"e AS (INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, at, "
		"  db_role, evidence) "
		"  SELECT x.t, x.seq, CASE WHEN v.k = 2 THEN $18 END, CASE WHEN v.k = 1 THEN $18 ELSE $17 END, "
		"    x.actor, $16, $19, '{}'::jsonb "
		"  FROM x, (VALUES (1), (2)) v(k) ORDER BY x.n, v.k) "
		"SELECT count(*) FROM x",
	20, {TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID,
		BOOLARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID, TEXTARRAYOID, TIMESTAMPTZOID,
	ST, ST, TEXTOID, TIMESTAMPTZARRAYOID}},
	/* the documents of n workloads ($1 ids of tenants $2), each looked up by its key */
	[P_DOC_MANY] = {DOC_MANY_SQL("x.t", "w.tenant_id", " OFFSET 0"), 2, {TEXTARRAYOID, TEXTARRAYOID},
	false, DOC_MANY_SQL(BATCH_TENANT("$2"), BATCH_TENANT("$2"), "")},
	/*
	 * Up to $5 DEAD_LETTER workloads of one tenant and application, oldest
	 * first, of definition $3 and last failure kind $4 when given, locked
	 * (skipping any another transaction holds).
	 */
	[P_DEAD_LETTERS] = {DEAD_LETTERS_SQL("w.tenant_id"), 6, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, ST},
	false, DEAD_LETTERS_SQL("$1")},

	/* ---- schedules (store_sched.c) ---- */
	/*
	 * Create or replace; a replace keeps paused and the last_* columns (what
	 * already ran, and the overlap rule's previous workload), and whether the
	 * grant's expiry was warned of while it expires when it did.
	 */
	[P_SCHED_PUT] = {
		"INSERT INTO workload.schedules AS s (tenant_id, application_id, schedule_id, cron, "
		"  timezone, template, overlap, catch_up, paused, next_run_at, created_by, created_at, "
		"  updated_at, grant_expires_at) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false, $9, $10, $11, $11, $12) "
		"ON CONFLICT (tenant_id, application_id, schedule_id) DO UPDATE SET cron = EXCLUDED.cron, "
		"  timezone = EXCLUDED.timezone, template = EXCLUDED.template, overlap = EXCLUDED.overlap, "
		"  catch_up = EXCLUDED.catch_up, next_run_at = EXCLUDED.next_run_at, "
		"  created_by = EXCLUDED.created_by, updated_at = EXCLUDED.updated_at, "
		"  grant_expires_at = EXCLUDED.grant_expires_at, "
		"  grant_warned_at = CASE WHEN s.grant_expires_at IS NOT DISTINCT FROM EXCLUDED.grant_expires_at "
		"    THEN s.grant_warned_at END "
		"RETURNING " SCHED_DOC,
	12, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TIMESTAMPTZOID,
	NAMEOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[P_SCHED_LOCK] = {
		"SELECT s.cron, s.timezone, s.template, s.overlap, s.catch_up, s.paused, s.next_run_at, "
		"  s.last_workload_id, s.created_by::text FROM workload.schedules s "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 FOR NO KEY UPDATE",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	/* P_SCHED_LOCK for the tick: a schedule another session holds is passed over */
	[P_SCHED_LOCK_SKIP] = {
		"SELECT s.cron, s.timezone, s.template, s.overlap, s.catch_up, s.paused, s.next_run_at, "
		"  s.last_workload_id, s.created_by::text FROM workload.schedules s "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 "
		"FOR NO KEY UPDATE SKIP LOCKED",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_SCHED_PAUSE] = {
		"UPDATE workload.schedules s SET paused = true, updated_at = $4 "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 RETURNING " SCHED_DOC,
	4, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID}},
	[P_SCHED_RESUME] = {
		"UPDATE workload.schedules s SET paused = false, next_run_at = $4, updated_at = $5 "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 RETURNING " SCHED_DOC,
	5, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[P_SCHED_DROP] = {
		"WITH e AS (DELETE FROM workload.schedule_events x WHERE x.tenant_id = $1 "
		"  AND x.application_id = $2 AND x.schedule_id = $3) "
		"DELETE FROM workload.schedules s "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 RETURNING 1",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_SCHED_LIST] = {
		"SELECT " SCHED_DOC " FROM workload.schedules s "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 ORDER BY s.schedule_id",
	2, {TEXTOID, TEXTOID}},
	/*
	 * Schedules whose next slot has come, soonest first, through
	 * schedules_due_idx; one a concurrent transaction holds is being fired or
	 * changed right now and is left to the next tick.
	 */
	/*
	 * The due schedules, fairly between tenants (each tenant's soonest first,
	 * the tenants in turn, as FAIR orders rows): a tenant with thousands of
	 * schedules delays nobody else's.  Unlocked: each is locked, SKIP
	 * LOCKED, as it is fired (P_SCHED_LOCK_SKIP).
	 */
	[P_SCHED_DUE] = {
		"SELECT f.tenant_id, f.application_id, f.schedule_id, f.next_run_at FROM ("
		"  SELECT s.tenant_id, s.application_id, s.schedule_id, s.next_run_at, "
		"    row_number() OVER (PARTITION BY s.tenant_id "
		"      ORDER BY s.next_run_at, s.application_id, s.schedule_id) AS rn "
		"  FROM workload.schedules s WHERE NOT s.paused AND s.next_run_at <= $1) f "
		"ORDER BY f.rn, f.next_run_at, f.tenant_id, f.application_id, f.schedule_id LIMIT $2",
	2, {TIMESTAMPTZOID, INT4OID}},
	/* what one tick did with a schedule ($5, $6, $7: NULL leaves the last_* as they were) */
	[P_SCHED_FIRED] = {
		"UPDATE workload.schedules s SET next_run_at = $4, "
		"  last_run_at = CASE WHEN $6::text IS NULL THEN s.last_run_at ELSE $5 END, "
		"  last_workload_id = COALESCE($6, s.last_workload_id), "
		"  last_error = CASE WHEN $8 THEN $7 ELSE s.last_error END "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3",
	8, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, JSONBOID, BOOLOID}},
	/*
	 * Append an event and keep the schedule's latest 100: the insert is not
	 * seen by the delete's snapshot, so 99 earlier ones stay beside it.
	 */
	[P_SCHED_EVENT] = {
		"WITH e AS (INSERT INTO workload.schedule_events (tenant_id, application_id, schedule_id, "
		"  event_type, slot, at, evidence) VALUES ($1, $2, $3, $4, $5, $6, $7)) "
		"DELETE FROM workload.schedule_events x WHERE x.tenant_id = $1 AND x.application_id = $2 "
		"  AND x.schedule_id = $3 AND x.sequence < (SELECT y.sequence FROM workload.schedule_events y "
		"    WHERE y.tenant_id = $1 AND y.application_id = $2 AND y.schedule_id = $3 "
		"    ORDER BY y.sequence DESC OFFSET 98 LIMIT 1)",
	7, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID}},
	/* the state of a schedule's previous workload (none: purged) */
	[P_SCHED_LAST_STATE] = {
		"SELECT w.state::text FROM workload.workloads w WHERE w.workload_id = $1 AND w.tenant_id = $2",
	2, {TEXTOID, TEXTOID}},
	/* a schedule's grant replaced: slots, pause and what ran stay as they are */
	[P_SCHED_SET_GRANT] = {
		"UPDATE workload.schedules s SET template = $4, grant_expires_at = $5, "
		"  grant_warned_at = NULL, updated_at = $6 "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 RETURNING " SCHED_DOC,
	6, {TEXTOID, TEXTOID, TEXTOID, JSONBOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/*
	 * Schedules whose grant expires by $1 and has not been warned of, fairly
	 * between tenants (as P_SCHED_DUE), through schedules_grant_idx.
	 * Unlocked: each is marked SKIP LOCKED (P_SCHED_GRANT_WARNED).
	 */
	[P_SCHED_GRANTS_EXPIRING] = {
		"SELECT f.tenant_id, f.application_id, f.schedule_id FROM ("
		"  SELECT s.tenant_id, s.application_id, s.schedule_id, s.grant_expires_at, "
		"    row_number() OVER (PARTITION BY s.tenant_id "
		"      ORDER BY s.grant_expires_at, s.application_id, s.schedule_id) AS rn "
		"  FROM workload.schedules s WHERE s.grant_warned_at IS NULL AND s.grant_expires_at <= $1) f "
		"ORDER BY f.rn, f.grant_expires_at, f.tenant_id, f.application_id, f.schedule_id LIMIT $2",
	2, {TIMESTAMPTZOID, INT4OID}},
	/*
	 * Mark one warned of (unless another session holds it, or it was warned
	 * of or its grant replaced since): its grant's id and expiry.
	 */
	[P_SCHED_GRANT_WARNED] = {
		"WITH l AS (SELECT s.tenant_id FROM workload.schedules s WHERE s.tenant_id = $1 "
		"  AND s.application_id = $2 AND s.schedule_id = $3 AND s.grant_warned_at IS NULL "
		"  AND s.grant_expires_at <= $5 FOR NO KEY UPDATE SKIP LOCKED) "
		"UPDATE workload.schedules s SET grant_warned_at = $4 FROM l "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.schedule_id = $3 "
		"RETURNING s.template #>> '{authorization_snapshot,grant,id}', s.grant_expires_at",
	5, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/* Citus: the plpgsql body of workload_citus_distribute() */
	[P_CITUS_DISTRIBUTE] = {
		"SELECT workload.citus_distribute_tables()",
	0, {InvalidOid}},
	/* ---- Citus only (store_citus.c): the claim as one statement per table ---- */
	[P_CITUS_TENANT_OF] = {
		"SELECT w.tenant_id FROM workload.workload_rows w WHERE w.workload_id = $1",
	1, {TEXTOID}},
	/* whether workload_citus_distribute() has run (Citus's metadata, on every node) */
	[P_CITUS_DISTRIBUTED] = {
		"SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition d "
		"  WHERE d.logicalrelid = 'workload.workload_rows'::pg_catalog.regclass)",
	0, {InvalidOid}, .catalog_only = true},
	/* whether this node holds the shard of tenant $1 */
	/* the shards of workload.workload_rows this node holds */
	[P_CITUS_LOCAL_SHARDS] = {
		"SELECT s.shardid FROM pg_catalog.pg_dist_shard s "
		"JOIN pg_catalog.pg_dist_placement p ON p.shardid = s.shardid "
		"WHERE s.logicalrelid = 'workload.workload_rows'::pg_catalog.regclass "
		"  AND p.groupid = (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g) ORDER BY 1",
	0, {InvalidOid}, .catalog_only = true},
	/*
	 * The shards co-located with workload.workload_rows' shard $1 (its shard
	 * group: the same hash range), by table, and whether it is still here
	 */
	[P_CITUS_SHARD_GROUP] = {
		"SELECT s.logicalrelid::pg_catalog.regclass::text, s.shardid, "
		"  EXISTS (SELECT 1 FROM pg_catalog.pg_dist_placement p WHERE p.shardid = $1 "
		"    AND p.groupid = (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g)) "
		"FROM pg_catalog.pg_dist_shard s JOIN pg_catalog.pg_dist_shard w "
		"  ON w.shardid = $1 AND s.shardminvalue = w.shardminvalue "
		"JOIN pg_catalog.pg_dist_partition d ON d.logicalrelid = s.logicalrelid "
		"  AND d.colocationid = (SELECT d2.colocationid FROM pg_catalog.pg_dist_partition d2 "
		"    WHERE d2.logicalrelid = 'workload.workload_rows'::pg_catalog.regclass)",
	1, {INT8OID}, .catalog_only = true},
	/*
	 * The lock a write to a shard takes in Citus (its distribution metadata,
	 * ShareLock), which a shard move takes exclusively before it switches
	 * the placement: a write to a shard by its name waits for a move
	 */
	[P_CITUS_SHARD_LOCK] = {
		"SELECT pg_catalog.lock_shard_metadata(5, $1)",
	1, {INT8ARRAYOID}, .catalog_only = true},
	/* the shard of workload.workload_rows that holds tenant $1 (store_shard.c) */
	[P_CITUS_SHARD_OF] = {
		"SELECT pg_catalog.get_shard_id_for_distribution_column("
		"  'workload.workload_rows'::pg_catalog.regclass, $1)",
	1, {TEXTOID}, .catalog_only = true},
	/*
	 * The shard group of workload_rows' shard $1 as this node names it: each
	 * of our co-located tables with its shard over the same hash range, and
	 * each of our reference tables with its one shard
	 */
	[P_CITUS_SHARD_MAP] = {
		"SELECT c.relname::text, s.shardid FROM pg_catalog.pg_dist_shard s "
		"JOIN pg_catalog.pg_class c ON c.oid = s.logicalrelid "
		"  AND c.relnamespace = 'workload'::pg_catalog.regnamespace "
		"JOIN pg_catalog.pg_dist_partition d ON d.logicalrelid = s.logicalrelid "
		"WHERE d.partmethod = 'n' "
		"   OR (d.colocationid = (SELECT d2.colocationid FROM pg_catalog.pg_dist_partition d2 "
		"        WHERE d2.logicalrelid = 'workload.workload_rows'::pg_catalog.regclass) "
		"       AND s.shardminvalue = (SELECT w.shardminvalue FROM pg_catalog.pg_dist_shard w "
		"        WHERE w.shardid = $1))",
	1, {INT8OID}, .catalog_only = true},
	/* whether shard $1 is placed on this node */
	[P_CITUS_SHARD_HERE] = {
		"SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_placement p WHERE p.shardid = $1 "
		"  AND p.groupid = (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g))",
	1, {INT8OID}, .catalog_only = true},
	/* whether this node is the coordinator */
	[P_CITUS_COORDINATOR] = {
		"SELECT (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g) = 0",
	0, {InvalidOid}, .catalog_only = true},
	[P_CITUS_TENANT_LOCAL] = {
		"SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_placement p "
		"  WHERE p.shardid = pg_catalog.get_shard_id_for_distribution_column("
		"      'workload.workload_rows'::pg_catalog.regclass, $1) "
		"    AND p.groupid = (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g))",
	1, {TEXTOID}, .catalog_only = true},
	[P_CITUS_REVOKED_NOW] = {
		"SELECT " REVOKED_NOW,
	0, {InvalidOid}, true},
	[P_CITUS_PICK_MANY] = {
		"SELECT q.seq FROM workload.queue q "
		"WHERE " QUEUE_OF("$1", "$2") " AND NOT q.blocked "
		"  AND q.available_at <= $3 AND q.capability_snapshot <@ $4 "
		"  AND (cardinality($6) = 0 OR NOT EXISTS (SELECT 1 FROM workload.specs s "
		"    WHERE s.tenant_id = $1 AND s.workload_seq = q.seq AND s.grant_ids && $6)) "
		"  AND (NOT q.checks_dependencies OR (SELECT 1 FROM workload.dependencies d "
		"    WHERE d.tenant_id = $1 AND d.workload_id = (SELECT p.workload_id "
		"        FROM workload.workload_rows p WHERE p.seq = q.seq AND p.tenant_id = $1) "
		"      AND " DEP_STATE("d.depends_on", "$1") " <> d.required_state "
		"    LIMIT 1) IS NULL) "
		"ORDER BY q.priority DESC, q.created_at, q.seq LIMIT $5 "
		"FOR UPDATE OF q SKIP LOCKED",
	6, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTARRAYOID, INT4OID, TEXTARRAYOID}},
	[P_CITUS_PICK_ONE] = {
		"SELECT q.seq FROM workload.queue q WHERE q.tenant_id = $1 AND q.seq = $2 FOR UPDATE OF q",
	2, {TEXTOID, INT8OID}, true},
	/*
	 * The picked workloads still READY, locked skipping any another
	 * transaction holds: the run row of one claimed before; of one never
	 * claimed, nothing (its queue row is its lock) or, when it keeps a
	 * deadline for the tick, its workload row.  Each one's id, sequence and
	 * queue order.
	 */
	[P_CITUS_CLAIM_LOCK] = {
		"WITH again AS (SELECT r.seq FROM workload.runs r "
		"  WHERE r.tenant_id = $1 AND r.seq = ANY ($2) AND r.state = $3 FOR NO KEY UPDATE OF r SKIP LOCKED), "
		"first AS (SELECT w.seq, w.unheld_deadline_at IS NOT NULL AS has_deadline "
		"  FROM workload.workload_rows w WHERE w.tenant_id = $1 AND w.seq = ANY ($2) AND w.state = $3 "
		"    AND NOT EXISTS (SELECT 1 FROM workload.runs r WHERE r.tenant_id = $1 AND r.seq = w.seq)), "
		"unheld AS (SELECT w.seq FROM workload.workload_rows w WHERE w.tenant_id = $1 "
		"  AND w.seq = ANY (ARRAY(SELECT f.seq FROM first f WHERE f.has_deadline)) "
		"  FOR NO KEY UPDATE OF w SKIP LOCKED) "
		"SELECT w.workload_id, w.seq, w.priority, w.created_at, w.authority_expires_at "
		"FROM workload.workload_rows w WHERE w.tenant_id = $1 AND w.seq = ANY ($2) "
		"  AND (w.seq IN (SELECT a.seq FROM again a) OR w.seq IN (SELECT f.seq FROM first f "
		"    WHERE NOT f.has_deadline) OR w.seq IN (SELECT u.seq FROM unheld u))",
	3, {TEXTOID, INT8ARRAYOID, ST}, false},
	/*
	 * The claim written on the workloads P_CITUS_CLAIM_LOCK locked ($2), as
	 * CLAIM_TAIL's: a retry's run row updated, then a first claim's workload
	 * row's deadline for the tick cleared and its run row appended
	 */
#define CITUS_CLAIM_ARGS 8, {TEXTOID, TEXTARRAYOID, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID, ST, BOOLOID, TEXTOID}
	[P_CITUS_CLAIM_RETRY] = {
		"UPDATE workload.runs r SET state = $6, fencing_token = r.fencing_token + 1, "
		"  attempt_count = r.attempt_count + 1, worker_id = $4, claimed_by = $8, "
		"  claim_id = workload.claim_id_for(w.workload_id, r.fencing_token + 1, $4), "
		"  lease_expires_at = $5, updated_at = $3, state_entered_at = $3, claimed_at = $3, "
		"  started_at = CASE WHEN $7 THEN $3 END, last_heartbeat_at = NULL, "
		"  deadline_at = workload.claim_deadline(w.created_at, $3, w.claim_ms, w.execution_ms, w.overall_ms, $7), "
		"  unheld_deadline_at = NULL "
		"FROM workload.workload_rows w "
		"WHERE w.tenant_id = $1 AND w.workload_id = ANY ($2) AND r.tenant_id = $1 AND r.seq = w.seq "
		"RETURNING r.seq, r.claim_id, r.fencing_token, r.lease_expires_at, r.attempt_count, "
		"  r.checkpoint_sequence",
	CITUS_CLAIM_ARGS, false},
	[P_CITUS_CLAIM_CLEAR] = {
		"UPDATE workload.workload_rows w SET unheld_deadline_at = NULL "
		"WHERE w.tenant_id = $1 AND w.workload_id = ANY ($2) AND w.unheld_deadline_at IS NOT NULL "
		"  AND NOT EXISTS (SELECT 1 FROM workload.runs r WHERE r.tenant_id = w.tenant_id AND r.seq = w.seq)",
	2, {TEXTOID, TEXTARRAYOID}, false},
	/*
	 * ... the run rows of a first claim, in two statements, as Citus runs
	 * inside a call delegated to the tenant's node (it refuses an INSERT
	 * whose rows come from a distributed table's): their values, as arrays
	 * (one row), then the rows inserted from them
	 */
	[P_CITUS_CLAIM_FIRST] = {
		"SELECT array_agg(w.seq ORDER BY w.seq), array_agg(w.next_attempt_at ORDER BY w.seq), "
		"  array_agg(w.retry_count ORDER BY w.seq), array_agg(w.wait_count ORDER BY w.seq), "
		"  array_agg(w.checkpoint_sequence ORDER BY w.seq), array_agg(w.last_failure ORDER BY w.seq), "
		"  array_agg(w.attempt_count + 1 ORDER BY w.seq), array_agg(w.fencing_token + 1 ORDER BY w.seq), "
		"  array_agg(workload.claim_id_for(w.workload_id, w.fencing_token + 1, $4) ORDER BY w.seq), "
		"  array_agg(workload.claim_deadline(w.created_at, $3, w.claim_ms, w.execution_ms, "
		"    w.overall_ms, $7) ORDER BY w.seq), array_agg(w.progress ORDER BY w.seq), count(*) "
		"FROM workload.workload_rows w WHERE w.tenant_id = $1 AND w.workload_id = ANY ($2) "
		"  AND NOT EXISTS (SELECT 1 FROM workload.runs r WHERE r.tenant_id = $1 AND r.seq = w.seq)",
	CITUS_CLAIM_ARGS, false},
	[P_CITUS_CLAIM_INS] = {
		"INSERT INTO workload.runs (tenant_id, seq, next_attempt_at, unheld_deadline_at, "
		"  retry_count, wait_count, checkpoint_sequence, last_failure, attempt_count, fencing_token, "
		"  claimed_at, claim_id, worker_id, claimed_by, result_id, state, state_entered_at, "
		"  updated_at, started_at, deadline_at, lease_expires_at, last_heartbeat_at, progress) "
		"SELECT $1, x.seq, x.next_attempt_at, NULL, x.retry_count, x.wait_count, "
		"  x.checkpoint_sequence, x.last_failure, x.attempt_count, x.fencing_token, $3, "
		"  x.claim_id, $4, $8, NULL, $6, $3, $3, CASE WHEN $7 THEN $3 END, x.deadline_at, "
		"  $5, NULL, x.progress "
		"FROM unnest($9::int8[], $10::timestamptz[], $11::int4[], $12::int4[], $13::int4[], "
		"  $14::jsonb[], $15::int4[], $16::int8[], $17::text[], $18::timestamptz[], $19::jsonb[]) "
		"  x(seq, next_attempt_at, retry_count, wait_count, checkpoint_sequence, last_failure, "
		"    attempt_count, fencing_token, claim_id, deadline_at, progress) "
		"RETURNING seq, claim_id, fencing_token, lease_expires_at, attempt_count, checkpoint_sequence",
	19, {TEXTOID, TEXTARRAYOID, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID, ST, BOOLOID, TEXTOID,
		INT8ARRAYOID, TIMESTAMPTZARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, JSONBARRAYOID,
	INT4ARRAYOID, INT8ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID, JSONBARRAYOID}},
	[P_CITUS_QUEUE_DEL_MANY] = {
		"DELETE FROM workload.queue q WHERE q.tenant_id = $1 AND q.seq = ANY ($2)",
	2, {TEXTOID, INT8ARRAYOID}, true},
	[P_CITUS_CLAIM_EVENTS] = {
		"INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, at, "
		"  db_role, fencing_token, attempt, evidence) "
		"SELECT $1, u.seq, x.from_state, x.to_state, $5, $6, $7, "
		"  u.token, u.att, jsonb_build_object('worker_id', $5::text) "
		"FROM unnest($2::int8[], $3::int8[], $4::int4[]) u(seq, token, att), "
		"  (VALUES (1, $8, $9), (2, $9, $10)) x(n, from_state, to_state) "
		"WHERE x.n = 1 OR $11 ORDER BY u.seq, x.n",
	11, {TEXTOID, INT8ARRAYOID, INT8ARRAYOID, INT4ARRAYOID, TEXTOID, TIMESTAMPTZOID, TEXTOID,
	ST, ST, ST, BOOLOID}},
	[P_CITUS_CLAIM_SPECS] = {
		"SELECT s.workload_seq, s.definition_id, s.definition_revision, s.input "
		"FROM workload.specs s WHERE s.tenant_id = $1 AND s.workload_seq = ANY ($2)",
	2, {TEXTOID, INT8ARRAYOID}, true},
	[P_CITUS_LINEAGE_HAS] = {
		"SELECT 1 FROM workload.grant_lineage l WHERE l.grant_id = $1",
	1, {TEXTOID}, true},
};

/*
 * The maintenance scans of one shard group on this node (the tables' names
 * are replaced by their shards', store_citus_maint.c), run as plain statements on it (store_citus.c,
 * wl_store_citus_local_due): $1 now, the first $2 in fair order (FAIR; a
 * tenant's rows are all in one shard group).  Each row is then locked by its
 * tenant (recovery.c), where a caller's membership is decided.
 */
/*
 * workload.dependencies_unmet($1 tenant, $2 seq) as a statement, for the
 * claim on a Citus node's shards (store_shard.c names the shards): a
 * dependency of the workload out of its required state
 */
const char *const wl_sql_deps_unmet =
	"SELECT EXISTS (SELECT 1 FROM workload.dependencies d "
	"  WHERE d.tenant_id = $1 AND d.workload_id = (SELECT w.workload_id "
	"      FROM workload.workload_rows w WHERE w.seq = $2 AND w.tenant_id = $1) "
	"    AND " DEP_STATE("d.depends_on", "$1") " <> d.required_state)";

const char *const wl_sql_local_due[5] = {
	[WL_LOCAL_EXPIRED] = EXPIRED_FROM(HELD_FROM("workload.runs", "workload.workload_rows"), "", "true"),
	[WL_LOCAL_DEADLINE] = DEADLINE_DUE_FROM("workload.workload_rows", "workload.runs"),
	[WL_LOCAL_HEARTBEAT] = HEARTBEAT_DUE_FROM(HELD_FROM("workload.runs", "workload.workload_rows"), ""),
	[WL_LOCAL_HELD_DEADLINE] = HELD_DEADLINE_DUE_FROM(HELD_FROM("workload.runs", "workload.workload_rows"), ""),
	[WL_LOCAL_CASCADES] = CASCADES_DUE_SQL,
};

/*
 * Retention on one Citus shard group: the same statements as P_PURGE and
 * P_PURGE_DEAD, whose table names wl_store_citus_local_purge replaces with
 * the shards of one shard group of this node.
 */
const char *const wl_sql_purge[2] = {PURGE(SQL_FINAL, PURGE_BOUND, PURGE_CARRIED),
PURGE("('DEAD_LETTER')", "", "")};
