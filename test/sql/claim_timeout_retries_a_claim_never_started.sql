-- A claim not started within timeouts.claim_ms is timed out by workload_tick like workload_timeout: retried under the policy, else dead-lettered (SPEC section 4, workload_tick: claim timeout).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, attempt_count int, retry_count int, claimed boolean, next_attempt_at timestamptz, deadline_at timestamptz)
LANGUAGE sql AS $$
    SELECT w.state::text, w.attempt_count, w.retry_count, w.claim_id IS NOT NULL, w.next_attempt_at, w.deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- c must be started within 5 s of its claim; the lease (1 hour) is far longer
SELECT t.create('c', '{"timeouts": {"claim_ms": 5000}}') AS c \gset
SELECT * FROM pg_temp.st(:'c');
SELECT claim_id, fencing_token FROM workload_claim_id(:'c', 'w1', '{}', '1 hour') \gset
SELECT * FROM pg_temp.st(:'c');

SET workload.clock_override = '2026-01-01 00:00:04.999+00';
SELECT workload_tick() ->> 'claim_timed_out' AS claim_timed_out;
-- 5 s: TIMED_OUT, the attempt ends, the claim is released, and it is READY again after the backoff (1 s)
SET workload.clock_override = '2026-01-01 00:00:05+00';
SELECT workload_tick();
SELECT * FROM pg_temp.st(:'c');
SELECT from_state, to_state, actor, evidence FROM workload_history(:'c') WHERE sequence > 3 ORDER BY sequence;
SELECT attempt_number, outcome, failure_kind FROM workload.attempt_log WHERE workload_id = :'c' ORDER BY attempt_number;
-- the slow worker is fenced off
SELECT workload_start(:'c', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- a claim started in time is not timed out by the claim timeout
SET workload.clock_override = '2026-01-01 00:00:06+00';
SELECT claim_id, fencing_token FROM workload_claim_id(:'c', 'w2', '{}', '1 hour') \gset
SET workload.clock_override = '2026-01-01 00:00:10+00';
SELECT workload_start(:'c', :'claim_id', 'w2', :fencing_token);
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_tick() ->> 'claim_timed_out' AS claim_timed_out;
SELECT state, claimed, deadline_at FROM pg_temp.st(:'c');

-- without "timeout" in retry_on: TIMED_OUT, then DEAD_LETTER
SELECT t.create('no-retry', '{"timeouts": {"claim_ms": 5000}, "retry_policy": {"retry_on": ["worker_failure"]}}') AS n \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'n', 'w1', '{}', '1 hour') \gset
SET workload.clock_override = '2026-01-01 00:01:05+00';
SELECT workload_tick() ->> 'claim_timed_out' AS claim_timed_out;
SELECT state, attempt_count, claimed FROM pg_temp.st(:'n');
SELECT to_state, evidence ->> 'cause' AS cause FROM workload_history(:'n') ORDER BY sequence DESC LIMIT 2;

-- a claim taken by workload_claim (not only workload_claim_id) gets the same deadline
SELECT t.create('batch', '{"timeouts": {"claim_ms": 5000}}') AS b \gset
SELECT count(*) AS claimed FROM workload_claim('w3', '{}', 'acme', 'billing', '1 hour', 10);
SELECT deadline_at FROM pg_temp.st(:'b');
