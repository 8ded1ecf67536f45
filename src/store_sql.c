/*
 * store_sql.c: the text of every SQL statement workload runs against its
 * tables, one entry per plan.  store.c prepares each once per backend and
 * runs it; the typed wrappers (store_rows.c, store_parts.c, store_meta.c)
 * are the only code that knows a statement's parameters and columns.
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
	"'authorization_snapshot', s.authorization_snapshot, " \
	"'capability_snapshot', to_jsonb(w.capability_snapshot), " \
	"'connection_scopes', to_jsonb(s.connection_scopes), 'priority', w.priority, " \
	"'idempotency_key', s.idempotency_key, " \
	"'retry_policy', jsonb_build_object('max_attempts', s.max_attempts, " \
	"  'initial_delay_ms', s.initial_delay_ms, 'max_delay_ms', s.max_delay_ms, " \
	"  'backoff', s.backoff, 'retry_on', to_jsonb(s.retry_on)), " \
	"'timeouts', s.timeouts, 'dependencies', s.dependencies, " \
	"'completion_criteria', s.completion_criteria, 'governing_snapshots', s.governing_snapshots, " \
	"'contract_version', s.contract_version, 'state', w.state, 'created_at', w.created_at, " \
	"'updated_at', w.updated_at, 'attempt_count', w.attempt_count, 'retry_count', w.retry_count, " \
	"'next_attempt_at', w.next_attempt_at, 'last_failure', w.last_failure, " \
	"'fencing_token', w.fencing_token, 'checkpoint_sequence', w.checkpoint_sequence, " \
	"'current_claim', CASE WHEN w.claim_id IS NULL THEN NULL ELSE jsonb_build_object(" \
	"  'claim_id', w.claim_id, 'worker_id', w.worker_id, 'fencing_token', w.fencing_token, " \
	"  'attempt', w.attempt_count, 'lease_expires_at', w.lease_expires_at) END, " \
	"'progress', w.progress"

#define RESULT_DOC \
	"jsonb_build_object('result_id', r.result_id, 'workload_id', r.workload_id, " \
	"'outcome', 'succeeded', 'output', r.output, 'output_hash', r.output_hash, " \
	"'artifacts', to_jsonb(r.artifacts), 'schema_version', r.schema_version, " \
	"'created_at', r.created_at, 'provenance', jsonb_build_object('claim_id', r.claim_id, " \
	"'worker_id', r.worker_id, 'fencing_token', r.fencing_token, 'attempt', r.attempt_number))"

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
	"  'approver', x.approver, 'note', x.note) ELSE '{}'::jsonb END"

#define COMP_DOC \
	"jsonb_build_object('workload_id', p.workload_id, 'step', p.step, " \
	"'capability_id', p.capability_id, 'input', p.input, 'input_hash', p.input_hash, " \
	"'authorization_digest', p.authorization_digest, 'attempt', p.attempt_number, " \
	"'fencing_token', p.fencing_token, 'created_at', p.created_at, " \
	"'compensation_id', p.compensation_id, 'compensated_at', p.compensated_at, " \
	"'compensated_by', p.compensated_by)"

#define FROM_DOC \
	" FROM workload.workloads w JOIN workload.specs s ON s.workload_id = w.workload_id "

/*
 * Statements reach rows by key, and say so in a way no plan can undo: a
 * table joined to another is also bounded by the keys it must have (= ANY of
 * the ids), and a row looked up for each row of another is a scalar subquery.
 * A plan made while the tables were small would otherwise be free to put a
 * whole-table index scan on the outside of a join, and keep it.
 */
/* the state of the workload whose id is the expression id (NULL if none) */
#define DEP_STATE(id) "(SELECT p.state FROM workload.workloads p WHERE p.workload_id = " id ")"

/* The timeout columns, in WL_TIMEOUTS order ("w.queue_ms, w.claim_ms, ..."). */
#define TIMEOUT_COL(f) "w." #f ", "
#define TIMEOUT_NAME(f) #f ", "
#define TIMEOUT_COLUMNS WL_TIMEOUTS(TIMEOUT_COL)
#define TIMEOUT_NAMES WL_TIMEOUTS(TIMEOUT_NAME)

/* The columns of a locked row, as store_rows.c reads them into a WlRow. */
#define ROW_COLUMNS \
	"w.tenant_id, w.application_id, w.state::text, w.attempt_count, w.retry_count, " \
	"  w.fencing_token, w.checkpoint_sequence, w.claim_id, w.worker_id, w.lease_expires_at, " \
	"  w.next_attempt_at, w.state_entered_at, w.created_at, w.last_heartbeat_at, " \
	"  w.capability_snapshot, " TIMEOUT_COLUMNS \
	"  w.deadline_at, w.wait_count, w.has_criteria "

/*
 * Membership, decided in the statement that locks: $2 says the caller acts
 * everywhere (a superuser, workload_admin, or the domain acting for the
 * system); else a row is seen, and locked, only when the role named $3 is a
 * member (itself or through a role it belongs to) of the row's tenant and
 * application.  A row the caller may not touch is never locked.
 */
#define MAY_TOUCH(w) \
	"($2 OR EXISTS (SELECT 1 FROM workload.tenant_members m " \
	"  JOIN pg_catalog.pg_roles r ON r.rolname = m.role " \
	"  WHERE m.tenant_id = " w ".tenant_id AND m.application_id = " w ".application_id " \
	"    AND pg_catalog.pg_has_role($3, r.oid, 'MEMBER')))"

/*
 * The claim: lock the candidates, then in one statement bump token and
 * attempt, open the attempt and append the claimed event (and, with start
 * => true, move straight on to RUNNING with its started event): one
 * statement per batch, whatever its size.  The event evidence has the
 * shape of wl_fence_evidence.
 */
#define CLAIM_UPDATE \
	", upd AS (UPDATE workload.workloads w SET state = $9, fencing_token = w.fencing_token + 1, " \
	"  attempt_count = w.attempt_count + 1, worker_id = $6, " \
	"  claim_id = workload.claim_id_for(w.workload_id, w.fencing_token + 1, $6), " \
	"  lease_expires_at = $3 + $7, updated_at = $3, state_entered_at = $3, last_heartbeat_at = NULL, " \
	"  deadline_at = workload.claim_deadline(w.created_at, $3, w.claim_ms, w.execution_ms, w.overall_ms, $10) " \
	"FROM workload.specs s " \
	"WHERE w.workload_id = ANY (ARRAY(SELECT p.workload_id FROM picked p)) " \
	"  AND s.workload_id = ANY (ARRAY(SELECT p.workload_id FROM picked p)) " \
	"  AND s.workload_id = w.workload_id " \
	"RETURNING w.workload_id, w.claim_id, w.fencing_token, w.lease_expires_at, w.attempt_count, " \
	"  s.definition_id, s.definition_revision, s.input, w.checkpoint_sequence, " \
	"  w.tenant_id, w.application_id), " \
	"att AS (INSERT INTO workload.attempts (workload_id, attempt_number, attempt_id, claim_id, " \
	"  worker_id, fencing_token, claimed_at, lease_expires_at, started_at) " \
	"  SELECT u.workload_id, u.attempt_count, workload.attempt_id_for(u.workload_id, u.attempt_count), " \
	"    u.claim_id, $6, u.fencing_token, $3, u.lease_expires_at, CASE WHEN $10 THEN $3 END FROM upd u), " \
	"ev AS (INSERT INTO workload.events (workload_id, tenant_id, application_id, event_type, " \
	"  from_state, to_state, actor, at, db_role, evidence) " \
	"  SELECT u.workload_id, u.tenant_id, u.application_id, x.event_type, x.from_state, x.to_state, " \
	"    $6, $3, $11, jsonb_build_object('fencing_token', u.fencing_token, 'attempt', u.attempt_count, " \
	"      'worker_id', $6::text) " \
	"  FROM upd u, (VALUES (1, $12, $13, $14), (2, $15, $14, $9)) x(n, event_type, from_state, to_state) " \
	"  WHERE x.n = 1 OR $10 ORDER BY u.workload_id, x.n) " \
	"SELECT * FROM upd"

#define CLAIM_ARGS 15, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTARRAYOID, INT4OID, TEXTOID, INTERVALOID, \
	TEXTOID, ST, BOOLOID, NAMEOID, TEXTOID, ST, ST, TEXTOID}

const WlPlanDef wl_plan_defs[P_COUNT] = {
	[P_LOCK] = {
		"SELECT " ROW_COLUMNS
		"FROM workload.workloads w WHERE w.workload_id = $1 AND " MAY_TOUCH("w")
		" FOR NO KEY UPDATE OF w",
	3, {TEXTOID, BOOLOID, NAMEOID}},
	/* a batch's rows, locked in workload_id order (byte order, as the C sorts them) */
	[P_LOCK_MANY] = {
		"SELECT " ROW_COLUMNS ", w.workload_id "
		"FROM workload.workloads w WHERE w.workload_id = ANY($1) AND " MAY_TOUCH("w")
		" ORDER BY w.workload_id COLLATE \"C\" FOR NO KEY UPDATE OF w",
	3, {TEXTARRAYOID, BOOLOID, NAMEOID}},
	[P_SAVE] = {
		"UPDATE workload.workloads SET state = $2, updated_at = $3, state_entered_at = $4, "
		"  next_attempt_at = $5, attempt_count = $6, retry_count = $7, fencing_token = $8, "
		"  checkpoint_sequence = $9, claim_id = $10, worker_id = $11, lease_expires_at = $12, "
		"  last_heartbeat_at = $13, "
		"  last_failure = CASE WHEN $14 THEN $15 ELSE last_failure END, "
		"  progress = CASE WHEN $16 THEN $17 ELSE progress END, "
		"  deadline_at = $18, wait_count = $19 "
		"WHERE workload_id = $1",
	19, {TEXTOID, ST, TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID,
		INT4OID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, BOOLOID, JSONBOID, BOOLOID,
	JSONBOID, TIMESTAMPTZOID, INT4OID}},
	[P_EVENT] = {
		"INSERT INTO workload.events (workload_id, tenant_id, application_id, event_type, "
		"  from_state, to_state, actor, at, db_role, evidence) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
	10, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, ST, ST, TEXTOID, TIMESTAMPTZOID, NAMEOID, JSONBOID}},
	/*
	 * P_SAVE and P_EVENT for n locked rows moving to one state, in one
	 * statement: the same columns as arrays, one element per row; events
	 * in array order.  $20.. are the event's: from states, to state, event
	 * type, actor, db role, evidence.
	 */
	[P_SAVE_MANY] = {
		"WITH x AS (SELECT * FROM unnest($1, $2, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
		"  $14, $15, $16, $17, $18, $19, $20, $25) WITH ORDINALITY "
		"  AS x(workload_id, state, state_entered_at, next_attempt_at, attempt_count, "
		"    retry_count, fencing_token, checkpoint_sequence, claim_id, worker_id, "
		"    lease_expires_at, last_heartbeat_at, failure_changed, last_failure, "
		"    progress_changed, progress, deadline_at, wait_count, from_state, evidence, n)), "
		"upd AS (UPDATE workload.workloads w SET state = x.state, updated_at = $3, "
		"  state_entered_at = x.state_entered_at, next_attempt_at = x.next_attempt_at, "
		"  attempt_count = x.attempt_count, retry_count = x.retry_count, "
		"  fencing_token = x.fencing_token, checkpoint_sequence = x.checkpoint_sequence, "
		"  claim_id = x.claim_id, worker_id = x.worker_id, lease_expires_at = x.lease_expires_at, "
		"  last_heartbeat_at = x.last_heartbeat_at, "
		"  last_failure = CASE WHEN x.failure_changed THEN x.last_failure ELSE w.last_failure END, "
		"  progress = CASE WHEN x.progress_changed THEN x.progress ELSE w.progress END, "
		"  deadline_at = x.deadline_at, wait_count = x.wait_count "
		"  FROM x WHERE w.workload_id = ANY($1) AND w.workload_id = x.workload_id "
		"  RETURNING w.workload_id, w.tenant_id, w.application_id), "
		"ev AS (INSERT INTO workload.events (workload_id, tenant_id, application_id, event_type, "
		"  from_state, to_state, actor, at, db_role, evidence) "
		"  SELECT x.workload_id, u.tenant_id, u.application_id, $22, x.from_state, $21, $23, $3, "
		"    $24, x.evidence FROM x JOIN upd u ON u.workload_id = x.workload_id ORDER BY x.n) "
		"SELECT count(*) FROM upd",
	25, {TEXTARRAYOID, STA, TIMESTAMPTZOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID, INT4ARRAYOID,
		INT4ARRAYOID, INT8ARRAYOID, INT4ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, BOOLARRAYOID, JSONBARRAYOID, BOOLARRAYOID, JSONBARRAYOID,
	TIMESTAMPTZARRAYOID, INT4ARRAYOID, STA, ST, TEXTOID, TEXTOID, NAMEOID, JSONBARRAYOID}},
	[P_IDEM] = {
		"SELECT s.workload_id, s.input_hash, s.definition_revision FROM workload.specs s "
		"WHERE s.tenant_id = $1 AND s.application_id = $2 AND s.idempotency_key = $3",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_SPEC_PUT] = {
		"INSERT INTO workload.specs (workload_id, tenant_id, application_id, idempotency_key, "
		"  environment, definition_id, definition_revision, trigger, input, input_hash, "
		"  requested_by, authorization_snapshot, connection_scopes, max_attempts, "
		"  initial_delay_ms, max_delay_ms, backoff, retry_on, timeouts, dependencies, "
		"  completion_criteria, governing_snapshots, contract_version, created_by, run_authority) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
		"  $18, $19, $20, $21, $22, $23, $24, $25) ON CONFLICT DO NOTHING",
	25, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID,
		TEXTOID, JSONBOID, JSONBOID, TEXTARRAYOID, INT4OID, INT8OID, INT8OID, TEXTOID,
	TEXTARRAYOID, JSONBOID, JSONBOID, JSONBOID, JSONBOID, INT4OID, NAMEOID, JSONBOID}},
	[P_ROW_PUT] = {
		"INSERT INTO workload.workloads (workload_id, tenant_id, application_id, state, priority, "
		"  capability_snapshot, has_dependencies, created_at, updated_at, state_entered_at, "
		"  next_attempt_at, attempt_count, retry_count, fencing_token, checkpoint_sequence, "
		"  " TIMEOUT_NAMES "wait_count, has_criteria) "
		"VALUES ($1, $2, $3, 'CREATED', $4, $5, $6, $7, $7, $7, $7, 0, 0, 0, 0, "
		"  $8, $9, $10, $11, $12, 0, $13)",
	13, {TEXTOID, TEXTOID, TEXTOID, INT4OID, TEXTARRAYOID, BOOLOID, TIMESTAMPTZOID,
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, BOOLOID}},
	[P_DEP_STATE] = {
		"SELECT w.state::text FROM workload.workloads w "
		"WHERE w.workload_id = $1 AND w.tenant_id = $2 AND w.application_id = $3 FOR KEY SHARE",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_DEP_PUT] = {
		"INSERT INTO workload.dependencies (workload_id, depends_on, required_state) "
		"VALUES ($1, $2, $3)",
	3, {TEXTOID, TEXTOID, ST}},
	[P_DOC] = {
		"SELECT jsonb_build_object(" DOC_FIELDS ")" FROM_DOC "WHERE w.workload_id = $1 AND "
		MAY_TOUCH("w"),
	3, {TEXTOID, BOOLOID, NAMEOID}},
	[P_DOC_FULL] = {
		"SELECT jsonb_build_object(" DOC_FIELDS ", "
		"'attempts', COALESCE((SELECT jsonb_agg(jsonb_build_object('attempt_id', a.attempt_id, "
		"  'attempt', a.attempt_number, 'claim_id', a.claim_id, 'worker_id', a.worker_id, "
		"  'fencing_token', a.fencing_token, 'claimed_at', a.claimed_at, "
		"  'started_at', a.started_at, 'finished_at', a.finished_at, 'outcome', a.outcome, "
		"  'failure_kind', a.failure_kind, 'error', a.error) ORDER BY a.attempt_number) "
		"  FROM workload.attempts a WHERE a.workload_id = w.workload_id), '[]'), "
		"'checkpoints', COALESCE((SELECT jsonb_agg(" CHECKPOINT_DOC " || jsonb_build_object('state', c.state) "
		"  ORDER BY c.sequence) FROM workload.checkpoints c WHERE c.workload_id = w.workload_id), '[]'), "
		"'result', (SELECT " RESULT_DOC " FROM workload.results r WHERE r.workload_id = w.workload_id), "
		"'events', COALESCE((SELECT jsonb_agg(jsonb_build_object('sequence', e.sequence, "
		"  'event_type', e.event_type, 'from_state', e.from_state, 'to_state', e.to_state, "
		"  'actor', e.actor, 'at', e.at, 'db_role', e.db_role, 'evidence', e.evidence) "
		"  ORDER BY e.sequence) FROM workload.events e WHERE e.workload_id = w.workload_id), '[]'), "
		"'waits', COALESCE((SELECT jsonb_agg(" WAIT_DOC " ORDER BY x.wait_number) "
		"  FROM workload.waits x WHERE x.workload_id = w.workload_id), '[]'), "
		"'compensations', COALESCE((SELECT jsonb_agg(" COMP_DOC " ORDER BY p.step) "
		"  FROM workload.compensations p WHERE p.workload_id = w.workload_id), '[]'))"
		FROM_DOC "WHERE w.workload_id = $1 AND " MAY_TOUCH("w"),
	3, {TEXTOID, BOOLOID, NAMEOID}},
	[P_LIST] = {
		"SELECT jsonb_build_object(" DOC_FIELDS ")" FROM_DOC
		"WHERE w.tenant_id = $1 AND w.application_id = $2 AND ($3 IS NULL OR w.state = $3) "
		"ORDER BY w.priority DESC, w.created_at, w.seq LIMIT $4",
	4, {TEXTOID, TEXTOID, ST, INT4OID}},
	[P_HISTORY] = {
		"SELECT e.sequence, e.event_type, e.from_state, e.to_state, e.actor, e.at, e.evidence "
		"FROM workload.events e WHERE e.workload_id = $1 ORDER BY e.sequence",
	1, {TEXTOID}},
	/*
	 * Unmet dependencies are looked up per candidate that has any, as a
	 * scalar subquery: NOT EXISTS would let the planner hash the whole
	 * dependencies table once per claim.
	 */
	[P_CLAIM_MANY] = {
		"WITH picked AS (SELECT c.workload_id FROM workload.workloads c "
		"  WHERE c.tenant_id = $1 AND c.application_id = $2 AND c.claimable "
		"    AND c.next_attempt_at <= $3 AND c.capability_snapshot <@ $4 "
		"    AND (NOT c.has_dependencies OR (SELECT 1 FROM workload.dependencies d "
		"      WHERE d.workload_id = c.workload_id AND " DEP_STATE("d.depends_on") " <> d.required_state "
		"      LIMIT 1) IS NULL) "
		"  ORDER BY c.priority DESC, c.created_at, c.seq LIMIT $5 "
		"  FOR NO KEY UPDATE OF c SKIP LOCKED)" CLAIM_UPDATE,
	CLAIM_ARGS},
	[P_CLAIM_ONE] = {
		"WITH picked AS (SELECT $8 AS workload_id)" CLAIM_UPDATE,
	CLAIM_ARGS},
	[P_DEPS_UNMET] = {
		"SELECT count(*) FROM workload.dependencies d "
		"WHERE d.workload_id = $1 AND " DEP_STATE("d.depends_on") " <> d.required_state",
	1, {TEXTOID}},
	[P_ATTEMPT_START] = {
		"UPDATE workload.attempts SET started_at = $3 "
		"WHERE workload_id = $1 AND attempt_number = $2",
	3, {TEXTOID, INT4OID, TIMESTAMPTZOID}},
	[P_ATTEMPT_CLOSE] = {
		"UPDATE workload.attempts SET finished_at = $3, outcome = $4, failure_kind = $5, error = $6 "
		"WHERE workload_id = $1 AND attempt_number = $2 AND finished_at IS NULL",
	6, {TEXTOID, INT4OID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID}},
	/* P_ATTEMPT_CLOSE for the current attempts of n workloads, one outcome */
	[P_ATTEMPT_CLOSE_MANY] = {
		"UPDATE workload.attempts a SET finished_at = $3, outcome = $4, failure_kind = NULL, "
		"  error = NULL FROM unnest($1, $2) x(workload_id, attempt_number) "
		"WHERE a.workload_id = ANY($1) AND a.workload_id = x.workload_id "
		"  AND a.attempt_number = x.attempt_number AND a.finished_at IS NULL",
	4, {TEXTARRAYOID, INT4ARRAYOID, TIMESTAMPTZOID, TEXTOID}},
	[P_RESULT_GET_MANY] = {
		"SELECT r.workload_id, r.claim_id, r.worker_id, r.fencing_token, " RESULT_DOC
		", r.result_id FROM workload.results r WHERE r.result_id = ANY($1)",
	1, {TEXTARRAYOID}},
	/* P_RESULT_PUT for n results of one worker; artifacts come as json arrays of strings */
	[P_RESULT_PUT_MANY] = {
		"INSERT INTO workload.results AS r (result_id, workload_id, output, output_hash, artifacts, "
		"  schema_version, claim_id, worker_id, fencing_token, attempt_number, created_at) "
		"SELECT x.result_id, x.workload_id, x.output, x.output_hash, "
		"  ARRAY(SELECT json_array_elements_text(x.artifacts)), x.schema_version, x.claim_id, "
		"  $10, x.fencing_token, x.attempt_number, $11 "
		"FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9) "
		"  x(result_id, workload_id, output, output_hash, artifacts, schema_version, claim_id, "
		"    fencing_token, attempt_number) "
		"ON CONFLICT DO NOTHING RETURNING r.workload_id, " RESULT_DOC,
	11, {TEXTARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID, JSONARRAYOID, INT4ARRAYOID,
	TEXTARRAYOID, INT8ARRAYOID, INT4ARRAYOID, TEXTOID, TIMESTAMPTZOID}},
	[P_RESULT_GET] = {
		"SELECT r.workload_id, r.claim_id, r.worker_id, r.fencing_token, " RESULT_DOC
		" FROM workload.results r WHERE r.result_id = $1",
	1, {TEXTOID}},
	[P_RESULT_PUT] = {
		"INSERT INTO workload.results AS r (result_id, workload_id, output, output_hash, artifacts, "
		"  schema_version, claim_id, worker_id, fencing_token, attempt_number, created_at) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING "
		"RETURNING " RESULT_DOC,
	11, {TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTARRAYOID, INT4OID, TEXTOID, TEXTOID, INT8OID,
	INT4OID, TIMESTAMPTZOID}},
	[P_CHECKPOINT_PUT] = {
		"INSERT INTO workload.checkpoints AS c (workload_id, sequence, checkpoint_id, "
		"  attempt_number, fencing_token, state, state_hash, created_at, key_id, tag) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING " CHECKPOINT_DOC,
	10, {TEXTOID, INT4OID, TEXTOID, INT4OID, INT8OID, JSONBOID, TEXTOID, TIMESTAMPTZOID,
	TEXTOID, TEXTOID}},
	[P_POLICY] = {
		"SELECT s.max_attempts, s.initial_delay_ms, s.max_delay_ms, s.backoff, s.retry_on "
		"FROM workload.specs s WHERE s.workload_id = $1",
	1, {TEXTOID}},
	/* what the domain reads of a spec after create (store_parts.c: WlSpecRow) */
	[P_SPEC_READ] = {
		"SELECT s.authorization_snapshot, s.run_authority, s.connection_scopes, s.definition_id, "
		"  s.definition_revision, s.environment, s.governing_snapshots, s.completion_criteria, "
		"  (SELECT w.priority FROM workload.workloads w WHERE w.workload_id = $1) "
		"FROM workload.specs s WHERE s.workload_id = $1",
	1, {TEXTOID}},
	/*
	 * Expired leases the caller may touch (MAY_TOUCH: $2, $3), after the
	 * keyset ($5, $6) the pass has reached, so a pass never selects a row
	 * twice, whatever happened to it.
	 */
	[P_EXPIRED] = {
		"SELECT w.workload_id, w.lease_expires_at FROM workload.workloads w "
		"WHERE w.claim_id IS NOT NULL AND w.lease_expires_at <= $1 AND " MAY_TOUCH("w")
		"  AND (w.lease_expires_at, w.workload_id) > ($5, $6) "
		"ORDER BY w.lease_expires_at, w.workload_id LIMIT $4 FOR NO KEY UPDATE OF w SKIP LOCKED",
	6, {TIMESTAMPTZOID, BOOLOID, NAMEOID, INT4OID, TIMESTAMPTZOID, TEXTOID}},
	/* which of these workloads have a dependent that waits for another final state */
	[P_DEPENDED_ON] = {
		"SELECT DISTINCT d.depends_on FROM workload.dependencies d "
		"WHERE d.depends_on = ANY($1) AND d.required_state <> $2",
	2, {TEXTARRAYOID, ST}},
	[P_DEPENDENTS] = {
		"SELECT d.workload_id FROM workload.dependencies d "
		"WHERE d.depends_on = $1 AND d.required_state <> $2 ORDER BY d.workload_id",
	2, {TEXTOID, ST}},
	/*
	 * Retention: one bounded batch of finished workloads older than $1, with
	 * everything that hangs off them, skipping rows someone holds and
	 * workloads a not-yet-finished dependent still waits on.
	 */
	[P_PURGE] = {
		"WITH doomed AS (SELECT w.workload_id FROM workload.workloads w "
		"  WHERE w.finished_at IS NOT NULL "
		"    AND (w.state <> 'DEAD_LETTER' OR $3) AND w.finished_at < $1 "
		"    AND NOT EXISTS (SELECT 1 FROM workload.dependencies d "
		"      WHERE d.depends_on = w.workload_id "
		"        AND " DEP_STATE("d.workload_id") " NOT IN ('SUCCEEDED', 'CANCELLED')) "
		"  ORDER BY w.finished_at LIMIT $2 FOR UPDATE OF w SKIP LOCKED), "
		"ids AS (SELECT array_agg(workload_id) AS doomed_ids FROM doomed), "
		"ev AS (DELETE FROM workload.events e WHERE e.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"at AS (DELETE FROM workload.attempts a WHERE a.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"ck AS (DELETE FROM workload.checkpoints c WHERE c.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"rs AS (DELETE FROM workload.results r WHERE r.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"dp AS (DELETE FROM workload.dependencies d WHERE d.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"wt AS (DELETE FROM workload.waits x WHERE x.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"cp AS (DELETE FROM workload.compensations p WHERE p.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])), "
		"sp AS (DELETE FROM workload.specs s WHERE s.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])) "
		"DELETE FROM workload.workloads w WHERE w.workload_id = ANY ((SELECT doomed_ids FROM ids)::text[])",
	3, {TIMESTAMPTZOID, INT4OID, BOOLOID}},
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
	[P_REVOKED] = {
		"SELECT 1 FROM workload.revoked_grants WHERE grant_id = $1",
	1, {TEXTOID}},
	[P_REVOKE_PUT] = {
		"INSERT INTO workload.revoked_grants (grant_id, revoked_at, revoked_by) VALUES ($1, $2, $3) "
		"ON CONFLICT DO NOTHING",
	3, {TEXTOID, TIMESTAMPTZOID, NAMEOID}},
	/* A role is a member through itself or any role it belongs to. */
	[P_MEMBER] = {
		"SELECT 1 FROM workload.tenant_members m JOIN pg_catalog.pg_roles r ON r.rolname = m.role "
		"WHERE m.tenant_id = $2 AND m.application_id = $3 AND pg_catalog.pg_has_role($1, r.oid, 'MEMBER') "
		"LIMIT 1",
	3, {NAMEOID, TEXTOID, TEXTOID}},
	[P_MEMBER_PUT] = {
		"INSERT INTO workload.tenant_members (role, tenant_id, application_id) VALUES ($1, $2, $3) "
		"ON CONFLICT DO NOTHING",
	3, {NAMEOID, TEXTOID, TEXTOID}},
	[P_MEMBER_DEL] = {
		"DELETE FROM workload.tenant_members WHERE role = $1 AND tenant_id = $2 AND application_id = $3",
	3, {NAMEOID, TEXTOID, TEXTOID}},

	/* ---- maintenance (recovery.c's passes) ---- */
	[P_TICK_LOCK] = {
		"SELECT pg_try_advisory_xact_lock(" WL_TICK_LOCK_KEY ")",
	0, {InvalidOid}},
	/*
	 * Rows whose timeout or wait deadline has come, through
	 * workloads_deadline_idx, after the keyset ($3, $4) the pass has reached.
	 */
	[P_DEADLINE_DUE] = {
		"SELECT w.workload_id, w.deadline_at FROM workload.workloads w WHERE w.deadline_at <= $1 "
		"  AND (w.deadline_at, w.workload_id) > ($3, $4) "
		"ORDER BY w.deadline_at, w.workload_id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED",
	4, {TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID}},
	/*
	 * Heartbeat timeouts: only rows holding a claim (workloads_claimed_idx);
	 * silence counts from the last heartbeat, else from the claim.
	 */
	[P_HEARTBEAT_DUE] = {
		"SELECT w.workload_id, $1::timestamptz FROM workload.workloads w "
		"WHERE w.claim_id IS NOT NULL AND w.heartbeat_ms IS NOT NULL "
		"  AND w.state <> 'CANCELLATION_REQUESTED' AND w.workload_id > $4 "
		"  AND COALESCE(w.last_heartbeat_at, (SELECT a.claimed_at FROM workload.attempts a "
		"      WHERE a.workload_id = w.workload_id AND a.attempt_number = w.attempt_count)) "
		"      + w.heartbeat_ms * interval '1 millisecond' <= $1 "
		"ORDER BY w.workload_id LIMIT $2 FOR NO KEY UPDATE OF w SKIP LOCKED",
	4, {TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID}},

	/* ---- orchestration (checkpoints, waits, compensations) ---- */
	[P_CHECKPOINT_LAST] = {
		"SELECT c.sequence, c.checkpoint_id, c.state, c.state_hash, c.key_id, c.tag, "
		"  " CHECKPOINT_DOC " || jsonb_build_object('state', c.state) "
		"FROM workload.checkpoints c WHERE c.workload_id = $1 ORDER BY c.sequence DESC LIMIT 1",
	1, {TEXTOID}},
	[P_WAIT_PUT] = {
		"INSERT INTO workload.waits (workload_id, wait_number, tenant_id, application_id, kind, "
		"  wake_key, deadline, attempt_number, fencing_token, created_at) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
	10, {TEXTOID, INT4OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID,
	TIMESTAMPTZOID}},
	[P_WAIT_OPEN] = {
		"SELECT x.wait_number, x.kind, x.wake_key, x.deadline FROM workload.waits x "
		"WHERE x.workload_id = $1 AND x.resolved_at IS NULL ORDER BY x.wait_number DESC LIMIT 1",
	1, {TEXTOID}},
	[P_WAIT_RESOLVE] = {
		"UPDATE workload.waits SET resolved_at = $3, outcome = $4, payload = $5, approved = $6, "
		"  approver = $7, note = $8 "
		"WHERE workload_id = $1 AND wait_number = $2 AND resolved_at IS NULL",
	8, {TEXTOID, INT4OID, TIMESTAMPTZOID, TEXTOID, JSONBOID, BOOLOID, TEXTOID, TEXTOID}},
	[P_WAIT_CLOSE] = {
		"UPDATE workload.waits SET resolved_at = $2, outcome = $3 "
		"WHERE workload_id = $1 AND resolved_at IS NULL",
	3, {TEXTOID, TIMESTAMPTZOID, TEXTOID}},
	[P_WAIT_LAST] = {
		"SELECT " WAIT_DOC " FROM workload.waits x "
		"WHERE x.workload_id = $1 AND x.resolved_at IS NOT NULL "
		"ORDER BY x.wait_number DESC LIMIT 1",
	1, {TEXTOID}},
	[P_WAIT_KEYED] = {
		"SELECT DISTINCT x.workload_id FROM workload.waits x "
		"WHERE x.tenant_id = $1 AND x.application_id = $2 AND x.wake_key = $3 "
		"  AND x.resolved_at IS NULL AND x.kind = 'event' AND x.deadline > $4 "
		"ORDER BY x.workload_id",
	4, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID}},
	[P_COMP_PUT] = {
		"INSERT INTO workload.compensations AS p (workload_id, step, capability_id, input, "
		"  input_hash, authorization_digest, attempt_number, fencing_token, created_at) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING " COMP_DOC,
	9, {TEXTOID, INT4OID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, INT4OID, INT8OID, TIMESTAMPTZOID}},
	[P_COMP_LIST] = {
		"SELECT p.step, p.capability_id, p.input, p.authorization_digest, p.compensation_id "
		"FROM workload.compensations p WHERE p.workload_id = $1 ORDER BY p.step",
	1, {TEXTOID}},
	[P_COMP_BIND] = {
		"UPDATE workload.compensations SET compensation_id = $3, compensated_at = $4, "
		"  compensated_by = $5 WHERE workload_id = $1 AND step = $2 AND compensation_id IS NULL",
	5, {TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TEXTOID}},
	/*
	 * What an operator looks at first, for one tenant and application: one
	 * pass over its rows (workloads_tenant_idx).  $4 is a NULL of the state
	 * type, so enum_range lists every state without naming the type.
	 */
	[P_STATS] = {
		"WITH w AS MATERIALIZED (SELECT x.state, x.next_attempt_at, x.state_entered_at, x.last_failure "
		"  FROM workload.workloads x WHERE x.tenant_id = $1 AND x.application_id = $2), "
		"c AS (SELECT w.state, count(*) AS n FROM w GROUP BY w.state) "
		"SELECT jsonb_build_object('tenant_id', $1::text, 'application_id', $2::text, 'at', $3, "
		"  'states', (SELECT jsonb_object_agg(s::text, coalesce(c.n, 0)) "
		"    FROM unnest(enum_range($4)) s LEFT JOIN c ON c.state = s), "
		"  'total', (SELECT count(*) FROM w), "
		"  'ready_due', (SELECT count(*) FROM w WHERE w.state = 'READY' AND w.next_attempt_at <= $3), "
		"  'ready_delayed', (SELECT count(*) FROM w WHERE w.state = 'READY' AND w.next_attempt_at > $3), "
		"  'oldest_due_ready_age_ms', (SELECT floor(extract(epoch FROM $3 - min(w.next_attempt_at)) * 1000)::bigint "
		"    FROM w WHERE w.state = 'READY' AND w.next_attempt_at <= $3), "
		"  'held', (SELECT count(*) FROM w WHERE w.state IN ('CLAIMED', 'RUNNING', 'CHECKPOINTED', 'CANCELLATION_REQUESTED')), "
		"  'dead_letters', (SELECT count(*) FROM w WHERE w.state = 'DEAD_LETTER'), "
		"  'completed_last_minute', (SELECT count(*) FROM w WHERE w.state = 'SUCCEEDED' "
		"    AND w.state_entered_at > $3 - interval '1 minute'), "
		"  'failed_last_minute', (SELECT count(*) FROM w WHERE w.last_failure IS NOT NULL "
		"    AND (w.last_failure ->> 'at')::timestamptz > $3 - interval '1 minute'))",
	4, {TEXTOID, TEXTOID, TIMESTAMPTZOID, ST}},
};

