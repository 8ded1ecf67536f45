-- bench/sql/layout_model.sql: a model, in plain SQL, of a storage layout in
-- which no row written when a workload is created is written again: the
-- claim deletes the queue row and appends a run row (the attempt in flight,
-- which is also its lease); start and heartbeat update it in place (HOT, on
-- a page written moments before); the end deletes it and appends the result
-- (or, on failure, the attempt, as today).  Events and results as in 1.3.
-- Built by bench/wal_per_relation.sh (m_* scripts) from the rows of the
-- store it copies, so the rows are as wide as the product's.
\set ON_ERROR_STOP on
CREATE SCHEMA model;
CREATE TABLE model.w (LIKE workload.workload_rows INCLUDING ALL);
INSERT INTO model.w SELECT * FROM workload.workload_rows;
CREATE TABLE model.q (LIKE workload.queue INCLUDING ALL);
INSERT INTO model.q SELECT * FROM workload.queue;
CREATE TABLE model.ev (LIKE workload.events INCLUDING ALL);
INSERT INTO model.ev SELECT * FROM workload.events;
CREATE TABLE model.res (LIKE workload.results INCLUDING ALL);
-- the columns of workload.workloads that change from the claim on
CREATE TABLE model.run (
    seq               bigint NOT NULL,
    tenant_id         text NOT NULL,
    state             public.workload_state NOT NULL,
    fencing_token     bigint NOT NULL,
    attempt           integer NOT NULL,
    claim_id          text NOT NULL,
    worker_id         text NOT NULL,
    claimed_by        text NOT NULL,
    claimed_at        timestamptz NOT NULL,
    lease_expires_at  timestamptz NOT NULL,
    started_at        timestamptz,
    last_heartbeat_at timestamptz,
    deadline_at       timestamptz,
    state_entered_at  timestamptz NOT NULL,
    progress          jsonb,
    PRIMARY KEY (seq, tenant_id)
) WITH (fillfactor = 70);
ANALYZE model.w, model.q, model.ev;
