-- A worker's session keeps its statements' plans for its whole life. Plans made while the tables were empty must still reach rows by key once the tables have grown: a job reads a few rows of each table, not all of them (storage built for the hot path, issue "Performance").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- this session plans every hot-path statement now, on empty tables that
-- have been analyzed while empty (as autovacuum does in a new deployment)
SELECT t.create('first-' || g) IS NOT NULL FROM generate_series(1, 3) g;
ANALYZE workload.workload_rows, workload.specs, workload.attempts, workload.event_rows,
    workload.dependencies, workload.queue, workload.runs;
\i test/include/plans_first_jobs_then_growth.sql
-- autovacuum analyzes the grown workloads table (here, by hand): the plans
-- over it are made again, still held to indexes, and the claim now walks the
-- partial claim index.  The other tables keep their empty-table statistics
-- and the plans made on them.
ANALYZE workload.workload_rows;

\i test/include/plans_rows_read_per_job.sql
