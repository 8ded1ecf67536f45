-- A run longer than timeouts.execution_ms (from its start; checkpoints and heartbeats do not extend it) is timed out by workload_tick and retried under the policy (SPEC section 4, workload_tick: execution timeout).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, attempt_count int, claimed boolean, deadline_at timestamptz)
LANGUAGE sql AS $$
    SELECT w.state::text, w.attempt_count, w.claim_id IS NOT NULL, w.deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- x may run 30 s per attempt, twice at most
SELECT t.create('x', '{"timeouts": {"execution_ms": 30000}, "retry_policy": {"max_attempts": 2}}') AS x \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'x', 'w1', '{}', '1 hour') \gset
-- started at 5 s: its deadline is 35 s
SET workload.clock_override = '2026-01-01 00:00:05+00';
SELECT workload_start(:'x', :'claim_id', 'w1', :fencing_token);
SELECT * FROM pg_temp.st(:'x');
-- a checkpoint and a heartbeat at 20 s keep that deadline
SET workload.clock_override = '2026-01-01 00:00:20+00';
SELECT workload_checkpoint(:'x', :'claim_id', 'w1', :fencing_token, '{"done": 10}') ->> 'sequence' AS sequence;
SELECT workload_heartbeat(:'x', :'claim_id', 'w1', :fencing_token, '1 hour') ->> 'state' AS state;
SELECT * FROM pg_temp.st(:'x');

SET workload.clock_override = '2026-01-01 00:00:34.999+00';
SELECT workload_tick() ->> 'execution_timed_out' AS execution_timed_out;
SET workload.clock_override = '2026-01-01 00:00:35+00';
SELECT workload_tick() ->> 'execution_timed_out' AS execution_timed_out;
SELECT * FROM pg_temp.st(:'x');
SELECT from_state, to_state, actor, evidence - 'fencing_token' - 'worker_id' AS evidence
FROM workload_history(:'x') WHERE to_state IN ('TIMED_OUT', 'READY', 'DEAD_LETTER') AND sequence > 2 ORDER BY sequence;
-- the late worker is fenced off: its completion is refused
SELECT workload_complete(:'x', :'claim_id', 'w1', :fencing_token, 'late-result', '[]');
\echo :SQLSTATE

-- the second attempt gets its own 30 s from its own start; it is the last, so it dead-letters
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT claim_id, fencing_token FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT * FROM pg_temp.st(:'x');
SET workload.clock_override = '2026-01-01 00:01:30+00';
SELECT workload_tick() ->> 'execution_timed_out' AS execution_timed_out;
SELECT * FROM pg_temp.st(:'x');
SELECT attempt_number, outcome, failure_kind FROM workload.attempt_log WHERE workload_id = :'x' ORDER BY attempt_number;

-- a run whose cancellation was requested is left to its worker and its lease, not timed out
SET workload.clock_override = '2026-01-01 00:02:00+00';
SELECT t.create('cancelling', '{"timeouts": {"execution_ms": 30000}}') AS c \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'c', 'w1', '{}', '1 hour') \gset
SELECT workload_start(:'c', :'claim_id', 'w1', :fencing_token);
SELECT workload_cancel(:'c', 'ops:alice');
SET workload.clock_override = '2026-01-01 00:03:00+00';
SELECT workload_tick() ->> 'execution_timed_out' AS execution_timed_out;
SELECT * FROM pg_temp.st(:'c');
