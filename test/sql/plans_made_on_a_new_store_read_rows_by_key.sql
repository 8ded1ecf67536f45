-- A worker that connects to a new store plans its statements before autovacuum has ever analyzed a table. Those plans, kept for the session, must reach rows by key once the tables have grown without any ANALYZE: a job reads a few rows of each table, not all of its tenant's.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- this session plans every hot-path statement now, on new tables that no
-- ANALYZE has seen
SELECT t.create('first-' || g) IS NOT NULL FROM generate_series(1, 3) g;
SELECT count(*) AS never_analyzed FROM pg_stat_user_tables
WHERE schemaname = 'workload' AND last_analyze IS NULL AND last_autoanalyze IS NULL
  AND relname IN ('workload_rows', 'queue', 'runs', 'specs', 'attempts', 'event_rows', 'dependencies');
\i test/include/plans_first_jobs_then_growth.sql
-- no ANALYZE: the plans made on the new tables are the ones that run

\i test/include/plans_rows_read_per_job.sql
