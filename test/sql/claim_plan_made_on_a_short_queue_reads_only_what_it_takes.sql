-- A worker's claim, planned when the queue held a few rows that no ANALYZE had seen, still takes the first READY workload by the claim's index once thousands are queued behind it: each claim reads about the rows it takes, not all of its tenant's (it read and sorted all of them, 64 ms a claim with 100,000 queued, until an ANALYZE made the plan again).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
-- every claim from the queue's start (the scan a session makes every
-- workload.claim_full_scan_every claims, and its first)
SET workload.claim_full_scan_every = 1;

-- this session plans its claim now, on a queue of three rows no ANALYZE has seen
SELECT count(t.create('first-' || g)) FROM generate_series(1, 3) g;
SELECT count(*) AS claimed FROM workload_claim('w1', '{}', 'acme', 'billing');
SELECT count(*) AS never_analyzed FROM pg_stat_user_tables
WHERE schemaname = 'workload' AND relname = 'queue' AND last_analyze IS NULL AND last_autoanalyze IS NULL;

-- 3000 more queued behind them, then ten claims of one under that plan
SELECT count(t.create('backlog-' || g)) FROM generate_series(1, 3000) g;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
CREATE TEMP TABLE before AS
SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n
FROM pg_stat_user_tables WHERE schemaname = 'workload' AND relname = 'queue';
DO $$
BEGIN
    FOR i IN 1..10 LOOP
        PERFORM * FROM workload_claim('w1', '{}', 'acme', 'billing');
    END LOOP;
END $$;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT (coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0) - b.n) / 10.0 <= 5 AS few_queue_rows_per_claim
FROM pg_stat_user_tables s, before b WHERE s.schemaname = 'workload' AND s.relname = 'queue';
-- the eleven taken are the first eleven queued
SELECT count(*) AS claimed, string_agg(s.idempotency_key, ',' ORDER BY w.seq) AS taken
FROM workload.workloads w JOIN workload.specs s ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
WHERE w.state = 'CLAIMED';
