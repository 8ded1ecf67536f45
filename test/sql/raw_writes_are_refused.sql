-- INSERT, UPDATE, DELETE, TRUNCATE, MERGE and COPY on the workload tables are refused with WORKLOAD_RAW_WRITE_DENIED (on the view workload.workloads, a join of two tables, by PostgreSQL, which writes through no such view), even for a superuser and under session_replication_role = replica (where a superuser's COPY, as a restore runs it, is the one write let in: test/t/023), and change nothing; the API still works afterwards (SPEC section 5).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- one workload that has been through every table: spec, row, events, attempt, checkpoint, result, dependency
SELECT t.create('parent') AS parent \gset
SELECT t.create('child', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'parent')))) AS child \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'parent', 'w1', '{}') \gset
SELECT workload_start(:'parent', :'claim_id', 'w1', :fencing_token);
SELECT workload_checkpoint(:'parent', :'claim_id', 'w1', :fencing_token, '{"step": 1}') IS NOT NULL AS checkpointed;
SELECT workload_complete(:'parent', :'claim_id', 'w1', :fencing_token, 'r1', '[1]') IS NOT NULL AS completed;
SELECT (SELECT count(*) FROM workload.specs) AS specs, (SELECT count(*) FROM workload.workloads) AS workloads,
       (SELECT count(*) FROM workload.attempts) AS attempts, (SELECT count(*) FROM workload.checkpoints) AS checkpoints,
       (SELECT count(*) FROM workload.results) AS results, (SELECT count(*) FROM workload.events) AS events,
       (SELECT count(*) FROM workload.dependencies) AS dependencies, (SELECT count(*) FROM workload.queue) AS queued, (SELECT count(*) FROM workload.leases) AS leased;
SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user;
SELECT t.fingerprint() AS before \gset

-- workload.workloads (a view of workload.workload_rows and workload.runs: not
-- updatable, PostgreSQL refuses it, 55000)
INSERT INTO workload.workloads (workload_id, tenant_id, application_id, state, priority, capability_snapshot,
    has_dependencies, created_at, updated_at, state_entered_at, next_attempt_at, attempt_count, retry_count,
    fencing_token, checkpoint_sequence)
VALUES ('workload_forged', 'acme', 'billing', 'READY', 100, '{}', false, now(), now(), now(), now(), 0, 0, 0, 0);
\echo :SQLSTATE
UPDATE workload.workloads SET state = 'SUCCEEDED' WHERE workload_id = :'child';
\echo :SQLSTATE
UPDATE workload.workloads SET fencing_token = fencing_token + 1 WHERE false;
\echo :SQLSTATE
DELETE FROM workload.workloads WHERE workload_id = :'child';
\echo :SQLSTATE
-- workload.runs: a claimed workload's state
INSERT INTO workload.runs (tenant_id, seq, next_attempt_at, retry_count, wait_count,
    checkpoint_sequence, attempt_count, fencing_token, state, state_entered_at, updated_at)
SELECT tenant_id, seq, now(), 0, 0, 0, 0, 0, 'SUCCEEDED', now(), now() FROM workload.workload_rows;
\echo :SQLSTATE
UPDATE workload.runs SET fencing_token = fencing_token + 1;
\echo :SQLSTATE
DELETE FROM workload.runs;
\echo :SQLSTATE
TRUNCATE workload.runs;
\echo :SQLSTATE
-- workload.workload_rows
UPDATE workload.workload_rows SET state = 'SUCCEEDED' WHERE workload_id = :'child';
\echo :SQLSTATE
DELETE FROM workload.workload_rows WHERE workload_id = :'child';
\echo :SQLSTATE
TRUNCATE workload.workload_rows;
\echo :SQLSTATE
-- workload.specs
INSERT INTO workload.specs SELECT * FROM workload.specs WHERE false;
\echo :SQLSTATE
UPDATE workload.specs SET input = '{}', max_attempts = 1000;
\echo :SQLSTATE
-- workload.spec_authority
UPDATE workload.spec_authority SET authorization_snapshot = '{}';
\echo :SQLSTATE
DELETE FROM workload.spec_authority;
\echo :SQLSTATE
DELETE FROM workload.specs;
\echo :SQLSTATE
TRUNCATE workload.specs;
\echo :SQLSTATE
-- workload.attempts
INSERT INTO workload.attempts SELECT * FROM workload.attempts;
\echo :SQLSTATE
UPDATE workload.attempts SET outcome = 'FAILED';
\echo :SQLSTATE
DELETE FROM workload.attempts;
\echo :SQLSTATE
TRUNCATE workload.attempts;
\echo :SQLSTATE
-- workload.checkpoints
INSERT INTO workload.checkpoints SELECT workload_id, sequence + 1, checkpoint_id, attempt_number, fencing_token,
    '{"step": 99}', state_hash, created_at FROM workload.checkpoints;
\echo :SQLSTATE
UPDATE workload.checkpoints SET state = '{"step": 99}';
\echo :SQLSTATE
DELETE FROM workload.checkpoints;
\echo :SQLSTATE
TRUNCATE workload.checkpoints;
\echo :SQLSTATE
-- workload.results (a view of the run rows' results): refused as a table is
-- (a view cannot be truncated)
INSERT INTO workload.results SELECT 'r2', workload_id, output, output_hash, artifacts, schema_version, claim_id,
    worker_id, fencing_token, attempt_number, created_at FROM workload.results;
\echo :SQLSTATE
UPDATE workload.results SET output = '[2]';
\echo :SQLSTATE
DELETE FROM workload.results;
\echo :SQLSTATE
TRUNCATE workload.results;
\echo :SQLSTATE
-- workload.event_rows, and workload.events (the view of them and of the
-- events run rows carry): refused alike (a view cannot be truncated)
INSERT INTO workload.event_rows (tenant_id, workload_seq, from_state, to_state, actor, at, db_role, evidence)
SELECT tenant_id, seq, 'READY', 'SUCCEEDED', 'forger', now(), current_user, '{}' FROM workload.workloads
WHERE workload_id = :'child';
\echo :SQLSTATE
UPDATE workload.event_rows SET actor = 'someone else';
\echo :SQLSTATE
DELETE FROM workload.event_rows;
\echo :SQLSTATE
TRUNCATE workload.event_rows;
\echo :SQLSTATE
INSERT INTO workload.events (tenant_id, workload_seq, from_state, to_state, actor, at, db_role, evidence)
SELECT tenant_id, seq, 'READY', 'SUCCEEDED', 'forger', now(), current_user, '{}' FROM workload.workloads
WHERE workload_id = :'child';
\echo :SQLSTATE
UPDATE workload.events SET actor = 'someone else';
\echo :SQLSTATE
DELETE FROM workload.events;
\echo :SQLSTATE
TRUNCATE workload.events;
\echo :SQLSTATE
-- workload.queue: a forged queue row would hand out work nobody made ready
INSERT INTO workload.queue SELECT tenant_id, seq + 1000, application_id, 100, created_at,
    created_at, '{}', false FROM workload.workloads;
\echo :SQLSTATE
UPDATE workload.queue SET priority = 1000;
\echo :SQLSTATE
DELETE FROM workload.queue;
\echo :SQLSTATE
TRUNCATE workload.queue;
\echo :SQLSTATE
-- workload.leases, the run rows that hold a claim (a view): a lease deleted would
-- hide a claim from lease recovery; a write through the view reaches workload.runs
DELETE FROM workload.leases;
\echo :SQLSTATE
INSERT INTO workload.leases SELECT tenant_id, seq + 1000 FROM workload.workloads;
\echo :SQLSTATE
-- workload.dependencies
INSERT INTO workload.dependencies VALUES (:'parent', :'child', 'SUCCEEDED', 'acme');
\echo :SQLSTATE
UPDATE workload.dependencies SET required_state = 'FAILED';
\echo :SQLSTATE
DELETE FROM workload.dependencies;
\echo :SQLSTATE
TRUNCATE workload.dependencies;
\echo :SQLSTATE
-- all of them at once, and the other ways in: MERGE, COPY, INSERT ... ON CONFLICT
TRUNCATE workload.workload_rows, workload.runs, workload.queue, workload.specs, workload.attempts, workload.checkpoints,
         workload.event_rows, workload.dependencies;
\echo :SQLSTATE
MERGE INTO workload.workload_rows w USING (SELECT :'child' AS id) s ON w.workload_id = s.id
WHEN MATCHED THEN UPDATE SET state = 'SUCCEEDED';
\echo :SQLSTATE
-- nor TRUNCATE or MERGE on the view, which PostgreSQL refuses on any view
TRUNCATE workload.workloads;
\echo :SQLSTATE
MERGE INTO workload.workloads w USING (SELECT :'child' AS id) s ON w.workload_id = s.id
WHEN MATCHED THEN UPDATE SET state = 'SUCCEEDED';
\echo :SQLSTATE
COPY workload.dependencies FROM stdin;
workload_x	workload_y	SUCCEEDED	acme
\.
\echo :SQLSTATE
INSERT INTO workload.dependencies VALUES (:'child', :'parent', 'FAILED', 'acme')
ON CONFLICT (tenant_id, workload_id, depends_on) DO UPDATE SET required_state = 'FAILED';
\echo :SQLSTATE
-- a writable CTE and a function body are raw writes too
WITH gone AS (DELETE FROM workload.events RETURNING 1) SELECT count(*) FROM gone;
\echo :SQLSTATE
CREATE OR REPLACE FUNCTION t.sneak() RETURNS void LANGUAGE sql AS $$ UPDATE workload.runs SET state = 'SUCCEEDED' $$;
SELECT t.sneak();
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- a schedule, so workload.schedules has a row to forge from
SELECT workload_schedule('acme', 'billing', 'hourly', '@hourly', t.spec('x') - 'idempotency_key' - 'tenant_id' - 'application_id') ->> 'next_run_at' AS next_run_at;
SELECT md5(string_agg(s::text, '|')) AS schedules_before FROM workload.schedules s \gset

-- the same under session_replication_role = replica, which skips ordinary triggers
SET session_replication_role = replica;
CREATE OR REPLACE FUNCTION t.raw_write(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'not refused';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;
-- (an insert copies every column a writer may set: generated ones are derived)
CREATE FUNCTION pg_temp.settable(tbl text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)
    FROM information_schema.columns
    WHERE table_schema = 'workload' AND table_name = tbl AND is_generated = 'NEVER' $$;
SELECT tbl, op, t.raw_write(format(sql, tbl, pg_temp.settable(tbl))) AS outcome
FROM unnest(ARRAY['workload_rows', 'runs', 'queue', 'specs', 'spec_authority', 'attempts', 'checkpoints', 'event_rows', 'dependencies',
                  'schedules', 'schedule_events']) tbl,
     (VALUES (1, 'insert', 'INSERT INTO workload.%1$I (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM workload.%1$I'),
             (2, 'update', 'UPDATE workload.%I SET tenant_id = tenant_id'),
             (3, 'delete', 'DELETE FROM workload.%I'),
             (4, 'truncate', 'TRUNCATE workload.%I')) ops(n, op, sql)
ORDER BY tbl, n;
SELECT t.fingerprint() = :'before' AS unchanged,
       (SELECT md5(string_agg(s::text, '|')) FROM workload.schedules s) = :'schedules_before' AS schedules_unchanged,
       (SELECT count(*) FROM workload.schedule_events) AS schedule_events;
RESET session_replication_role;

-- the raw-write triggers are still there and ALWAYS enabled
SELECT c.relname, tg.tgenabled
FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'workload' AND tg.tgname LIKE '%raw_write%' ORDER BY c.relname;

-- the API still works: the child, whose dependency succeeded, runs to completion
SELECT claim_id, fencing_token FROM workload_claim('w2', '{}', 'acme', 'billing', start => true) \gset
SELECT workload_complete(:'child', :'claim_id', 'w2', :fencing_token, 'r-child', '[2]')->>'result_id' AS result_id;
SELECT workload_get(:'child')->>'state' AS child_state, workload_create(t.spec('after'))->>'state' AS new_workload;
