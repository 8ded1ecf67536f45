\echo Use "CREATE EXTENSION workload CASCADE" to load this file. \quit

-- workload 1.0: the durable state machine, its tables and its API.
-- Internal tables live in schema workload; the API and workload_state live in
-- @extschema@.  Every table is written by the C module only (see the raw-write
-- triggers at the end); column defaults never read the clock.

CREATE SCHEMA workload;

CREATE TYPE @extschema@.workload_state AS ENUM (
    'CREATED', 'READY', 'CLAIMED', 'RUNNING', 'CHECKPOINTED', 'RECOVERING',
    'CANCELLATION_REQUESTED', 'WAITING', 'SUCCEEDED', 'FAILED', 'CANCELLED',
    'TIMED_OUT', 'DEAD_LETTER');

-- What was asked: written once at create, never updated.
CREATE TABLE workload.specs (
    workload_id          text PRIMARY KEY,
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    idempotency_key      text NOT NULL,
    environment          text NOT NULL,
    definition_id        text NOT NULL,
    definition_revision  text NOT NULL,
    trigger              text NOT NULL,
    input                jsonb NOT NULL,
    input_hash           text NOT NULL,
    requested_by         jsonb NOT NULL,
    authorization_snapshot jsonb NOT NULL,
    connection_scopes    text[] NOT NULL,
    max_attempts         integer NOT NULL CHECK (max_attempts OPERATOR(pg_catalog.>=) 1),
    initial_delay_ms     bigint NOT NULL CHECK (initial_delay_ms OPERATOR(pg_catalog.>=) 0),
    max_delay_ms         bigint NOT NULL CHECK (max_delay_ms OPERATOR(pg_catalog.>=) 0),
    backoff              text NOT NULL CHECK (backoff OPERATOR(pg_catalog.=) ANY (ARRAY['exponential', 'fixed'])),
    retry_on             text[] NOT NULL,
    timeouts             jsonb NOT NULL,
    dependencies         jsonb NOT NULL,
    completion_criteria  jsonb NOT NULL,
    governing_snapshots  jsonb,
    contract_version     integer NOT NULL,
    created_by           name NOT NULL,
    run_authority        jsonb NOT NULL,
    CONSTRAINT specs_idempotency_key UNIQUE (tenant_id, application_id, idempotency_key)
);

-- Where it is: the narrow row that claim, heartbeat and complete update.
CREATE TABLE workload.workloads (
    workload_id          text PRIMARY KEY,
    seq                  bigint GENERATED ALWAYS AS IDENTITY,
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    state                @extschema@.workload_state NOT NULL,
    priority             integer NOT NULL,
    capability_snapshot  text[] NOT NULL,
    has_dependencies     boolean NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    state_entered_at     timestamptz NOT NULL,
    next_attempt_at      timestamptz NOT NULL,
    attempt_count        integer NOT NULL,
    retry_count          integer NOT NULL,
    fencing_token        bigint NOT NULL,
    checkpoint_sequence  integer NOT NULL,
    claim_id             text,
    worker_id            text,
    lease_expires_at     timestamptz,
    last_heartbeat_at    timestamptz,
    last_failure         jsonb,
    progress             jsonb,
    -- the spec's timeouts (NULL = none), kept here so the tick needs no join
    queue_ms             bigint,
    claim_ms             bigint,
    execution_ms         bigint,
    heartbeat_ms         bigint,
    overall_ms           bigint,
    -- the next moment the tick must look at this row (a timeout or a wait's
    -- deadline); written on state changes only, never by a heartbeat
    deadline_at          timestamptz,
    wait_count           integer NOT NULL,  -- attempts that ended in a wait
    has_criteria         boolean NOT NULL,  -- completion_criteria is not empty
    -- What the partial indexes test, derived from state by PostgreSQL itself.
    -- No index names state, so a change between two states with the same
    -- claimable and finished_at (CLAIMED -> RUNNING -> CHECKPOINTED) is a HOT
    -- update that touches no index.
    claimable            boolean GENERATED ALWAYS AS
        (state OPERATOR(pg_catalog.=) 'READY'::@extschema@.workload_state) STORED,
    finished_at          timestamptz GENERATED ALWAYS AS
        (CASE WHEN state OPERATOR(pg_catalog.=) ANY
            (ARRAY['SUCCEEDED', 'CANCELLED', 'DEAD_LETTER']::@extschema@.workload_state[])
         THEN state_entered_at END) STORED,
    CONSTRAINT workloads_claim_complete_check CHECK
        ((claim_id IS NULL) OPERATOR(pg_catalog.=) (worker_id IS NULL) AND
         (claim_id IS NULL) OPERATOR(pg_catalog.=) (lease_expires_at IS NULL))
) WITH (fillfactor = 70);

-- The claim query reads exactly this: due READY rows of one tenant and
-- application, best first.  Finished rows are not in it.
CREATE INDEX workloads_claim_idx ON workload.workloads
    (tenant_id, application_id, priority DESC, created_at, seq)
    WHERE claimable;
-- Retention reads finished rows, oldest first.
-- Keyed on finished_at (when it reached its final state): an index on
-- updated_at would make every heartbeat a non-HOT update.
CREATE INDEX workloads_finished_idx ON workload.workloads (finished_at)
    WHERE finished_at IS NOT NULL;
-- Lease recovery reads only rows that hold a claim.
CREATE INDEX workloads_claimed_idx ON workload.workloads (workload_id)
    WHERE claim_id IS NOT NULL;
-- The tick reads rows whose deadline has come, soonest first.  Heartbeats
-- never change deadline_at, so they stay HOT updates.
CREATE INDEX workloads_deadline_idx ON workload.workloads (deadline_at)
    WHERE deadline_at IS NOT NULL;
-- workload_list: one tenant and application, best first.
CREATE INDEX workloads_tenant_idx ON workload.workloads
    (tenant_id, application_id, priority DESC, created_at, seq);

CREATE TABLE workload.attempts (
    workload_id          text NOT NULL,
    attempt_number       integer NOT NULL,
    attempt_id           text NOT NULL,
    claim_id             text NOT NULL,
    worker_id            text NOT NULL,
    fencing_token        bigint NOT NULL,
    claimed_at           timestamptz NOT NULL,
    lease_expires_at     timestamptz NOT NULL,
    started_at           timestamptz,
    finished_at          timestamptz,
    outcome              text,
    failure_kind         text,
    error                text,
    CONSTRAINT attempts_pkey PRIMARY KEY (workload_id, attempt_number)
);

CREATE TABLE workload.checkpoints (
    workload_id          text NOT NULL,
    sequence             integer NOT NULL,
    checkpoint_id        text NOT NULL,
    attempt_number       integer NOT NULL,
    fencing_token        bigint NOT NULL,
    state                jsonb NOT NULL,
    state_hash           text NOT NULL,
    created_at           timestamptz NOT NULL,
    -- HMAC of checkpoint_id:workload_id:sequence:state_hash under key_id
    key_id               text NOT NULL,
    tag                  text NOT NULL,
    CONSTRAINT checkpoints_pkey PRIMARY KEY (workload_id, sequence)
);

CREATE TABLE workload.results (
    result_id            text PRIMARY KEY,
    workload_id          text NOT NULL,
    output               jsonb NOT NULL,
    output_hash          text NOT NULL,
    artifacts            text[] NOT NULL,
    schema_version       integer NOT NULL,
    claim_id             text NOT NULL,
    worker_id            text NOT NULL,
    fencing_token        bigint NOT NULL,
    attempt_number       integer NOT NULL,
    created_at           timestamptz NOT NULL,
    CONSTRAINT results_workload_key UNIQUE (workload_id)
);

CREATE TABLE workload.events (
    sequence             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workload_id          text NOT NULL,
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    event_type           text NOT NULL,
    from_state           @extschema@.workload_state,
    to_state             @extschema@.workload_state NOT NULL,
    actor                text NOT NULL,
    at                   timestamptz NOT NULL,
    db_role              name NOT NULL,
    evidence             jsonb NOT NULL
);
CREATE INDEX events_workload_idx ON workload.events (workload_id, sequence);

CREATE TABLE workload.dependencies (
    workload_id          text NOT NULL,
    depends_on           text NOT NULL,
    required_state       @extschema@.workload_state NOT NULL,
    CONSTRAINT dependencies_pkey PRIMARY KEY (workload_id, depends_on)
);
CREATE INDEX dependencies_depends_on_idx ON workload.dependencies (depends_on);

-- Durable waits (SPEC section 7): one row per wait of a workload.  Open
-- while resolved_at is NULL; the wake (signal payload, approval decision)
-- is kept here for workload_resume.
CREATE TABLE workload.waits (
    workload_id          text NOT NULL,
    wait_number          integer NOT NULL,
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    kind                 text NOT NULL CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['event', 'schedule', 'human_approval'])),
    wake_key             text,
    deadline             timestamptz NOT NULL,
    attempt_number       integer NOT NULL,
    fencing_token        bigint NOT NULL,
    created_at           timestamptz NOT NULL,
    resolved_at          timestamptz,
    outcome              text,
    payload              jsonb,
    approved             boolean,
    approver             text,
    note                 text,
    CONSTRAINT waits_pkey PRIMARY KEY (workload_id, wait_number)
);
-- workload_signal finds open event waits of one tenant and application by key.
CREATE INDEX waits_open_key_idx ON workload.waits (tenant_id, application_id, wake_key)
    WHERE resolved_at IS NULL;

-- Compensation steps (sagas, SPEC section 7), bound to the authorization
-- digest of their workload; compensation_id is the workload that undoes it.
CREATE TABLE workload.compensations (
    workload_id          text NOT NULL,
    step                 integer NOT NULL,
    capability_id        text NOT NULL,
    input                jsonb NOT NULL,
    input_hash           text NOT NULL,
    authorization_digest text NOT NULL,
    attempt_number       integer NOT NULL,
    fencing_token        bigint NOT NULL,
    created_at           timestamptz NOT NULL,
    compensation_id      text,
    compensated_at       timestamptz,
    compensated_by       text,
    CONSTRAINT compensations_pkey PRIMARY KEY (workload_id, step)
);

-- Server-held HMAC keys.  Never readable by any role but the owner.
CREATE TABLE workload.signing_keys (
    key_id               text PRIMARY KEY,
    secret               bytea NOT NULL CHECK (pg_catalog.length(secret) OPERATOR(pg_catalog.=) 32),
    created_at           timestamptz NOT NULL,
    retired_at           timestamptz
);

CREATE TABLE workload.revoked_grants (
    grant_id             text PRIMARY KEY,
    revoked_at           timestamptz NOT NULL,
    revoked_by           name NOT NULL
);

-- Which roles act in which tenant and application (roles that are neither
-- superuser nor workload_admin act nowhere else).
CREATE TABLE workload.tenant_members (
    role                 name NOT NULL,
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    CONSTRAINT tenant_members_pkey PRIMARY KEY (role, tenant_id, application_id)
);

-- Raw writes are refused: only the C module, while it executes its own
-- statements, may write.  ENABLE ALWAYS keeps the trigger on under
-- session_replication_role = replica.
CREATE FUNCTION workload.refuse_raw_write() RETURNS trigger
    LANGUAGE C AS 'MODULE_PATHNAME', 'workload_refuse_raw_write';

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['specs', 'workloads', 'attempts', 'checkpoints',
                             'results', 'events', 'dependencies', 'signing_keys',
                             'revoked_grants', 'tenant_members', 'waits', 'compensations']
    LOOP
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_write_trg');
        EXECUTE pg_catalog.format('REVOKE ALL ON workload.%I FROM PUBLIC', t);
    END LOOP;
END
$$;

-- Roles are cluster-wide and outlive DROP EXTENSION.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'workload_client') THEN
        CREATE ROLE workload_client NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'workload_worker') THEN
        CREATE ROLE workload_worker NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'workload_admin') THEN
        CREATE ROLE workload_admin NOLOGIN;
    END IF;
END
$$;
GRANT workload_client, workload_worker TO workload_admin;
GRANT USAGE ON SCHEMA workload TO workload_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA workload TO workload_admin;
REVOKE ALL ON workload.signing_keys FROM workload_admin;

-- Internal helpers (schema workload, not part of the API).
CREATE FUNCTION workload.claim_id_for(workload_id text, fencing_token bigint, worker_id text)
    RETURNS text LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_claim_id_for';
REVOKE ALL ON FUNCTION workload.claim_id_for(text, bigint, text) FROM PUBLIC;

CREATE FUNCTION workload.claim_deadline(created_at timestamptz, claimed_at timestamptz,
        claim_ms bigint, execution_ms bigint, overall_ms bigint, start boolean)
    RETURNS timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_claim_deadline';
COMMENT ON FUNCTION workload.claim_deadline(timestamptz, timestamptz, bigint, bigint, bigint, boolean) IS 'the deadline rule for a claimed (or claimed and started) row, callable from the claim statement';
REVOKE ALL ON FUNCTION workload.claim_deadline(timestamptz, timestamptz, bigint, bigint, bigint, boolean) FROM PUBLIC;

CREATE FUNCTION workload.attempt_id_for(workload_id text, attempt integer)
    RETURNS text LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_attempt_id_for';
COMMENT ON FUNCTION workload.attempt_id_for(text, integer) IS 'the attempt id rule, callable from the claim statement';
REVOKE ALL ON FUNCTION workload.attempt_id_for(text, integer) FROM PUBLIC;

CREATE FUNCTION workload.state_names() RETURNS SETOF text
    LANGUAGE C IMMUTABLE AS 'MODULE_PATHNAME', 'workload_state_names';
COMMENT ON FUNCTION workload.state_names() IS 'the C state-name table, to compare with the enum';

-- The API.  No function is STRICT: a NULL argument is WORKLOAD_INVALID.
CREATE FUNCTION @extschema@.workload_create(spec jsonb)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_create';
COMMENT ON FUNCTION @extschema@.workload_create(jsonb) IS 'create a workload (idempotent on tenant, application and idempotency_key)';

CREATE FUNCTION @extschema@.workload_get(workload_id text)
    RETURNS jsonb LANGUAGE C STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_get';
COMMENT ON FUNCTION @extschema@.workload_get(text) IS 'the whole workload document with attempts, checkpoints, result and events';

CREATE FUNCTION @extschema@.workload_list(tenant_id text, application_id text,
        state @extschema@.workload_state DEFAULT NULL, lim integer DEFAULT 100)
    RETURNS SETOF jsonb LANGUAGE C STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_list';
COMMENT ON FUNCTION @extschema@.workload_list(text, text, @extschema@.workload_state, integer) IS 'workload documents of one tenant and application, priority first, then oldest';

CREATE FUNCTION @extschema@.workload_stats(tenant_id text, application_id text)
    RETURNS jsonb LANGUAGE C STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_stats';
COMMENT ON FUNCTION @extschema@.workload_stats(text, text) IS 'counts per state, oldest due READY age, dead letters, throughput over the last minute';

CREATE FUNCTION @extschema@.workload_history(workload_id text)
    RETURNS TABLE(sequence bigint, event_type text, from_state @extschema@.workload_state,
                  to_state @extschema@.workload_state, actor text, at timestamptz, evidence jsonb)
    LANGUAGE C STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_history';
COMMENT ON FUNCTION @extschema@.workload_history(text) IS 'the event history of one workload, in order';

CREATE FUNCTION @extschema@.workload_claim(worker_id text, capabilities text[],
        tenant_id text, application_id text, lease interval DEFAULT '30 seconds',
        max_items integer DEFAULT 1, start boolean DEFAULT false)
    RETURNS TABLE(workload_id text, claim_id text, fencing_token bigint,
                  lease_expires_at timestamptz, attempt integer, definition_id text,
                  definition_revision text, input jsonb, checkpoint_sequence integer)
    LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_claim';
COMMENT ON FUNCTION @extschema@.workload_claim(text, text[], text, text, interval, integer, boolean) IS 'claim up to max_items due READY workloads (FOR UPDATE SKIP LOCKED)';

CREATE FUNCTION @extschema@.workload_claim_id(id text, worker_id text, capabilities text[],
        lease interval DEFAULT '30 seconds')
    RETURNS TABLE(workload_id text, claim_id text, fencing_token bigint,
                  lease_expires_at timestamptz, attempt integer, definition_id text,
                  definition_revision text, input jsonb, checkpoint_sequence integer)
    LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_claim_id';
COMMENT ON FUNCTION @extschema@.workload_claim_id(text, text, text[], interval) IS 'claim one named workload';

CREATE FUNCTION @extschema@.workload_start(workload_id text, claim_id text, worker_id text, fencing_token bigint)
    RETURNS void LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_start';
COMMENT ON FUNCTION @extschema@.workload_start(text, text, text, bigint) IS 'move a claimed workload to RUNNING';

CREATE FUNCTION @extschema@.workload_heartbeat(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, extend interval, progress jsonb DEFAULT NULL)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_heartbeat';
COMMENT ON FUNCTION @extschema@.workload_heartbeat(text, text, text, bigint, interval, jsonb) IS 'extend the lease; answers cancellation_requested';

CREATE FUNCTION @extschema@.workload_checkpoint(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, state jsonb)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_checkpoint';
COMMENT ON FUNCTION @extschema@.workload_checkpoint(text, text, text, bigint, jsonb) IS 'append a checkpoint and move to CHECKPOINTED';

CREATE FUNCTION @extschema@.workload_complete(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, result_id text, output jsonb, artifacts text[] DEFAULT '{}',
        schema_version integer DEFAULT 1)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_complete';
COMMENT ON FUNCTION @extschema@.workload_complete(text, text, text, bigint, text, jsonb, text[], integer) IS 'store the result and move to SUCCEEDED (idempotent on result_id)';

CREATE FUNCTION @extschema@.workload_complete_many(worker_id text, items jsonb)
    RETURNS TABLE(workload_id text, outcome text, code text, result jsonb)
    LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_complete_many';
COMMENT ON FUNCTION @extschema@.workload_complete_many(text, jsonb) IS 'complete a batch in one transaction; each item succeeds or is refused on its own';

CREATE FUNCTION @extschema@.workload_fail(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, kind text, error text)
    RETURNS @extschema@.workload_state LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_fail';
COMMENT ON FUNCTION @extschema@.workload_fail(text, text, text, bigint, text, text) IS 'record a failure; retried under the policy or dead-lettered';

CREATE FUNCTION @extschema@.workload_confirm_cancel(workload_id text, claim_id text, worker_id text, fencing_token bigint)
    RETURNS void LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_confirm_cancel';
COMMENT ON FUNCTION @extschema@.workload_confirm_cancel(text, text, text, bigint) IS 'the worker confirms a requested cancellation: CANCELLED';

CREATE FUNCTION @extschema@.workload_execution_context(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, secret_references text[] DEFAULT '{}')
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_execution_context';
COMMENT ON FUNCTION @extschema@.workload_execution_context(text, text, text, bigint, text[]) IS 'what the current run may use';

CREATE FUNCTION @extschema@.workload_cancel(workload_id text, actor text)
    RETURNS @extschema@.workload_state LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_cancel';
COMMENT ON FUNCTION @extschema@.workload_cancel(text, text) IS 'cancel, or request cancellation of a running workload';

CREATE FUNCTION @extschema@.workload_retry(workload_id text, actor text)
    RETURNS @extschema@.workload_state LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_retry';
COMMENT ON FUNCTION @extschema@.workload_retry(text, text) IS 'put a FAILED, TIMED_OUT or DEAD_LETTER workload back to READY, due now';

CREATE FUNCTION @extschema@.workload_timeout(workload_id text, actor text)
    RETURNS @extschema@.workload_state LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_timeout';
COMMENT ON FUNCTION @extschema@.workload_timeout(text, text) IS 'time a workload out; retried under the policy or dead-lettered';

CREATE FUNCTION @extschema@.workload_recover_expired()
    RETURNS SETOF text LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_recover_expired';
COMMENT ON FUNCTION @extschema@.workload_recover_expired() IS 'recover every workload whose claim lease has expired';

CREATE FUNCTION @extschema@.workload_purge(older_than interval, batch_size integer DEFAULT 1000,
        include_dead_letter boolean DEFAULT false)
    RETURNS bigint LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_purge';
COMMENT ON FUNCTION @extschema@.workload_purge(interval, integer, boolean) IS 'delete one bounded batch of finished workloads older than older_than';

CREATE FUNCTION @extschema@.workload_tick()
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_tick';
COMMENT ON FUNCTION @extschema@.workload_tick() IS 'one maintenance pass: expired leases, timeouts, due and overdue waits; returns counts';

-- Durable orchestration (SPEC section 7).
CREATE FUNCTION @extschema@.workload_resume(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, expected_snapshots jsonb DEFAULT NULL)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_resume';
COMMENT ON FUNCTION @extschema@.workload_resume(text, text, text, bigint, jsonb) IS 'the verified latest checkpoint and the last wake, for the run that holds the claim';

CREATE FUNCTION @extschema@.workload_wait(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, kind text, wake_key text, deadline timestamptz)
    RETURNS @extschema@.workload_state LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_wait';
COMMENT ON FUNCTION @extschema@.workload_wait(text, text, text, bigint, text, text, timestamptz) IS 'release the claim and wait for an event, a time or a human approval: WAITING';

CREATE FUNCTION @extschema@.workload_signal(tenant_id text, application_id text, wake_key text, payload jsonb)
    RETURNS integer LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_signal';
COMMENT ON FUNCTION @extschema@.workload_signal(text, text, text, jsonb) IS 'wake the event waits on wake_key with a payload; returns how many woke';

CREATE FUNCTION @extschema@.workload_approve(workload_id text, approver text, approved boolean, note text)
    RETURNS boolean LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_approve';
COMMENT ON FUNCTION @extschema@.workload_approve(text, text, boolean, text) IS 'answer a human_approval wait either way; false when there was none to answer';

CREATE FUNCTION @extschema@.workload_add_compensation(workload_id text, claim_id text, worker_id text,
        fencing_token bigint, capability_id text, input jsonb)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_add_compensation';
COMMENT ON FUNCTION @extschema@.workload_add_compensation(text, text, text, bigint, text, jsonb) IS 'record an undo step bound to the workload''s authorization';

CREATE FUNCTION @extschema@.workload_compensate(workload_id text, actor text)
    RETURNS SETOF text LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_compensate';
COMMENT ON FUNCTION @extschema@.workload_compensate(text, text) IS 'create the compensation workloads of a failed or cancelled workload, last step first (idempotent)';

-- Authority: keys, grants, tenants (SPEC section 5).
CREATE FUNCTION @extschema@.workload_rotate_signing_key()
    RETURNS text LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_rotate_signing_key';
COMMENT ON FUNCTION @extschema@.workload_rotate_signing_key() IS 'add a new signing key (32 random bytes) and sign with it from now on';

CREATE FUNCTION @extschema@.workload_retire_signing_key(key_id text)
    RETURNS void LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_retire_signing_key';
COMMENT ON FUNCTION @extschema@.workload_retire_signing_key(text) IS 'stop trusting a signing key';

CREATE FUNCTION @extschema@.workload_sign_grant("grant" jsonb)
    RETURNS jsonb LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_sign_grant';
COMMENT ON FUNCTION @extschema@.workload_sign_grant(jsonb) IS 'sign a grant under the current key';

CREATE FUNCTION @extschema@.workload_verify_grant(signed jsonb)
    RETURNS boolean LANGUAGE C STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_verify_grant';
COMMENT ON FUNCTION @extschema@.workload_verify_grant(jsonb) IS 'whether a signed grant holds now: signature, key, revocation, status, validity';

CREATE FUNCTION @extschema@.workload_revoke_grant(grant_id text)
    RETURNS void LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_revoke_grant';
COMMENT ON FUNCTION @extschema@.workload_revoke_grant(text) IS 'revoke a grant by id';

CREATE FUNCTION @extschema@.workload_add_tenant_member(role name, tenant_id text, application_id text)
    RETURNS void LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_add_tenant_member';
COMMENT ON FUNCTION @extschema@.workload_add_tenant_member(name, text, text) IS 'let a role act in a tenant and application';

CREATE FUNCTION @extschema@.workload_remove_tenant_member(role name, tenant_id text, application_id text)
    RETURNS void LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_remove_tenant_member';
COMMENT ON FUNCTION @extschema@.workload_remove_tenant_member(name, text, text) IS 'stop a role acting in a tenant and application';

CREATE FUNCTION @extschema@.workload_can_transition(from_state @extschema@.workload_state, to_state @extschema@.workload_state)
    RETURNS boolean LANGUAGE C IMMUTABLE
    AS 'MODULE_PATHNAME', 'workload_can_transition';
COMMENT ON FUNCTION @extschema@.workload_can_transition(@extschema@.workload_state, @extschema@.workload_state) IS 'whether the transition table allows from -> to';

CREATE FUNCTION @extschema@.workload_transitions()
    RETURNS TABLE(from_state @extschema@.workload_state, to_state @extschema@.workload_state)
    LANGUAGE C IMMUTABLE
    AS 'MODULE_PATHNAME', 'workload_transitions';
COMMENT ON FUNCTION @extschema@.workload_transitions() IS 'the transition table the C code enforces';

CREATE FUNCTION @extschema@.workload_channel(tenant_id text, application_id text)
    RETURNS text LANGUAGE C IMMUTABLE
    AS 'MODULE_PATHNAME', 'workload_channel';
COMMENT ON FUNCTION @extschema@.workload_channel(text, text) IS 'the NOTIFY channel of a tenant and application';

CREATE FUNCTION @extschema@.workload_effective_scopes(granted text[], current text[])
    RETURNS text[] LANGUAGE C IMMUTABLE
    AS 'MODULE_PATHNAME', 'workload_effective_scopes';
COMMENT ON FUNCTION @extschema@.workload_effective_scopes(text[], text[]) IS 'granted intersected with current; * stands for the other side';

CREATE FUNCTION @extschema@.workload_error_codes()
    RETURNS TABLE(code text, sqlstate text, message text)
    LANGUAGE C IMMUTABLE
    AS 'MODULE_PATHNAME', 'workload_error_codes';
COMMENT ON FUNCTION @extschema@.workload_error_codes() IS 'every refusal: token, SQLSTATE, message';

-- Who may call what.  PUBLIC gets nothing that reads or writes workloads.
DO $$
DECLARE
    f text;
    client_fns text[] := ARRAY[
        'workload_create(jsonb)', 'workload_get(text)',
        'workload_list(text, text, @extschema@.workload_state, integer)',
        'workload_stats(text, text)',
        'workload_history(text)', 'workload_cancel(text, text)', 'workload_retry(text, text)',
        'workload_verify_grant(jsonb)', 'workload_signal(text, text, text, jsonb)',
        'workload_approve(text, text, boolean, text)', 'workload_compensate(text, text)'];
    worker_fns text[] := ARRAY[
        'workload_get(text)', 'workload_history(text)',
        'workload_claim(text, text[], text, text, interval, integer, boolean)',
        'workload_claim_id(text, text, text[], interval)',
        'workload_start(text, text, text, bigint)',
        'workload_heartbeat(text, text, text, bigint, interval, jsonb)',
        'workload_checkpoint(text, text, text, bigint, jsonb)',
        'workload_complete(text, text, text, bigint, text, jsonb, text[], integer)',
        'workload_complete_many(text, jsonb)',
        'workload_fail(text, text, text, bigint, text, text)',
        'workload_confirm_cancel(text, text, text, bigint)',
        'workload_execution_context(text, text, text, bigint, text[])',
        'workload_resume(text, text, text, bigint, jsonb)',
        'workload_wait(text, text, text, bigint, text, text, timestamptz)',
        'workload_add_compensation(text, text, text, bigint, text, jsonb)'];
    admin_fns text[] := ARRAY['workload_timeout(text, text)', 'workload_recover_expired()',
        'workload_tick()',
        'workload_purge(interval, integer, boolean)', 'workload_rotate_signing_key()',
        'workload_retire_signing_key(text)', 'workload_sign_grant(jsonb)',
        'workload_revoke_grant(text)', 'workload_add_tenant_member(name, text, text)',
        'workload_remove_tenant_member(name, text, text)'];
BEGIN
    FOREACH f IN ARRAY client_fns OPERATOR(pg_catalog.||) worker_fns OPERATOR(pg_catalog.||) admin_fns LOOP
        EXECUTE 'REVOKE ALL ON FUNCTION @extschema@.' OPERATOR(pg_catalog.||) f OPERATOR(pg_catalog.||) ' FROM PUBLIC';
    END LOOP;
    FOREACH f IN ARRAY client_fns LOOP
        EXECUTE 'GRANT EXECUTE ON FUNCTION @extschema@.' OPERATOR(pg_catalog.||) f OPERATOR(pg_catalog.||) ' TO workload_client';
    END LOOP;
    FOREACH f IN ARRAY worker_fns LOOP
        EXECUTE 'GRANT EXECUTE ON FUNCTION @extschema@.' OPERATOR(pg_catalog.||) f OPERATOR(pg_catalog.||) ' TO workload_worker';
    END LOOP;
    FOREACH f IN ARRAY admin_fns LOOP
        EXECUTE 'GRANT EXECUTE ON FUNCTION @extschema@.' OPERATOR(pg_catalog.||) f OPERATOR(pg_catalog.||) ' TO workload_admin';
    END LOOP;
END
$$;

-- The first signing key.
SELECT @extschema@.workload_rotate_signing_key();
