\echo Use "ALTER EXTENSION workload UPDATE TO '1.3'" to load this file. \quit

-- workload 1.2 -> 1.3: a storage layout for speed, ready for sharding by tenant
-- (SPEC section 1).  Nothing a caller sees changes: the same functions, the same
-- documents, the same refusals.  What changes is where rows live:
--
--  * workload.queue: one narrow row per claimable workload, inserted when it
--    becomes READY and deleted by the claim; the claimed workloads are the
--    entries of runs_held_idx, a partial index of the run rows that hold a
--    claim (read as the view workload.leases).  A claimer never follows an
--    update chain: a queue row is updated only once, when the last dependency
--    it waited for is met (it was not in the claim's index before).
--    Nothing indexed on the workload row changes at claim, start, heartbeat or
--    complete, so those updates are HOT.
--  * events, attempts, specs and checkpoints are keyed by (tenant_id, the
--    workload's creation sequence, their own number): a job's rows land where
--    its neighbours' did, not at a hashed id's random place in an index.
--  * an attempt is written once, when it ends, unless it succeeded (the row
--    and its result are then its record); the open attempt lives on the
--    workload row (claimed_at, started_at).
--  * every primary and unique key starts with or includes tenant_id.
--
-- Data is moved in place: claims held through the update keep their fences and
-- leases and complete with them afterwards.  A fresh CREATE EXTENSION runs
-- 1.0 and every update script, so a fresh install and an updated one are the
-- same objects.

-- The new tables are built beside the old ones in a scratch schema, filled,
-- and moved into schema workload once the old ones are gone (index names are
-- unique per schema).
CREATE SCHEMA workload_next;

CREATE SEQUENCE workload.workload_seq;
CREATE SEQUENCE workload.event_seq;

-- The hot row.  What never changes after create comes first, what the hot path
-- writes comes after it, so an update's WAL record carries only the middle:
-- PostgreSQL logs a same-page update without the bytes its old and new
-- versions share at the start and at the end.  So the columns are in the
-- order the hot path changes them: a start changes only state ..
-- started_at (and deadline_at), a completion claim_id .. updated_at, a
-- heartbeat updated_at .. progress; what retries and waits change comes
-- before all of them.
-- No CHECK, no generated column: nothing is re-computed on a write.
CREATE TABLE workload_next.workload_rows (
    tenant_id            text NOT NULL,
    workload_id          text NOT NULL,
    seq                  bigint NOT NULL,
    application_id       text NOT NULL,
    priority             integer NOT NULL,
    created_at           timestamptz NOT NULL,
    capability_snapshot  text[] NOT NULL,
    has_dependencies     boolean NOT NULL,
    has_criteria         boolean NOT NULL,
    -- the spec's timeouts (NULL = none), kept here so the tick needs no join
    queue_ms             bigint,
    claim_ms             bigint,
    execution_ms         bigint,
    heartbeat_ms         bigint,
    overall_ms           bigint,
    next_attempt_at      timestamptz NOT NULL,
    -- deadline_at while the row holds no claim (NULL while it holds one):
    -- the column the tick's deadline index reads.  A claimed row's deadline
    -- is found through runs_held_idx (workload.leases) instead, so claim, start and
    -- complete, which move deadline_at, change no indexed column and stay
    -- HOT updates for workloads with timeouts too.
    unheld_deadline_at   timestamptz,
    retry_count          integer NOT NULL,
    wait_count           integer NOT NULL,  -- attempts that ended in a wait
    checkpoint_sequence  integer NOT NULL,
    last_failure         jsonb,
    attempt_count        integer NOT NULL,
    fencing_token        bigint NOT NULL,
    claimed_at           timestamptz,
    -- the current claim (all NULL when none; claimed_at and started_at are
    -- kept as the record of the latest attempt)
    claim_id             text,
    worker_id            text,
    claimed_by           text,
    result_id            text,
    state                @extschema@.workload_state NOT NULL,
    state_entered_at     timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    started_at           timestamptz,
    -- the next moment the tick must look at this row (a timeout or a wait's
    -- deadline); written on state changes only, never by a heartbeat
    deadline_at          timestamptz,
    lease_expires_at     timestamptz,
    last_heartbeat_at    timestamptz,
    progress             jsonb,
    CONSTRAINT workloads_pkey PRIMARY KEY (workload_id, tenant_id)
) WITH (fillfactor = 50);
-- fillfactor 50: claim, start and complete each write a new version of the row
-- (about 176 bytes at create, 236 when finished); with half of each page free
-- every one of them stayed on its page (HOT) in bench runs of 16 clients,
-- where at 70 one job in two moved its row and inserted into all three
-- indexes (pg_waldump: 5,400 -> 4,800 WAL bytes per job).  The price: a
-- page holds about 23 finished rows instead of 31.

-- The ready queue: claimable work, best first.
CREATE TABLE workload_next.queue (
    tenant_id            text NOT NULL,
    seq                  bigint NOT NULL,
    application_id       text NOT NULL,
    priority             integer NOT NULL,
    created_at           timestamptz NOT NULL,
    available_at         timestamptz NOT NULL,
    capability_snapshot  text[] NOT NULL,
    -- requires a state a dependency may leave again (not SUCCEEDED or
    -- CANCELLED): every claim checks its dependencies
    -- (workload.dependencies_unmet)
    checks_dependencies  boolean NOT NULL,
    -- waits for a dependency to reach its required state, every required
    -- state being final: out of the claim's index until the transition that
    -- meets its last dependency clears it
    blocked              boolean NOT NULL,
    -- the workload has a run row (it was claimed before): a claim updates it
    -- instead of appending one, and need not look for it otherwise
    has_run              boolean NOT NULL,
    -- where the workload's row and its spec were written, when the writer
    -- knew (NULL otherwise): the claim fetches them there, and uses what it
    -- finds only if it has the workload's key (else it asks workloads_seq_key
    -- and specs_pkey, as it did without them); a hint, never an answer
    row_at               tid,
    spec_at              tid,
    -- Keyed by the creation sequence first, then tenant_id (as are runs,
    -- specs and events_workload_idx): a key that leads with a text column
    -- makes each comparison in the index's descent read the next column the
    -- slow way and compare the tenant's text first, about a tenth of a batched
    -- job's instructions (stop 26, bench/README.md).  Every statement names
    -- both columns; tenant_id stays in every key, for Citus.
    CONSTRAINT queue_pkey PRIMARY KEY (seq, tenant_id)
);
-- No authorization chain here: it is a workload's longest column (its run
-- grant's id and the snapshot's chain, 93 of 179 bytes a row in bench runs),
-- and a claim reads it (from the spec) only while a revocation is not yet
-- swept.  Half the width puts twice the rows on a page, so a claim that
-- walks the queue touches half the pages.

-- A workload's run row (docs/layout-design.md): from its first claim on, its
-- mutable columns live here and no longer on workload_rows, whose row is then
-- never written again until it is purged.  A claim appends the run row where
-- the rows of the claims before it went, so the claim, start, heartbeat and
-- complete that follow write pages written moments before, not the page a
-- workload row was created on long ago (after a checkpoint, a full-page image
-- each: bench runs, stop 28).  Keyed as the queue is, by the creation
-- sequence and the tenant: claims append in queue order, so its index grows
-- at the right edge.  Same columns, same order as on workload_rows (the
-- order the hot path changes them, for the update records' shared prefix and
-- suffix).  unheld_deadline_at: as on workload_rows, the deadline of a run
-- row nobody holds (a retry waiting, a durable wait), read by the tick
-- through runs_deadline_idx; claim, start and complete keep it NULL, and an
-- update that keeps an indexed column NULL stays HOT.
CREATE TABLE workload_next.runs (
    tenant_id            text NOT NULL,
    seq                  bigint NOT NULL,
    next_attempt_at      timestamptz NOT NULL,
    unheld_deadline_at   timestamptz,
    retry_count          integer NOT NULL,
    wait_count           integer NOT NULL,
    checkpoint_sequence  integer NOT NULL,
    last_failure         jsonb,
    attempt_count        integer NOT NULL,
    fencing_token        bigint NOT NULL,
    claimed_at           timestamptz,
    claim_id             text,
    worker_id            text,
    claimed_by           text,
    result_id            text COLLATE "C",
    state                @extschema@.workload_state NOT NULL,
    state_entered_at     timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    started_at           timestamptz,
    deadline_at          timestamptz,
    -- The completion's event (RUNNING -> SUCCEEDED, stop 32) when the run
    -- row carries the start's (see below): its sequence and time.  Retention
    -- finds these through runs_pkey (store_sql.c, PURGE_BOUND).  Here, among the columns a
    -- completion changes, so that its update record shares the row's tail
    -- (lease_expires_at to event_role) with the version before it.
    finished_seq         bigint,
    finished_at          timestamptz,
    -- The result of the attempt that succeeded (SPEC workload_complete),
    -- written by the completion's own update of the run row (stop 33: a
    -- result was a row of its own, 287 bytes of WAL and a key entry a job):
    -- NULL until then, never changed after (SUCCEEDED is final).  What a
    -- result row held besides is on the run row already (result_id, the
    -- token, the attempt, the time the state was entered) or follows from
    -- it (the claim id, SPEC section 2).  workload.results reads them.
    -- result_application_id is the workload's application, set with the
    -- result: result ids are unique per tenant and application
    -- (runs_result_key, on the run rows that have a result).  Both in the
    -- "C" collation, as an identifier is compared: by its bytes (equal the
    -- same as before; a completion compares a result id about twenty times,
    -- to ask whether it is taken and to enter it, and under a libc collation
    -- each comparison was a strcoll, 280 instructions).
    result_application_id text COLLATE "C",
    output               jsonb,
    output_hash          text,
    artifacts            text[],
    schema_version       integer,
    result_worker_id     text,
    lease_expires_at     timestamptz,
    last_heartbeat_at    timestamptz,
    progress             jsonb,
    -- The events of the latest claim that the run row carries instead of
    -- event rows (workload.events shows them; docs/layout-design.md, stop
    -- 31): the claim's and the start's sequences (drawn from
    -- workload.event_seq at the transition), the worker and the database
    -- role of both (worker_id and claimed_by are cleared when the claim
    -- ends).  Their time, token and attempt are claimed_at, started_at,
    -- fencing_token and attempt_count.  Only the direct paths set them;
    -- every other writer of a run row that changes what they read appends
    -- them as event rows first and clears them.  Last, so that a start
    -- (started_seq) logs no more of the row than before.
    started_seq          bigint,
    claimed_seq          bigint,
    event_worker         text,
    event_role           text,
    CONSTRAINT runs_pkey PRIMARY KEY (seq, tenant_id)
) WITH (fillfactor = 50);

CREATE TABLE workload_next.specs (
    tenant_id            text NOT NULL,
    workload_seq         bigint NOT NULL,
    workload_id          text NOT NULL,
    application_id       text NOT NULL,
    idempotency_key      text NOT NULL,
    environment          text NOT NULL,
    definition_id        text NOT NULL,
    definition_revision  text NOT NULL,
    trigger              text NOT NULL,
    input                jsonb NOT NULL,
    input_hash           text NOT NULL,
    requested_by         jsonb NOT NULL,
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
    -- the authorization chain (run authority, snapshot grant, the grants it
    -- derives from) that a revocation reaches
    grant_ids            text[] NOT NULL,
    CONSTRAINT specs_pkey PRIMARY KEY (workload_seq, tenant_id),
    CONSTRAINT specs_idempotency_key UNIQUE (tenant_id, application_id, idempotency_key)
);

-- A spec's two authority documents, in a row of their own beside it: the
-- authorization snapshot (the creator's grant, stored form) and the run
-- authority (the grant the workload runs under).  Together about 1,400 of a
-- spec row's 1,945 bytes in bench runs, and what a claim reads of a spec is
-- its definition and input: with them in the spec row, four specs filled a
-- page, and a queue of 600,000 READY workloads had 1.2 GB of specs that a
-- claim read a page of for each job (bench/README.md, "Stop 41").  Read by
-- what checks the authority (a named claim, the execution context, the
-- workload document), written once at create, deleted with the spec.
CREATE TABLE workload_next.spec_authority (
    tenant_id              text NOT NULL,
    workload_seq           bigint NOT NULL,
    authorization_snapshot jsonb NOT NULL,
    run_authority          jsonb NOT NULL,
    CONSTRAINT spec_authority_pkey PRIMARY KEY (workload_seq, tenant_id)
);

CREATE TABLE workload_next.event_rows (
    tenant_id            text NOT NULL,
    workload_seq         bigint NOT NULL,
    sequence             bigint NOT NULL DEFAULT pg_catalog.nextval('workload.event_seq'::pg_catalog.regclass),
    from_state           @extschema@.workload_state,
    to_state             @extschema@.workload_state NOT NULL,
    -- the evidence's fencing token and attempt number, when it has them (as
    -- integers); evidence holds the rest.  workload.event_evidence gives
    -- the evidence back whole.  Most events carry little else: as columns
    -- they take 12 bytes a row instead of about 55 in the jsonb.
    fencing_token        bigint,
    attempt              integer,
    actor                text NOT NULL,
    at                   timestamptz NOT NULL,
    db_role              text NOT NULL,
    evidence             jsonb NOT NULL
);

-- An attempt, written when it ends (the open one is on the workload row; one
-- that succeeded is never written: the row and its result are its record).
CREATE TABLE workload_next.attempts (
    tenant_id            text NOT NULL,
    workload_seq         bigint NOT NULL,
    attempt_number       integer NOT NULL,
    workload_id          text NOT NULL,
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
    CONSTRAINT attempts_pkey PRIMARY KEY (tenant_id, workload_seq, attempt_number)
);

-- Move the rows.
INSERT INTO workload_next.workload_rows
SELECT w.tenant_id, w.workload_id, w.seq, w.application_id, w.priority, w.created_at,
       w.capability_snapshot, w.has_dependencies, w.has_criteria,
       w.queue_ms, w.claim_ms, w.execution_ms, w.heartbeat_ms, w.overall_ms,
       w.next_attempt_at, CASE WHEN w.claim_id IS NULL THEN w.deadline_at END,
       w.retry_count, w.wait_count, w.checkpoint_sequence, w.last_failure,
       w.attempt_count, w.fencing_token,
       CASE WHEN w.claim_id IS NOT NULL THEN a.claimed_at END,
       w.claim_id, w.worker_id, w.claimed_by::text,
       (SELECT r.result_id FROM workload.results r WHERE r.workload_id OPERATOR(pg_catalog.=) w.workload_id),
       w.state, w.state_entered_at, w.updated_at,
       CASE WHEN w.claim_id IS NOT NULL THEN a.started_at END,
       w.deadline_at, w.lease_expires_at, w.last_heartbeat_at, w.progress
FROM workload.workloads w
LEFT JOIN workload.attempts a ON a.workload_id OPERATOR(pg_catalog.=) w.workload_id
    AND a.attempt_number OPERATOR(pg_catalog.=) w.attempt_count;
SELECT pg_catalog.setval('workload.workload_seq',
    COALESCE((SELECT pg_catalog.max(seq) FROM workload_next.workload_rows), 0) OPERATOR(pg_catalog.+) 1, false);

INSERT INTO workload_next.specs
SELECT s.tenant_id, w.seq, s.workload_id, s.application_id, s.idempotency_key, s.environment,
       s.definition_id, s.definition_revision, s.trigger, s.input, s.input_hash, s.requested_by,
       s.connection_scopes, s.max_attempts, s.initial_delay_ms,
       s.max_delay_ms, s.backoff, s.retry_on, s.timeouts, s.dependencies, s.completion_criteria,
       s.governing_snapshots, s.contract_version, s.created_by, o.grant_ids
FROM workload.specs s JOIN workload_next.workload_rows w ON w.workload_id OPERATOR(pg_catalog.=) s.workload_id
JOIN workload.workloads o ON o.workload_id OPERATOR(pg_catalog.=) s.workload_id;
INSERT INTO workload_next.spec_authority
SELECT s.tenant_id, w.seq, s.authorization_snapshot, s.run_authority
FROM workload.specs s JOIN workload_next.workload_rows w ON w.workload_id OPERATOR(pg_catalog.=) s.workload_id;

-- blocked: every required state final (SUCCEEDED, CANCELLED: no edge of the
-- transition table leaves them) and one not reached yet
INSERT INTO workload_next.queue
SELECT w.tenant_id, w.seq, w.application_id, w.priority, w.created_at, w.next_attempt_at,
       w.capability_snapshot,
       w.has_dependencies
       AND EXISTS (SELECT 1 FROM workload.dependencies d
           WHERE d.workload_id OPERATOR(pg_catalog.=) w.workload_id
             AND d.required_state OPERATOR(pg_catalog.<>) ALL (ARRAY['SUCCEEDED', 'CANCELLED']::@extschema@.workload_state[])),
       w.has_dependencies
       AND NOT EXISTS (SELECT 1 FROM workload.dependencies d
           WHERE d.workload_id OPERATOR(pg_catalog.=) w.workload_id
             AND d.required_state OPERATOR(pg_catalog.<>) ALL (ARRAY['SUCCEEDED', 'CANCELLED']::@extschema@.workload_state[]))
       AND EXISTS (SELECT 1 FROM workload.dependencies d
           LEFT JOIN workload_next.workload_rows p ON p.workload_id OPERATOR(pg_catalog.=) d.depends_on
           WHERE d.workload_id OPERATOR(pg_catalog.=) w.workload_id
             AND p.state IS DISTINCT FROM d.required_state),
       w.attempt_count OPERATOR(pg_catalog.>) 0
FROM workload_next.workload_rows w
WHERE w.state OPERATOR(pg_catalog.=) 'READY';

-- a run row for every workload claimed before (claims in flight keep their
-- fences: the run row has them); its workload row keeps no deadline of its
-- own for the tick to find
INSERT INTO workload_next.runs
SELECT w.tenant_id, w.seq, w.next_attempt_at, w.unheld_deadline_at, w.retry_count,
       w.wait_count, w.checkpoint_sequence, w.last_failure, w.attempt_count, w.fencing_token,
       w.claimed_at, w.claim_id, w.worker_id, w.claimed_by, w.result_id, w.state,
       w.state_entered_at, w.updated_at, w.started_at, w.deadline_at, NULL, NULL,
       x.application_id, x.output, x.output_hash, x.artifacts, x.schema_version, x.worker_id,
       w.lease_expires_at, w.last_heartbeat_at, w.progress, NULL, NULL, NULL, NULL
FROM workload_next.workload_rows w
LEFT JOIN workload.results x ON x.tenant_id OPERATOR(pg_catalog.=) w.tenant_id
    AND x.application_id OPERATOR(pg_catalog.=) w.application_id
    AND x.result_id OPERATOR(pg_catalog.=) w.result_id
WHERE w.attempt_count OPERATOR(pg_catalog.>) 0
ORDER BY w.seq;
UPDATE workload_next.workload_rows w SET unheld_deadline_at = NULL
WHERE w.attempt_count OPERATOR(pg_catalog.>) 0 AND w.unheld_deadline_at IS NOT NULL;

-- the token and the attempt move to their columns when they are integers
-- written without a fraction, so that workload.event_evidence gives back
-- the same jsonb
INSERT INTO workload_next.event_rows
SELECT e.tenant_id, w.seq, e.sequence, e.from_state, e.to_state,
       CASE WHEN x.t THEN (e.evidence OPERATOR(pg_catalog.->>) 'fencing_token')::bigint END,
       CASE WHEN x.a THEN (e.evidence OPERATOR(pg_catalog.->>) 'attempt')::integer END,
       e.actor, e.at, e.db_role::text,
       e.evidence OPERATOR(pg_catalog.-) (CASE WHEN x.t THEN ARRAY['fencing_token'] ELSE '{}' END
           OPERATOR(pg_catalog.||) CASE WHEN x.a THEN ARRAY['attempt'] ELSE '{}' END)::text[]
FROM workload.events e JOIN workload_next.workload_rows w ON w.workload_id OPERATOR(pg_catalog.=) e.workload_id
CROSS JOIN LATERAL (SELECT
    pg_catalog.jsonb_typeof(e.evidence OPERATOR(pg_catalog.->) 'fencing_token') OPERATOR(pg_catalog.=) 'number'
        AND (e.evidence OPERATOR(pg_catalog.->>) 'fencing_token') OPERATOR(pg_catalog.~) '^-?[0-9]{1,18}$' AS t,
    pg_catalog.jsonb_typeof(e.evidence OPERATOR(pg_catalog.->) 'attempt') OPERATOR(pg_catalog.=) 'number'
        AND (e.evidence OPERATOR(pg_catalog.->>) 'attempt') OPERATOR(pg_catalog.~) '^-?[0-9]{1,9}$' AS a) x;
SELECT pg_catalog.setval('workload.event_seq',
    COALESCE((SELECT pg_catalog.max(sequence) FROM workload_next.event_rows), 0) OPERATOR(pg_catalog.+) 1, false);

-- every attempt but the one a claim still holds open (that one is on the row)
INSERT INTO workload_next.attempts
SELECT w.tenant_id, w.seq, a.attempt_number, a.workload_id, a.claim_id, a.worker_id,
       a.fencing_token, a.claimed_at, a.lease_expires_at, a.started_at, a.finished_at,
       a.outcome, a.failure_kind, a.error
FROM workload.attempts a JOIN workload_next.workload_rows w ON w.workload_id OPERATOR(pg_catalog.=) a.workload_id
WHERE NOT (w.claim_id IS NOT NULL AND a.attempt_number OPERATOR(pg_catalog.=) w.attempt_count
           AND a.finished_at IS NULL);

DROP TABLE workload.workloads, workload.specs, workload.events, workload.attempts;
ALTER TABLE workload_next.workload_rows SET SCHEMA workload;
ALTER TABLE workload_next.queue SET SCHEMA workload;
ALTER TABLE workload_next.runs SET SCHEMA workload;
ALTER TABLE workload_next.specs SET SCHEMA workload;
ALTER TABLE workload_next.spec_authority SET SCHEMA workload;
ALTER TABLE workload_next.event_rows SET SCHEMA workload;
ALTER TABLE workload_next.attempts SET SCHEMA workload;
DROP SCHEMA workload_next;
ALTER SEQUENCE workload.workload_seq OWNED BY workload.workload_rows.seq;
ALTER SEQUENCE workload.event_seq OWNED BY workload.event_rows.sequence;

-- workload.workloads is a view of workload.workload_rows, the table that holds
-- a workload's row: what people, documents, lists and tests read keeps its
-- name while where a workload's state is kept may change under it
-- (docs/layout-design.md: a run row, from a workload's first claim on).  The
-- view reads with the caller's rights (the table's grants hold through it).
-- The index names keep the workload set's name (workloads_pkey, ...).
CREATE VIEW workload.workloads WITH (security_invoker = true) AS
SELECT w.tenant_id,
       w.workload_id,
       w.seq,
       w.application_id,
       w.priority,
       w.created_at,
       w.capability_snapshot,
       w.has_dependencies,
       w.has_criteria,
       w.queue_ms,
       w.claim_ms,
       w.execution_ms,
       w.heartbeat_ms,
       w.overall_ms,
       CASE WHEN r.seq IS NULL THEN w.next_attempt_at ELSE r.next_attempt_at END AS next_attempt_at,
       CASE WHEN r.seq IS NULL THEN w.unheld_deadline_at ELSE r.unheld_deadline_at END AS unheld_deadline_at,
       CASE WHEN r.seq IS NULL THEN w.retry_count ELSE r.retry_count END AS retry_count,
       CASE WHEN r.seq IS NULL THEN w.wait_count ELSE r.wait_count END AS wait_count,
       CASE WHEN r.seq IS NULL THEN w.checkpoint_sequence ELSE r.checkpoint_sequence END AS checkpoint_sequence,
       CASE WHEN r.seq IS NULL THEN w.last_failure ELSE r.last_failure END AS last_failure,
       CASE WHEN r.seq IS NULL THEN w.attempt_count ELSE r.attempt_count END AS attempt_count,
       CASE WHEN r.seq IS NULL THEN w.fencing_token ELSE r.fencing_token END AS fencing_token,
       CASE WHEN r.seq IS NULL THEN w.claimed_at ELSE r.claimed_at END AS claimed_at,
       CASE WHEN r.seq IS NULL THEN w.claim_id ELSE r.claim_id END AS claim_id,
       CASE WHEN r.seq IS NULL THEN w.worker_id ELSE r.worker_id END AS worker_id,
       CASE WHEN r.seq IS NULL THEN w.claimed_by ELSE r.claimed_by END AS claimed_by,
       CASE WHEN r.seq IS NULL THEN w.result_id ELSE r.result_id END AS result_id,
       CASE WHEN r.seq IS NULL THEN w.state ELSE r.state END AS state,
       CASE WHEN r.seq IS NULL THEN w.state_entered_at ELSE r.state_entered_at END AS state_entered_at,
       CASE WHEN r.seq IS NULL THEN w.updated_at ELSE r.updated_at END AS updated_at,
       CASE WHEN r.seq IS NULL THEN w.started_at ELSE r.started_at END AS started_at,
       CASE WHEN r.seq IS NULL THEN w.deadline_at ELSE r.deadline_at END AS deadline_at,
       CASE WHEN r.seq IS NULL THEN w.lease_expires_at ELSE r.lease_expires_at END AS lease_expires_at,
       CASE WHEN r.seq IS NULL THEN w.last_heartbeat_at ELSE r.last_heartbeat_at END AS last_heartbeat_at,
       CASE WHEN r.seq IS NULL THEN w.progress ELSE r.progress END AS progress
FROM workload.workload_rows w
LEFT JOIN workload.runs r ON r.seq OPERATOR(pg_catalog.=) w.seq AND r.tenant_id OPERATOR(pg_catalog.=) w.tenant_id;
COMMENT ON VIEW workload.workloads IS 'every workload, one row each (the rows of workload.workload_rows)';
REVOKE ALL ON workload.workloads FROM PUBLIC;
GRANT SELECT ON workload.workloads TO workload_admin;

-- Secondary indexes, built once the rows are in.
-- The creation sequence: child rows point at it (seq first, for the reason
-- given at dependencies_depends_on_idx).
CREATE UNIQUE INDEX workloads_seq_key ON workload.workload_rows (seq, tenant_id);
-- workload_list: one tenant and application, best first.
CREATE INDEX workloads_tenant_idx ON workload.workload_rows
    (tenant_id, application_id, priority DESC, created_at, seq);
-- The tick reads rows nobody holds whose deadline has come, soonest first
-- (held rows: through workload.leases).  deadline_at itself is not indexed:
-- claim, start, heartbeat and complete move it and stay HOT updates.
CREATE INDEX workloads_deadline_idx ON workload.workload_rows (unheld_deadline_at)
    WHERE unheld_deadline_at IS NOT NULL;
-- ... and of run rows nobody holds (the same rule, on workload.runs)
CREATE INDEX runs_deadline_idx ON workload.runs (unheld_deadline_at)
    WHERE unheld_deadline_at IS NOT NULL;
-- The claimed workloads (what lease recovery, held deadlines and heartbeat
-- silence read): the run rows that hold a claim.  An entry is made by the
-- claim's insert (or its update of a run row claimed before); start,
-- heartbeat and checkpoint leave claim_id as it is and stay HOT; the update
-- that releases the claim makes a version the index leaves out.  In place of
-- a row of a table of leases inserted by the claim and deleted when it ends,
-- with its own key (stop 33: about 90 bytes of WAL a job, docs/layout-design.md).
CREATE INDEX runs_held_idx ON workload.runs (seq, tenant_id)
    WHERE claim_id IS NOT NULL;
CREATE VIEW workload.leases WITH (security_invoker = true) AS
SELECT r.tenant_id, r.seq FROM workload.runs r WHERE r.claim_id IS NOT NULL;
COMMENT ON VIEW workload.leases IS 'the claimed workloads, one row each (run rows that hold a claim)';
REVOKE ALL ON workload.leases FROM PUBLIC;
GRANT SELECT ON workload.leases TO workload_admin;
-- The claim reads exactly this: claimable rows of one tenant and application,
-- best first (a blocked row is not in it, so no claim steps over one).  The
-- tenant and application lead as one 64-bit key (workload.queue_key: the
-- first 8 bytes of a SHA-256 of both): a claim tests every entry after its
-- point on the leaf page it lands on (about 80 in bench runs), and an entry
-- with text columns first is read column by column from its start for each
-- test (callgrind: 1,400 instructions an entry; with fixed-width columns a
-- fraction of that).  The claim keeps its tenant and application conditions,
-- so two queues that shared a key would share a range of the index, not work.
CREATE FUNCTION workload.queue_key(tenant_id text, application_id text)
    RETURNS bigint LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_queue_key';
REVOKE ALL ON FUNCTION workload.queue_key(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION workload.queue_key(text, text) TO workload_admin;
CREATE INDEX queue_ready_idx ON workload.queue
    (workload.queue_key(tenant_id, application_id), priority DESC, created_at, seq)
    WHERE NOT blocked;
-- A workload's history: its events, by its tenant and creation sequence.
-- Not unique, and not a primary key with the event sequence in it: a job's
-- events are appended when it is claimed, in claim order, among the events
-- of the workloads created around it, and with the sequence in the key each
-- was a new index entry in the middle of a full page (bench runs, 16
-- clients: a leaf split every 30 jobs, 440 WAL bytes and 0.04 full-page
-- images a job).  Without it, a workload's entries deduplicate into one
-- posting list, and a page makes room by merging them instead of splitting.
-- The sequence is unique by construction (workload.event_seq; on Citus each
-- node draws from its own range).
CREATE INDEX events_workload_idx ON workload.event_rows (workload_seq, tenant_id);
-- Retention reads workloads that reached a final state, oldest first.
CREATE INDEX events_final_idx ON workload.event_rows (at)
    WHERE to_state OPERATOR(pg_catalog.=) ANY
        (ARRAY['SUCCEEDED', 'CANCELLED', 'DEAD_LETTER']::@extschema@.workload_state[]);
-- ... and those whose run row carries its completion's event through
-- runs_pkey, in creation order, among the workloads created before the
-- cutoff (store_sql.c, PURGE_BOUND): no index on finished_at, whose entry
-- each completion paid for (a completion that sets finished_at is still
-- not a HOT update: it changes claim_id and the result's columns).

-- Results are on the run rows (moved there with them, above).  Result ids
-- are unique per tenant and application (1.2); the workload row says which
-- result is its own.  The key leads with the result id (1.2's led with
-- tenant_id and application_id, two text comparisons more at each step of a
-- descent, for the reason given at queue_pkey).
DROP TABLE workload.results;
CREATE UNIQUE INDEX runs_result_key ON workload.runs (result_id, tenant_id, result_application_id)
    WHERE result_application_id IS NOT NULL;
-- workload.results: every stored result, one row each, with the columns the
-- table had (the claim id by its formula: SPEC section 2).
CREATE VIEW workload.results WITH (security_invoker = true) AS
SELECT r.result_id,
       w.workload_id,
       r.output,
       r.output_hash,
       r.artifacts,
       r.schema_version,
       workload.claim_id_for(w.workload_id, r.fencing_token, r.result_worker_id) AS claim_id,
       r.result_worker_id AS worker_id,
       r.fencing_token,
       r.attempt_count AS attempt_number,
       r.state_entered_at AS created_at,
       r.tenant_id,
       r.result_application_id AS application_id
FROM workload.runs r
JOIN workload.workload_rows w ON w.seq OPERATOR(pg_catalog.=) r.seq AND w.tenant_id OPERATOR(pg_catalog.=) r.tenant_id
WHERE r.result_application_id IS NOT NULL;
COMMENT ON VIEW workload.results IS 'every stored result, one row each (on the run rows of workloads that succeeded)';
-- (writes through it are refused as workload.events' are, below)
REVOKE ALL ON workload.results FROM PUBLIC;
GRANT SELECT ON workload.results TO workload_admin;
GRANT EXECUTE ON FUNCTION workload.claim_id_for(text, bigint, text) TO workload_admin;

ALTER TABLE workload.checkpoints ADD COLUMN tenant_id text, ADD COLUMN workload_seq bigint;
UPDATE workload.checkpoints c SET tenant_id = w.tenant_id, workload_seq = w.seq
FROM workload.workload_rows w WHERE w.workload_id OPERATOR(pg_catalog.=) c.workload_id;
ALTER TABLE workload.checkpoints ALTER COLUMN tenant_id SET NOT NULL,
    ALTER COLUMN workload_seq SET NOT NULL;
ALTER TABLE workload.checkpoints DROP CONSTRAINT checkpoints_pkey;
ALTER TABLE workload.checkpoints ADD CONSTRAINT checkpoints_pkey
    PRIMARY KEY (tenant_id, workload_seq, sequence);

ALTER TABLE workload.dependencies ADD COLUMN tenant_id text;
UPDATE workload.dependencies d SET tenant_id = w.tenant_id
FROM workload.workload_rows w WHERE w.workload_id OPERATOR(pg_catalog.=) d.workload_id;
ALTER TABLE workload.dependencies ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE workload.dependencies DROP CONSTRAINT dependencies_pkey;
ALTER TABLE workload.dependencies ADD CONSTRAINT dependencies_pkey
    PRIMARY KEY (tenant_id, workload_id, depends_on);
DROP INDEX workload.dependencies_depends_on_idx;
-- (depends_on first: an index that leads with tenant_id alone would look, to a
-- plan made on empty tables, as good a way to a tenant's rows as the key)
CREATE INDEX dependencies_depends_on_idx ON workload.dependencies (depends_on, tenant_id);

ALTER TABLE workload.waits DROP CONSTRAINT waits_pkey;
ALTER TABLE workload.waits ADD CONSTRAINT waits_pkey PRIMARY KEY (tenant_id, workload_id, wait_number);

ALTER TABLE workload.compensations ADD COLUMN tenant_id text;
UPDATE workload.compensations p SET tenant_id = w.tenant_id
FROM workload.workload_rows w WHERE w.workload_id OPERATOR(pg_catalog.=) p.workload_id;
ALTER TABLE workload.compensations ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE workload.compensations DROP CONSTRAINT compensations_pkey;
ALTER TABLE workload.compensations ADD CONSTRAINT compensations_pkey
    PRIMARY KEY (tenant_id, workload_id, step);

-- The raw-write guard and the grants, on the new tables as on the old.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workload_rows', 'runs', 'queue', 'specs', 'spec_authority', 'event_rows', 'attempts'] LOOP
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_write_trg');
        EXECUTE pg_catalog.format('REVOKE ALL ON workload.%I FROM PUBLIC', t);
        EXECUTE pg_catalog.format('GRANT SELECT ON workload.%I TO workload_admin', t);
    END LOOP;
END
$$;
REVOKE ALL ON SEQUENCE workload.workload_seq, workload.event_seq FROM PUBLIC;

-- The event type of a transition into a state (SPEC section 6): not stored,
-- it follows from to_state.
CREATE FUNCTION workload.event_type(to_state @extschema@.workload_state)
    RETURNS text LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_event_type';
COMMENT ON FUNCTION workload.event_type(@extschema@.workload_state) IS 'the event type of a transition into a state (SPEC section 6)';

CREATE FUNCTION workload.event_evidence(evidence jsonb, fencing_token bigint, attempt integer)
    RETURNS jsonb LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_event_evidence';
COMMENT ON FUNCTION workload.event_evidence(jsonb, bigint, integer) IS 'an event''s evidence as it was given, from the columns workload.events keeps it in';

-- Whether a workload's authorization chain holds a grant revoked and not
-- yet swept: what a claim asks of a queued workload while a revocation waits
-- for the tick's sweep (the queue row does not carry the chain; the spec
-- does).  SET keeps it from being inlined, so a claim that finds no
-- revocation pending never plans or runs it.
CREATE FUNCTION workload.chain_revoked(tenant_id text, workload_seq bigint)
    RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT EXISTS (SELECT 1 FROM workload.specs s
        WHERE s.tenant_id OPERATOR(pg_catalog.=) $1 AND s.workload_seq OPERATOR(pg_catalog.=) $2
          AND s.grant_ids OPERATOR(pg_catalog.&&) (SELECT COALESCE(pg_catalog.array_agg(r.grant_id), '{}')
              FROM workload.revoked_grants r WHERE r.swept_at IS NULL))
$$;
COMMENT ON FUNCTION workload.chain_revoked(text, bigint) IS 'whether the authorization chain of a workload holds a grant revoked and not yet swept (the claim asks it while a revocation is pending)';
REVOKE ALL ON FUNCTION workload.chain_revoked(text, bigint) FROM PUBLIC;

-- Whether a queued workload finds a dependency out of its required state:
-- what a claim asks of a candidate whose queue row checks_dependencies (it
-- requires a state a dependency may leave again; one whose every required
-- state is final is blocked until they are met, and never asked).  SET keeps
-- it from being inlined, so a claim that meets no such candidate never plans
-- or runs it.  A dependency that no longer exists is not out of its state
-- (as before 1.3: its state compares as NULL).
CREATE FUNCTION workload.dependencies_unmet(tenant_id text, workload_seq bigint)
    RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT EXISTS (SELECT 1 FROM workload.dependencies d
        WHERE d.tenant_id OPERATOR(pg_catalog.=) $1
          AND d.workload_id OPERATOR(pg_catalog.=) (SELECT w.workload_id FROM workload.workload_rows w
              WHERE w.seq OPERATOR(pg_catalog.=) $2 AND w.tenant_id OPERATOR(pg_catalog.=) $1)
          AND (SELECT p.state FROM workload.workloads p
              WHERE p.workload_id OPERATOR(pg_catalog.=) d.depends_on
                AND p.tenant_id OPERATOR(pg_catalog.=) $1) OPERATOR(pg_catalog.<>) d.required_state)
$$;
COMMENT ON FUNCTION workload.dependencies_unmet(text, bigint) IS 'whether a queued workload has a dependency out of its required state (the claim asks it of a candidate whose queue row checks_dependencies)';
REVOKE ALL ON FUNCTION workload.dependencies_unmet(text, bigint) FROM PUBLIC;

-- workload.events (SPEC section 6) is the event rows and the events a run
-- row carries for its latest claim: a claim, a start and a completion on the
-- direct paths write their events into the run row they write anyway (its
-- claimed_seq, started_seq, finished_seq, event_worker and event_role), not
-- as three more rows with their index entries (bench runs, stop 31: about 600
-- WAL bytes a job for the first two).
-- Each has its sequence from workload.event_seq, drawn at the transition, so
-- read through the view a workload's history is the same rows in the same
-- order.  workload.carried_events is the second part alone, in the columns
-- of workload.event_rows: what a writer appends before it changes what they
-- read.  Each part reads one table, with no condition of its own (the
-- run-row parts' "is there an event" is the view's WHERE, which the planner
-- hands down to each): so the planner makes all of them members of one append,
-- and a join with the view (workload.event_log's, a caller's) reaches each by
-- its index.  A part with a WHERE of its own, or a join, or a view of the
-- run-row parts inside this one, stays a subquery that a join cannot reach
-- into, and it read every run row (EXPLAIN, PostgreSQL 15); hence the three
-- run-row parts are spelled out in both views.
CREATE VIEW workload.carried_events WITH (security_invoker = true) AS
SELECT u.tenant_id, u.workload_seq, u.sequence, u.from_state, u.to_state, u.fencing_token,
       u.attempt, u.actor, u.at, u.db_role, u.evidence
FROM (SELECT r.tenant_id, r.seq AS workload_seq, r.claimed_seq AS sequence,
           'READY'::@extschema@.workload_state AS from_state,
           'CLAIMED'::@extschema@.workload_state AS to_state, r.fencing_token,
           r.attempt_count AS attempt, r.event_worker AS actor, r.claimed_at AS at,
           r.event_role AS db_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker) AS evidence
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.started_seq, 'CLAIMED'::@extschema@.workload_state,
           'RUNNING'::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.started_at, r.event_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker)
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.finished_seq, 'RUNNING'::@extschema@.workload_state,
           'SUCCEEDED'::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.finished_at, r.event_role, pg_catalog.jsonb_build_object('result_id', r.result_id)
      FROM workload.runs r) u
WHERE u.sequence IS NOT NULL;
COMMENT ON VIEW workload.carried_events IS 'the events a run row carries for its latest claim, in the columns of workload.event_rows';
CREATE VIEW workload.events WITH (security_invoker = true) AS
SELECT u.tenant_id, u.workload_seq, u.sequence, u.from_state, u.to_state, u.fencing_token,
       u.attempt, u.actor, u.at, u.db_role, u.evidence
FROM (SELECT e.tenant_id, e.workload_seq, e.sequence, e.from_state, e.to_state, e.fencing_token,
           e.attempt, e.actor, e.at, e.db_role, e.evidence
      FROM workload.event_rows e
      UNION ALL
      SELECT r.tenant_id, r.seq, r.claimed_seq, 'READY'::@extschema@.workload_state,
           'CLAIMED'::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.claimed_at, r.event_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker)
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.started_seq, 'CLAIMED'::@extschema@.workload_state,
           'RUNNING'::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.started_at, r.event_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker)
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.finished_seq, 'RUNNING'::@extschema@.workload_state,
           'SUCCEEDED'::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.finished_at, r.event_role, pg_catalog.jsonb_build_object('result_id', r.result_id)
      FROM workload.runs r) u
WHERE u.sequence IS NOT NULL;
COMMENT ON VIEW workload.events IS 'every event (SPEC section 6): the event rows and the events run rows carry';
-- A write through the view (this one, workload.results) is refused as a
-- write to a table is (WL016), not as a view that cannot be written to.  (A
-- view's triggers cannot be ENABLE ALWAYS: with session_replication_role =
-- replica they do not fire, and a write through the view does nothing, there
-- being nothing under it.)
DO $$
DECLARE
    v text;
BEGIN
    FOREACH v IN ARRAY ARRAY['events', 'results'] LOOP
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            v OPERATOR(pg_catalog.||) '_raw_write_trg', v);
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I INSTEAD OF INSERT OR UPDATE OR DELETE ON workload.%I '
            'FOR EACH ROW EXECUTE FUNCTION workload.refuse_raw_write()',
            v OPERATOR(pg_catalog.||) '_raw_row_trg', v);
    END LOOP;
END
$$;
REVOKE ALL ON workload.carried_events, workload.events FROM PUBLIC;
GRANT SELECT ON workload.carried_events, workload.events TO workload_admin;

-- Read-only views for people: the events and attempts with their workload's
-- ids, as 1.2's tables had them.  They read with the caller's rights.
CREATE VIEW workload.event_log WITH (security_invoker = true) AS
SELECT w.workload_id, e.tenant_id, w.application_id, e.sequence,
       workload.event_type(e.to_state) AS event_type, e.from_state, e.to_state, e.actor,
       e.at, e.db_role, workload.event_evidence(e.evidence, e.fencing_token, e.attempt) AS evidence
FROM workload.events e
JOIN workload.workload_rows w ON w.tenant_id OPERATOR(pg_catalog.=) e.tenant_id
    AND w.seq OPERATOR(pg_catalog.=) e.workload_seq;
COMMENT ON VIEW workload.event_log IS 'every event with its workload id and event type (read-only, for people)';

CREATE VIEW workload.attempt_log WITH (security_invoker = true) AS
SELECT a.workload_id, a.tenant_id, a.attempt_number,
       workload.attempt_id_for(a.workload_id, a.attempt_number) AS attempt_id, a.claim_id, a.worker_id, a.fencing_token,
       a.claimed_at, a.lease_expires_at, a.started_at, a.finished_at, a.outcome,
       a.failure_kind, a.error
FROM workload.attempts a
UNION ALL
SELECT w.workload_id, w.tenant_id, w.attempt_count,
       workload.attempt_id_for(w.workload_id, w.attempt_count), w.claim_id, w.worker_id, w.fencing_token,
       w.claimed_at, w.lease_expires_at, w.started_at, NULL, NULL, NULL, NULL
FROM workload.workloads w WHERE w.claim_id IS NOT NULL
UNION ALL
-- an attempt that succeeded is not written to workload.attempts: the row
-- (its times) and the result (its claim) are its record
SELECT w.workload_id, w.tenant_id, w.attempt_count,
       workload.attempt_id_for(w.workload_id, w.attempt_count), r.claim_id, r.worker_id, r.fencing_token,
       w.claimed_at, w.lease_expires_at, w.started_at, w.state_entered_at, 'SUCCEEDED', NULL, NULL
FROM workload.workloads w
JOIN workload.results r ON r.tenant_id OPERATOR(pg_catalog.=) w.tenant_id
    AND r.application_id OPERATOR(pg_catalog.=) w.application_id
    AND r.result_id OPERATOR(pg_catalog.=) w.result_id
WHERE w.state OPERATOR(pg_catalog.=) 'SUCCEEDED'
  AND NOT EXISTS (SELECT 1 FROM workload.attempts a
      WHERE a.tenant_id OPERATOR(pg_catalog.=) w.tenant_id AND a.workload_seq OPERATOR(pg_catalog.=) w.seq
        AND a.attempt_number OPERATOR(pg_catalog.=) w.attempt_count);
COMMENT ON VIEW workload.attempt_log IS 'every attempt, the open one of each claimed workload and the succeeded one of each finished workload included (read-only, for people)';

REVOKE ALL ON workload.event_log, workload.attempt_log FROM PUBLIC;
GRANT SELECT ON workload.event_log, workload.attempt_log TO workload_admin;

-- The schedule time rules (src/cron.c), callable so they can be checked
-- against the wall clock: the next n slots of a cron expression or @every
-- interval in a time zone after a time, the slots in (after, until], and the
-- latest slot at or before a time.  Internal; no role is granted them.
CREATE FUNCTION workload.cron_slots(cron text, timezone text, after timestamptz, n integer)
    RETURNS SETOF timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_cron_slots';
CREATE FUNCTION workload.cron_between(cron text, timezone text, after timestamptz,
        until timestamptz, lim integer)
    RETURNS SETOF timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_cron_between';
CREATE FUNCTION workload.cron_prev(cron text, timezone text, at timestamptz)
    RETURNS timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_cron_prev';
REVOKE ALL ON FUNCTION workload.cron_slots(text, text, timestamptz, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION workload.cron_between(text, text, timestamptz, timestamptz, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION workload.cron_prev(text, text, timestamptz) FROM PUBLIC;

-- ==== Scheduling and bulk work: not_before, workload_create_many, workload_redrive (issue 15) ====
-- not_before (SPEC section 4): kept with the spec, so an idempotent replay
-- compares it; the workload row's next_attempt_at (and its queue row's
-- available_at) is the later of its creation and not_before.
ALTER TABLE workload.specs ADD COLUMN not_before timestamptz;
-- The key's index leads with the key, not with tenant_id (for the reason given
-- at dependencies_depends_on_idx): led by tenant_id it can look, to a plan made
-- on empty tables, as good a way to a spec by (tenant_id, workload_seq) as the
-- primary key (seen once: a create's document read 2228 of the tenant's specs).
ALTER TABLE workload.specs DROP CONSTRAINT specs_idempotency_key,
    ADD CONSTRAINT specs_idempotency_key UNIQUE (idempotency_key, tenant_id, application_id);

CREATE FUNCTION @extschema@.workload_create_many(specs jsonb)
    RETURNS TABLE(ord integer, workload_id text, outcome text, code text, document jsonb)
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_create_many';
COMMENT ON FUNCTION @extschema@.workload_create_many(jsonb) IS 'create up to 1000 workloads in one transaction; each item is created, existing or refused on its own';

CREATE FUNCTION @extschema@.workload_redrive(tenant_id text, application_id text, actor text,
        definition_id text DEFAULT NULL, failure_kind text DEFAULT NULL, lim integer DEFAULT 1000)
    RETURNS SETOF text
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_redrive';
COMMENT ON FUNCTION @extschema@.workload_redrive(text, text, text, text, text, integer) IS 'put up to lim DEAD_LETTER workloads of a tenant and application back to READY, oldest first';

REVOKE ALL ON FUNCTION @extschema@.workload_create_many(jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.workload_redrive(text, text, text, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.workload_create_many(jsonb) TO workload_client;
GRANT EXECUTE ON FUNCTION @extschema@.workload_redrive(text, text, text, text, text, integer) TO workload_client;
-- ==== end of scheduling and bulk work ====

-- ==== Schedules (SPEC section 4, "Scheduling and bulk work") ====
-- A schedule makes a workload from its template at each slot of its cron, in
-- its time zone.  The tick fires due slots (src/schedule_tick.c) through the
-- create path with idempotency_key 'schedule:<schedule_id>:<slot>', so a
-- slot runs once however many ticks race.  template is the create spec
-- without tenant_id, application_id and idempotency_key, its grant kept in
-- stored form (no bearer credential); created_by is the role that made (or
-- last replaced) the schedule, as whom the tick creates its workloads.
-- next_run_at is the first slot not yet handled; last_run_at the slot of the
-- latest workload made, last_workload_id that workload; last_error why the
-- latest slot that could not be made was skipped (NULL once one is made).
CREATE TABLE workload.schedules (
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    schedule_id          text NOT NULL,
    cron                 text NOT NULL,
    timezone             text NOT NULL,
    template             jsonb NOT NULL,
    overlap              text NOT NULL
        CHECK (overlap OPERATOR(pg_catalog.=) ANY (ARRAY['skip', 'allow'])),
    catch_up             text NOT NULL
        CHECK (catch_up OPERATOR(pg_catalog.=) ANY (ARRAY['latest', 'all', 'none'])),
    paused               boolean NOT NULL,
    next_run_at          timestamptz,
    last_run_at          timestamptz,
    last_workload_id     text,
    last_error           jsonb,
    created_by           name NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    CONSTRAINT schedules_pkey PRIMARY KEY (tenant_id, application_id, schedule_id)
);
-- The tick reads the schedules whose next slot has come, soonest first.
CREATE INDEX schedules_due_idx ON workload.schedules (next_run_at)
    WHERE NOT paused AND next_run_at IS NOT NULL;

-- What the tick did with a schedule's slots besides making their workloads:
-- a slot skipped (event_type 'schedule.skipped': overlap, or missed slots
-- catch_up left out) or one whose workload could not be made
-- ('schedule.failed', with the refusal).  The latest 100 of each schedule are
-- kept; dropped with the schedule.
CREATE TABLE workload.schedule_events (
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    schedule_id          text NOT NULL,
    sequence             bigint NOT NULL DEFAULT pg_catalog.nextval('workload.event_seq'::pg_catalog.regclass),
    event_type           text NOT NULL,
    slot                 timestamptz NOT NULL,
    at                   timestamptz NOT NULL,
    evidence             jsonb NOT NULL,
    CONSTRAINT schedule_events_pkey PRIMARY KEY (tenant_id, application_id, schedule_id, sequence)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['schedules', 'schedule_events'] LOOP
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_write_trg');
        EXECUTE pg_catalog.format('REVOKE ALL ON workload.%I FROM PUBLIC', t);
        EXECUTE pg_catalog.format('GRANT SELECT ON workload.%I TO workload_admin', t);
    END LOOP;
END
$$;

CREATE FUNCTION @extschema@.workload_schedule(tenant_id text, application_id text,
        schedule_id text, cron text, template jsonb, timezone text DEFAULT 'UTC',
        overlap text DEFAULT 'skip', catch_up text DEFAULT 'latest')
    RETURNS jsonb LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_schedule';
COMMENT ON FUNCTION @extschema@.workload_schedule(text, text, text, text, jsonb, text, text, text) IS 'create or replace a schedule: a workload from template at each slot of cron in timezone';

CREATE FUNCTION @extschema@.workload_schedule_pause(tenant_id text, application_id text,
        schedule_id text)
    RETURNS jsonb LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_schedule_pause';
COMMENT ON FUNCTION @extschema@.workload_schedule_pause(text, text, text) IS 'pause a schedule: no slot fires until it is resumed';

CREATE FUNCTION @extschema@.workload_schedule_resume(tenant_id text, application_id text,
        schedule_id text)
    RETURNS jsonb LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_schedule_resume';
COMMENT ON FUNCTION @extschema@.workload_schedule_resume(text, text, text) IS 'resume a schedule from its first slot after now';

CREATE FUNCTION @extschema@.workload_schedule_drop(tenant_id text, application_id text,
        schedule_id text)
    RETURNS void LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_schedule_drop';
COMMENT ON FUNCTION @extschema@.workload_schedule_drop(text, text, text) IS 'drop a schedule (the workloads it made stay)';

CREATE FUNCTION @extschema@.workload_schedules(tenant_id text, application_id text)
    RETURNS SETOF jsonb LANGUAGE C STABLE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_schedules';
COMMENT ON FUNCTION @extschema@.workload_schedules(text, text) IS 'the schedules of one tenant and application, by schedule_id';

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'workload_schedule(text, text, text, text, jsonb, text, text, text)',
        'workload_schedule_pause(text, text, text)', 'workload_schedule_resume(text, text, text)',
        'workload_schedule_drop(text, text, text)', 'workload_schedules(text, text)'] LOOP
        EXECUTE 'REVOKE ALL ON FUNCTION @extschema@.' OPERATOR(pg_catalog.||) f OPERATOR(pg_catalog.||) ' FROM PUBLIC';
        EXECUTE 'GRANT EXECUTE ON FUNCTION @extschema@.' OPERATOR(pg_catalog.||) f OPERATOR(pg_catalog.||) ' TO workload_client';
    END LOOP;
END
$$;
-- ==== end of Schedules ====

-- ===================================================================
-- Citus: sharding by tenant (issue 13)
-- ===================================================================
-- The raw-write guard as two triggers per table: INSERT/UPDATE/DELETE and
-- TRUNCATE apart.  Citus creates a table's triggers on its shards only when
-- they do not include TRUNCATE, and never propagates ENABLE/DISABLE made
-- after distribution, so both are made (ENABLE ALWAYS) here, before any
-- distribution.  refuse_raw_write admits, besides our own plans, the
-- top-level statement Citus sent from another node (its shard copies of a
-- statement our API ran there, its copies of reference tables).
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workload_rows', 'runs', 'queue', 'specs', 'spec_authority', 'event_rows', 'attempts',
            'checkpoints', 'dependencies', 'waits', 'compensations',
            'signing_keys', 'revoked_grants', 'tenant_members', 'grant_lineage',
            'channel_secret'] LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON workload.%I',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE TRUNCATE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_truncate_trg', t);
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_write_trg');
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_truncate_trg');
    END LOOP;
END
$$;

-- One signing key set and one channel secret for a cluster: CREATE EXTENSION
-- on a Citus coordinator runs this script on every worker too (as Citus's
-- internal connection), where the earlier scripts have just minted keys of
-- their own.  Those copies forget them; workload_citus_distribute() then
-- makes the tables reference tables holding the coordinator's.
DO $$
BEGIN
    IF pg_catalog.current_setting('application_name') LIKE 'citus_internal gpid=%' THEN
        DELETE FROM workload.signing_keys;
        DELETE FROM workload.channel_secret;
    END IF;
END
$$;

-- workload.citus_sequence_range(): on this node of a Citus cluster, the
-- workload and event sequences draw from the node's own range, group id
-- times 2^48 on (the coordinator, group 0, from 1), so that no two nodes ever
-- draw the same value: a tenant's keys stay unique when its shard moves, and
-- its events rise as long as it moves to a higher-numbered node.  A tenant's
-- events are all numbered on the node that holds it (every call for it runs
-- there).  Run on every node by workload_citus_distribute(); a sequence
-- already past its floor is left alone.
CREATE FUNCTION workload.citus_sequence_range() RETURNS bigint
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    floor_ bigint;
    last_ bigint;
    s text;
BEGIN
    EXECUTE 'SELECT groupid::bigint << 48 FROM pg_dist_local_group' INTO floor_;
    PERFORM pg_advisory_xact_lock(8606223218634613093);
    FOREACH s IN ARRAY ARRAY['workload_seq', 'event_seq'] LOOP
        SELECT q.last_value INTO last_ FROM pg_sequences q
        WHERE q.schemaname = 'workload' AND q.sequencename = s;
        IF floor_ > 0 AND coalesce(last_, 0) < floor_ THEN
            PERFORM setval(('workload.' || s)::regclass, floor_, false);
        END IF;
    END LOOP;
    RETURN floor_;
END
$$;
REVOKE ALL ON FUNCTION workload.citus_sequence_range() FROM PUBLIC;

-- workload.citus_distribute_tables(): the body of workload_citus_distribute()
-- (src/api_citus.c runs it with the raw-write guard open, after checking
-- that Citus is here and this is its coordinator).  Tables already
-- distributed are left as they are, so it may be called again.
CREATE FUNCTION workload.citus_distribute_tables() RETURNS jsonb
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ref text[] := ARRAY['signing_keys', 'channel_secret', 'revoked_grants', 'tenant_members',
        'grant_lineage'];
    -- workload_rows first: every other table is co-located with it
    dist text[] := ARRAY['workload_rows', 'runs', 'queue', 'specs', 'spec_authority', 'event_rows', 'attempts',
        'checkpoints', 'dependencies', 'waits', 'compensations'];
    t text;
    made_ref text[] := '{}';
    made_dist text[] := '{}';
    made_fn text[] := '{}';
    f regprocedure;
    local_group integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'WORKLOAD_INVALID: Citus is not installed in this database'
            USING ERRCODE = 'WL001',
                  HINT = 'CREATE EXTENSION citus, on the coordinator and on every worker, before distributing.';
    END IF;
    EXECUTE 'SELECT groupid FROM pg_dist_local_group' INTO local_group;
    IF local_group IS DISTINCT FROM 0 THEN
        RAISE EXCEPTION 'WORKLOAD_INVALID: this node is not the Citus coordinator'
            USING ERRCODE = 'WL001',
                  HINT = 'Call workload_citus_distribute() on the coordinator.';
    END IF;
    -- our guard triggers go to the shards (refuse_raw_write admits Citus's own writes)
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    PERFORM set_config('citus.log_remote_commands', 'off', true);
    FOREACH t IN ARRAY ref LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition
                       WHERE logicalrelid = ('workload.' || t)::regclass) THEN
            PERFORM create_reference_table(('workload.' || t)::regclass);
            made_ref := made_ref || t;
        END IF;
    END LOOP;
    -- Nothing is carried on Citus (the direct paths do not run there): the
    -- events run rows carry become event rows before the tables are
    -- distributed, so that a claim there never overwrites what they read.
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'workload.runs'::regclass) THEN
        INSERT INTO workload.event_rows SELECT * FROM workload.carried_events;
        UPDATE workload.runs SET started_seq = NULL, claimed_seq = NULL, event_worker = NULL,
            event_role = NULL, finished_seq = NULL, finished_at = NULL
        WHERE claimed_seq IS NOT NULL OR started_seq IS NOT NULL OR finished_seq IS NOT NULL;
    END IF;
    FOREACH t IN ARRAY dist LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition
                       WHERE logicalrelid = ('workload.' || t)::regclass) THEN
            IF t = 'workload_rows' THEN
                PERFORM create_distributed_table('workload.workload_rows'::regclass, 'tenant_id');
            ELSE
                PERFORM create_distributed_table(('workload.' || t)::regclass, 'tenant_id',
                    colocate_with => 'workload.workload_rows');
            END IF;
            made_dist := made_dist || t;
        END IF;
    END LOOP;
    -- each node's sequences in its own range (nodes added later: call again)
    PERFORM 1 FROM run_command_on_all_nodes('SELECT workload.citus_sequence_range()') x
        WHERE NOT x.success;
    IF FOUND THEN
        RAISE EXCEPTION 'WORKLOAD_INVALID: a node of the cluster could not set its sequence range'
            USING ERRCODE = 'WL001', HINT = 'Every node must be up to distribute; call again.';
    END IF;
    -- the routed calls, delegated by their tenant to the node that holds it
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'workload'::regnamespace AND p.proname LIKE 'route\_%'
             ORDER BY p.proname LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass
                       AND o.objid = f::oid AND o.distribution_argument_index IS NOT NULL) THEN
            PERFORM create_distributed_function(f, '$1', colocate_with => 'workload.workload_rows',
                force_delegation => true);
            made_fn := made_fn || f::text;
        END IF;
    END LOOP;
    RETURN jsonb_build_object('reference_tables', to_jsonb(ref), 'distributed_tables', to_jsonb(dist),
        'made_reference', to_jsonb(made_ref), 'made_distributed', to_jsonb(made_dist),
        'made_routed', to_jsonb(made_fn));
END
$$;
REVOKE ALL ON FUNCTION workload.citus_distribute_tables() FROM PUBLIC;

CREATE FUNCTION @extschema@.workload_citus_distribute() RETURNS jsonb
    LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'workload_citus_distribute';
COMMENT ON FUNCTION @extschema@.workload_citus_distribute() IS 'on a Citus coordinator: make the per-workload tables distributed by tenant_id (co-located with workload.workload_rows) and the keys, members and revocations reference tables';
REVOKE ALL ON FUNCTION @extschema@.workload_citus_distribute() FROM PUBLIC;

-- workload_tenant_node(tenant_id): the node holding a tenant's rows, from
-- Citus's metadata (any node); no rows when the tables are not distributed.
-- SECURITY DEFINER: Citus's shard lookup needs the right to read
-- workload.workload_rows, which worker roles do not have.  It reads nothing of
-- the tenant's: the answer is the hash of the name looked up in the shard
-- map, the same for a tenant that exists and for one that does not.
CREATE FUNCTION @extschema@.workload_tenant_node(tenant_id text, OUT host text, OUT port integer)
    RETURNS SETOF record LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT n.nodename::text, n.nodeport::integer FROM pg_dist_placement p '
        'JOIN pg_dist_node n ON n.groupid = p.groupid '
        'WHERE p.shardid = get_shard_id_for_distribution_column(''workload.workload_rows'', $1) '
        '  AND n.noderole = ''primary'' AND EXISTS (SELECT 1 FROM pg_dist_partition d '
        '    WHERE d.logicalrelid = ''workload.workload_rows''::regclass)'
        USING tenant_id;
END
$$;
COMMENT ON FUNCTION @extschema@.workload_tenant_node(text) IS 'on Citus: the host and port of the node that holds a tenant (where its workers connect and listen)';
REVOKE ALL ON FUNCTION @extschema@.workload_tenant_node(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.workload_tenant_node(text) TO workload_worker, workload_admin;

-- A call for one tenant runs on one node (SPEC section 1; src/api_route.c).
-- Tenant-first overloads of the calls a worker makes by workload id: the
-- original with tenant_id in front (its defaults, result, volatility and
-- grants), which looks for the workload in that tenant only.  And for those
-- and for every other call that reads or writes one tenant's workloads
-- (create, claim, the reads, the operator's calls), workload.route_<name>(tenant,
-- <the original's arguments>, context): on Citus the API sends a call made on
-- a node that does not hold its tenant to the node that does through it
-- (workload_citus_distribute() makes them distributed functions, delegated
-- by the tenant).  Only the extension's owner may call a route_* function.
DO $$
DECLARE
    f pg_catalog.regprocedure;
    r record;
    overloads text[] := ARRAY[
        'workload_start(text, text, text, bigint)',
        'workload_heartbeat(text, text, text, bigint, interval, jsonb)',
        'workload_heartbeat_many(text, jsonb, interval)',
        'workload_checkpoint(text, text, text, bigint, jsonb)',
        'workload_complete(text, text, text, bigint, text, jsonb, text[], integer)',
        'workload_complete_many(text, jsonb)',
        'workload_fail(text, text, text, bigint, text, text)',
        'workload_confirm_cancel(text, text, text, bigint)',
        'workload_execution_context(text, text, text, bigint, text[])',
        'workload_resume(text, text, text, bigint, jsonb)',
        'workload_wait(text, text, text, bigint, text, text, timestamptz)'];
    routed text[] := overloads || ARRAY['workload_create(jsonb)',
        'workload_claim(text, text[], text, text, interval, integer, boolean)',
        'workload_get(text)', 'workload_history(text)',
        'workload_list(text, text, workload_state, integer)', 'workload_stats(text, text)',
        'workload_claim_id(text, text, text[], interval)', 'workload_cancel(text, text)',
        'workload_retry(text, text)', 'workload_timeout(text, text)',
        'workload_signal(text, text, text, jsonb)', 'workload_approve(text, text, boolean, text)',
        'workload_add_compensation(text, text, text, bigint, text, jsonb)',
        'workload_compensate(text, text)',
        'workload_redrive(text, text, text, text, text, integer)', 'workload_create_many(jsonb)'];
    sig text;
BEGIN
    FOREACH sig IN ARRAY routed LOOP
        f := ('@extschema@.' OPERATOR(pg_catalog.||) sig)::pg_catalog.regprocedure;
        SELECT p.proname, pg_catalog.pg_get_function_arguments(p.oid) AS args,
               pg_catalog.pg_get_function_identity_arguments(p.oid) AS ident,
               pg_catalog.pg_get_function_result(p.oid) AS result,
               CASE p.provolatile WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END AS vol
          INTO r FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) f;
        IF sig OPERATOR(pg_catalog.=) ANY (overloads) THEN
            EXECUTE pg_catalog.format('CREATE FUNCTION @extschema@.%I(tenant_id text, %s) RETURNS %s '
                'LANGUAGE C %s SET search_path = pg_catalog, pg_temp SET jit = off '
                'AS %L, %L', r.proname, r.args, r.result, r.vol, 'MODULE_PATHNAME', 'workload_tenant_first');
            EXECUTE pg_catalog.format('COMMENT ON FUNCTION @extschema@.%I(text, %s) IS %L', r.proname, r.ident,
                pg_catalog.format('%s, with the tenant first (the workload must be in it)', r.proname));
            EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION @extschema@.%I(text, %s) FROM PUBLIC', r.proname, r.ident);
            EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION @extschema@.%I(text, %s) TO workload_worker',
                r.proname, r.ident);
        END IF;
        EXECUTE pg_catalog.format('CREATE FUNCTION workload.%I(tenant text, %s, context jsonb) RETURNS %s '
            'LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off '
            'AS %L, %L', 'route_' OPERATOR(pg_catalog.||) r.proname, r.ident, r.result,
            'MODULE_PATHNAME', 'workload_routed');
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION workload.%I(text, %s, jsonb) FROM PUBLIC',
            'route_' OPERATOR(pg_catalog.||) r.proname, r.ident);
    END LOOP;
END
$$;
-- ===================================================================
-- end of Citus: sharding by tenant (issue 13)
-- ===================================================================

-- ============================================================================
-- Backup and restore (issue 14): pg_dump carries every row, pg_restore brings
-- them back.  docs/operations.md, "Backup and restore", gives the commands.
--
-- Every table is registered with pg_dump, whole: the extension's own install
-- writes only the signing key and the channel secret, and a restore must bring
-- the source's (every stored grant, run authority and checkpoint tag is a MAC
-- under one of its keys).  The sequences are registered so their values are
-- dumped: the next workload and the next event number after a restore are
-- above every restored one.  Every table and sequence of schema workload that
-- exists at this point is registered (test/t/023 checks that none is left out:
-- a table added later must be registered in its own script).
DO $$
DECLARE
    r pg_catalog.regclass;
BEGIN
    FOR r IN
        SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_depend d ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
            AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'
        JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
        WHERE e.extname OPERATOR(pg_catalog.=) 'workload'
          AND c.relnamespace OPERATOR(pg_catalog.=) 'workload'::pg_catalog.regnamespace
          AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'S']::"char"[])
        ORDER BY c.relname
    LOOP
        -- one call per statement: each updates the extension's catalog row
        PERFORM pg_catalog.pg_extension_config_dump(r, '');
    END LOOP;
END
$$;

-- A restore runs CREATE EXTENSION, then loads the tables, under
-- session_replication_role = replica (the raw-write guard lets a superuser's
-- COPY in then, and nothing else).  In that mode a fresh install keeps no
-- signing key and no channel secret of its own: the ones the dump brings are
-- the only ones, so the restored database signs with the key the source
-- signed with last and names NOTIFY channels as the source did.  Only rows
-- this very CREATE EXTENSION made are removed (an update of a database whose
-- keys were made before is left alone).
DO $$
BEGIN
    IF pg_catalog.current_setting('session_replication_role') OPERATOR(pg_catalog.=) 'replica'
       AND NOT EXISTS (SELECT 1 FROM workload.signing_keys k
                       WHERE k.xmin OPERATOR(pg_catalog.<>) pg_catalog.xid(pg_catalog.pg_current_xact_id()))
       AND NOT EXISTS (SELECT 1 FROM workload.channel_secret c
                       WHERE c.xmin OPERATOR(pg_catalog.<>) pg_catalog.xid(pg_catalog.pg_current_xact_id()))
       AND NOT EXISTS (SELECT 1 FROM workload.specs)
    THEN
        DELETE FROM workload.signing_keys;
        DELETE FROM workload.channel_secret;
    END IF;
END
$$;
-- ============================================================================ (end of backup and restore)
