-- workload_stats gives an operator the first picture of a tenant and application: counts per state, due and delayed READY work, the oldest due READY age, held work, dead letters, completions and failures over the last minute (SPEC section 4).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- six workloads at midnight; a seventh in another application is not counted
SELECT count(t.create('s' || g, '{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 60000}}')) FROM generate_series(1, 6) g;
SELECT t.create('other-app', '{}', 'acme', 'payroll') IS NOT NULL AS other;
SELECT workload_stats('acme', 'billing') AS s \gset
SELECT :'s'::jsonb -> 'states' ->> 'READY' AS ready, :'s'::jsonb ->> 'total' AS total,
       :'s'::jsonb ->> 'oldest_due_ready_age_ms' AS oldest_age_ms, :'s'::jsonb ->> 'at' AS at;

-- ten seconds later: two complete, one fails and waits a minute, one fails for good, one runs
SET workload.clock_override = '2026-01-01 00:00:10+00';
CREATE TEMP TABLE c AS SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 5, start => true) ORDER BY workload_id;
SELECT count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '[]'::jsonb))
    FROM (SELECT * FROM c ORDER BY workload_id LIMIT 2) x));
SELECT workload_fail(workload_id, claim_id, 'w1', fencing_token, 'worker_failure', 'flaky') FROM (SELECT * FROM c ORDER BY workload_id OFFSET 2 LIMIT 1) x;
SELECT workload_fail(workload_id, claim_id, 'w1', fencing_token, 'validation', 'bad') FROM (SELECT * FROM c ORDER BY workload_id OFFSET 3 LIMIT 1) x;
SELECT jsonb_pretty(workload_stats('acme', 'billing') - 'at');

-- two minutes later the last minute is quiet; the delayed retry is due and has waited a minute
SET workload.clock_override = '2026-01-01 00:02:10+00';
SELECT s ->> 'completed_last_minute' AS completed, s ->> 'failed_last_minute' AS failed,
       s ->> 'ready_due' AS due, s ->> 'ready_delayed' AS delayed, s ->> 'oldest_due_ready_age_ms' AS oldest_age_ms
FROM workload_stats('acme', 'billing') s;

-- an application with no work answers zeros, not an error
SELECT s ->> 'total' AS total, s ->> 'oldest_due_ready_age_ms' AS oldest_age_ms, s -> 'states' ->> 'READY' AS ready
FROM workload_stats('acme', 'nothing-here') s;

-- refusals
SELECT workload_stats(NULL, 'billing');
\echo :SQLSTATE
SELECT workload_stats('acme', '  ');
\echo :SQLSTATE
SET client_min_messages = warning;
DROP ROLE IF EXISTS st_outsider;
RESET client_min_messages;
CREATE ROLE st_outsider;
GRANT workload_client TO st_outsider;
SET ROLE st_outsider;
SELECT workload_stats('acme', 'billing');
\echo :SQLSTATE
RESET ROLE;
DROP ROLE st_outsider;
