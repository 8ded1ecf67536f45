-- workload_purge finds completions carried on run rows in creation order among the workloads created before its cutoff: a call reads the old run rows, not the young ones a retention period keeps, a workload whose creation overlapped younger ones goes in a later call, and one a dependent still waits on does not hold a batch's place (SPEC section 4, workload_purge).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
-- what this shows is how the direct paths store rows: not there to see when
-- every call runs through its statements
SELECT COALESCE(current_setting('workload.statement_path', true), 'off') AS statement_path \gset
\if :statement_path
\echo 'skipped: the direct paths do not run (workload.statement_path is on)'
\quit
\endif
\set ECHO all
CREATE FUNCTION pg_temp.finish(n int) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
        'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
        'result_id', 'r-' || workload_id, 'output', '{}'::jsonb))
        FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => n, start => true)))
$$;

-- five created and completed on January 1st, two hundred on the 5th
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT count(t.create('old' || g)) FROM generate_series(1, 5) g;
SELECT pg_temp.finish(5) AS finished_old;
SET workload.clock_override = '2026-01-05 00:00:00+00';
SELECT count(t.create('young' || g)) FROM generate_series(1, 200) g;
SELECT pg_temp.finish(200) AS finished_young;
-- one more whose creation time says January 1st (a transaction that began then
-- and created it after the young ones: its creation sequence is the highest)
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT t.create('late') AS late \gset
SELECT pg_temp.finish(1) AS finished_late;
SELECT count(*) FILTER (WHERE finished_at IS NOT NULL) AS carried FROM workload.runs;

-- January 6th, three days kept: the five go; the young run rows are not read
-- (of 206 run rows, in this transaction)
SET workload.clock_override = '2026-01-06 00:00:00+00';
-- (the counts so far are sent to the statistics system, so that the
-- transaction's own counters start from nothing)
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT workload_purge('3 days', 100) AS purged;
-- (run rows fetched through any of its indexes, or returned by a scan of the table)
SELECT (SELECT sum(pg_stat_get_xact_tuples_fetched(i.indexrelid)) FROM pg_index i
        WHERE i.indrelid = 'workload.runs'::regclass)
       + pg_stat_get_xact_tuples_returned('workload.runs'::regclass) AS run_rows_read \gset
SELECT :run_rows_read < 40 AS read_few_run_rows;
COMMIT;
SELECT count(*) AS left, count(*) FILTER (WHERE workload_id = :'late') AS late_left
FROM workload.workloads;

-- January 9th: the young ones are old now, and the late one goes with them
SET workload.clock_override = '2026-01-09 00:00:00+00';
SELECT workload_purge('3 days', 1000) AS purged;
SELECT count(*) AS left FROM workload.workloads;
SELECT (SELECT count(*) FROM workload.runs) AS runs, (SELECT count(*) FROM workload.specs) AS specs;

-- a completion that a dependent still waits on does not hold a batch's place:
-- of two, the older has a dependent not yet finished; a batch of one takes the other
SET workload.clock_override = '2026-02-01 00:00:00+00';
SELECT t.create('first') AS first \gset
SELECT t.create('second') AS second \gset
SELECT pg_temp.finish(2) AS finished;
SELECT t.create('waits', jsonb_build_object('dependencies', jsonb_build_array(
    jsonb_build_object('workload_id', :'first', 'required_state', 'SUCCEEDED')))) IS NOT NULL AS dependent;
SET workload.clock_override = '2026-02-10 00:00:00+00';
SELECT workload_purge('3 days', 1) AS purged;
SELECT workload_id = :'first' AS is_first, state FROM workload.workloads
WHERE workload_id IN (:'first', :'second');
