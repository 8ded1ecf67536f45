-- A worker's session keeps its statements' plans for its whole life. Plans made while the tables were empty must still reach rows by key once the tables have grown: a job reads a few rows of each table, not all of them (storage built for the hot path, issue "Performance").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- this session plans every hot-path statement now, on empty tables that
-- have been analyzed while empty (as autovacuum does in a new deployment)
SELECT t.create('first-' || g) IS NOT NULL FROM generate_series(1, 3) g;
ANALYZE workload.workloads, workload.specs, workload.attempts, workload.events, workload.results,
    workload.dependencies, workload.queue, workload.leases;
CREATE TEMP TABLE c AS
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 2, start => true);
SELECT count(*) FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token)) FROM c), '1 minute');
SELECT count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '{}'::jsonb)) FROM c));
SELECT workload_id AS id, claim_id AS claim, fencing_token AS token FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT workload_start(:'id', :'claim', 'w1', :token);
SELECT workload_heartbeat(:'id', :'claim', 'w1', :token, '1 minute') IS NOT NULL;
SELECT workload_complete(:'id', :'claim', 'w1', :token, 'r-' || :'id', '{}') IS NOT NULL;

-- the tables grow under those plans: 3000 workloads of another application,
-- claimed and completed in batches (attempts, events, results, specs grow)
SELECT count(t.create('bulk-' || g, '{}', 'acme', 'bulk')) FROM generate_series(1, 3000) g;
DO $$
BEGIN
    FOR i IN 1..6 LOOP
        PERFORM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
            'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id,
            'output', '{}'::jsonb))
            FROM workload_claim('w1', '{}', 'acme', 'bulk', max_items => 500, start => true)));
    END LOOP;
END $$;
SELECT count(*) AS bulk_succeeded FROM workload.workloads WHERE application_id = 'bulk' AND state = 'SUCCEEDED';
-- autovacuum analyzes the grown workloads table (here, by hand): the plans
-- over it are made again, still held to indexes, and the claim now walks the
-- partial claim index.  The other tables keep their empty-table statistics
-- and the plans made on them.
ANALYZE workload.workloads;

-- now count the rows each table gives up to 20 more jobs in billing: 10 in
-- one batch (claim, heartbeat_many, complete_many), 10 one by one (claim,
-- start, heartbeat, complete)
SELECT count(t.create('later-' || g)) FROM generate_series(1, 20) g;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
CREATE TEMP TABLE before AS
SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n
FROM pg_stat_user_tables WHERE schemaname = 'workload';
CREATE TEMP TABLE c2 AS
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10, start => true);
SELECT count(*) FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token)) FROM c2), '1 minute');
SELECT outcome, count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '{}'::jsonb)) FROM c2))
GROUP BY 1;
DO $$
DECLARE r record;
BEGIN
    FOR i IN 1..10 LOOP
        SELECT * INTO r FROM workload_claim('w1', '{}', 'acme', 'billing');
        PERFORM workload_start(r.workload_id, r.claim_id, 'w1', r.fencing_token);
        PERFORM workload_heartbeat(r.workload_id, r.claim_id, 'w1', r.fencing_token, '1 minute');
        PERFORM workload_complete(r.workload_id, r.claim_id, 'w1', r.fencing_token, 'r-' || r.workload_id, '{}');
    END LOOP;
END $$;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
-- rows read per job, per table: a handful, though each table holds thousands
SELECT s.relname, (coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0) - b.n) / 20.0 <= 10 AS few_rows_per_job,
       (SELECT count(*) FROM workload.events) > 3000 AS events_table_is_big
FROM pg_stat_user_tables s JOIN before b USING (relname)
WHERE s.schemaname = 'workload' AND s.relname IN ('workloads', 'queue', 'leases', 'specs', 'attempts', 'events', 'results', 'dependencies')
ORDER BY 1;
-- (counted after the measurement, which reads every workload)
SELECT count(*) AS later_succeeded FROM workload.workloads WHERE state = 'SUCCEEDED' AND application_id = 'billing';
