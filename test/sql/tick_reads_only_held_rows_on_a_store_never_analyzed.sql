-- The tick's scans of claimed workloads read the claimed workloads' rows, not every
-- workload, also planned on run rows no ANALYZE has seen (a new store, or the first
-- minute after an upgrade): before, the silent-heartbeat scan then read every workload
-- row of the store on every pass (storage built for the hot path).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- 2,000 READY workloads, 200 of them claimed (none with a heartbeat timeout)
SELECT count(t.create('q-' || g, '{}', 'acme', 'heaps')) FROM generate_series(1, 2000) g;
SELECT count(*) AS claimed FROM workload_claim('w', '{}', 'acme', 'heaps', max_items => 200);
-- the run rows as no ANALYZE has seen them (statistics removed; this session plans now)
DELETE FROM pg_statistic WHERE starelid = 'workload.runs'::regclass;
SELECT count(*) >= 2000 AS store_is_big FROM workload.workload_rows;

SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
CREATE TEMP TABLE before AS
SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n
FROM pg_stat_user_tables WHERE schemaname = 'workload' AND relname IN ('workload_rows', 'runs');
SET workload.clock_override = '2026-01-01 00:00:01+00';
SELECT t.recovered, t.heartbeat_timed_out, t.failed
FROM jsonb_to_record(workload_tick()) AS t(recovered int, heartbeat_timed_out int, failed int);
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
-- a pass reads each claimed workload's run row a few times (once to list the claimed
-- ones, then once by each scan) and its workload row once, not the store's thousands
-- (before: 2,000 workload rows, every one)
SELECT s.relname, coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0) - b.n
       <= CASE s.relname WHEN 'runs' THEN 5 ELSE 2 END * 200 AS reads_the_claimed_only
FROM pg_stat_user_tables s JOIN before b USING (relname)
WHERE s.schemaname = 'workload' ORDER BY 1;

-- statistics as autovacuum would make them again
ANALYZE workload.runs;
