-- Included by the plans_* regress tests (not a test itself): 20 more jobs in
-- acme/billing, and how many rows each table gave up for them.
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
WHERE s.schemaname = 'workload' AND s.relname IN ('workload_rows', 'queue', 'runs', 'specs', 'attempts', 'event_rows', 'dependencies')
ORDER BY 1;
-- (counted after the measurement, which reads every workload)
SELECT count(*) AS later_succeeded FROM workload.workloads WHERE state = 'SUCCEEDED' AND application_id = 'billing';
