-- model.sql: a small model of workload's schema, every key led by tenant_id.
CREATE EXTENSION IF NOT EXISTS wlprobe;
-- the tenants used below: acme lands on w1 and hooli on w2 with 32 shards and two workers
DROP SCHEMA IF EXISTS m CASCADE;
CREATE SCHEMA m;
CREATE TYPE m.state AS ENUM ('CREATED', 'READY', 'CLAIMED', 'RUNNING', 'SUCCEEDED', 'CANCELLED', 'DEAD_LETTER');
CREATE TABLE m.workloads (
    tenant_id text NOT NULL, workload_id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    application_id text NOT NULL DEFAULT 'app',
    state m.state NOT NULL, priority int NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT '2026-01-01',
    next_attempt_at timestamptz NOT NULL DEFAULT '2026-01-01',
    fencing_token bigint NOT NULL DEFAULT 0, attempt_count int NOT NULL DEFAULT 0,
    claim_id text, worker_id text, lease_expires_at timestamptz,
    capability_snapshot text[] NOT NULL DEFAULT '{}',
    claimable boolean GENERATED ALWAYS AS (state OPERATOR(pg_catalog.=) 'READY'::m.state) STORED,
    finished_at timestamptz GENERATED ALWAYS AS (CASE WHEN state = ANY (ARRAY['SUCCEEDED','CANCELLED','DEAD_LETTER']::m.state[]) THEN created_at END) STORED,
    CONSTRAINT claim_check CHECK ((claim_id IS NULL) = (worker_id IS NULL)),
    CONSTRAINT state_check CHECK (state <> 'CREATED' OR attempt_count = 0),
    PRIMARY KEY (tenant_id, workload_id)
) WITH (fillfactor = 70);
CREATE INDEX workloads_claim_idx ON m.workloads (tenant_id, application_id, priority DESC, created_at, seq) WHERE claimable;
CREATE INDEX workloads_finished_idx ON m.workloads (finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE m.specs (tenant_id text NOT NULL, workload_id text NOT NULL, idempotency_key text NOT NULL,
    input jsonb NOT NULL DEFAULT '{}', backoff text NOT NULL DEFAULT 'fixed' CHECK (backoff = ANY (ARRAY['exponential', 'fixed'])),
    PRIMARY KEY (tenant_id, workload_id), UNIQUE (tenant_id, idempotency_key));
CREATE TABLE m.attempts (tenant_id text NOT NULL, workload_id text NOT NULL, attempt_number int NOT NULL,
    claim_id text NOT NULL, started_at timestamptz, PRIMARY KEY (tenant_id, workload_id, attempt_number));
CREATE TABLE m.events (tenant_id text NOT NULL, sequence bigint NOT NULL, workload_id text NOT NULL,
    event_type text NOT NULL, from_state m.state, to_state m.state NOT NULL, at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, sequence));
CREATE INDEX events_workload_idx ON m.events (tenant_id, workload_id, sequence);
CREATE TABLE m.results (tenant_id text NOT NULL, result_id text NOT NULL, workload_id text NOT NULL, output jsonb,
    PRIMARY KEY (tenant_id, result_id), UNIQUE (tenant_id, workload_id));
CREATE TABLE m.signing_keys (key_id text PRIMARY KEY, secret bytea NOT NULL CHECK (length(secret) = 32), created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE m.tenant_members (role name NOT NULL, tenant_id text NOT NULL, application_id text NOT NULL, PRIMARY KEY (role, tenant_id, application_id));
CREATE TABLE m.revoked_grants (grant_id text PRIMARY KEY, revoked_at timestamptz NOT NULL DEFAULT now());

SELECT create_distributed_table('m.workloads', 'tenant_id');
SELECT create_distributed_table(t, 'tenant_id', colocate_with := 'm.workloads')
  FROM unnest(ARRAY['m.specs', 'm.attempts', 'm.events', 'm.results']) t;
SELECT create_reference_table(t) FROM unnest(ARRAY['m.signing_keys', 'm.tenant_members', 'm.revoked_grants']) t;

-- The probe functions (wlprobe, C, shaped like store.c) delegated by their first
-- argument: plain delegation, and force_delegation (also inside transaction blocks).
SELECT create_distributed_function('probe_deleg(text,text,int,text[])', '$1', colocate_with := 'm.workloads');
SELECT create_distributed_function('probe_deleg_many(text,text[],int,text[])', '$1', colocate_with := 'm.workloads');
CREATE FUNCTION probe_force(tenant text, sql text, opts int, args text[] DEFAULT '{}') RETURNS text
    LANGUAGE C VOLATILE AS 'wlprobe', 'probe_run';
SELECT create_distributed_function('probe_force(text,text,int,text[])', '$1', colocate_with := 'm.workloads', force_delegation := true);
CREATE FUNCTION probe_force_many(tenant text, sqls text[], opts int, args text[] DEFAULT '{}') RETURNS text
    LANGUAGE C VOLATILE AS 'wlprobe', 'probe_run_many';
SELECT create_distributed_function('probe_force_many(text,text[],int,text[])', '$1', colocate_with := 'm.workloads', force_delegation := true);
-- a lookup by workload id alone (no tenant) has an index on every shard
CREATE INDEX workloads_id_idx ON m.workloads (workload_id);
