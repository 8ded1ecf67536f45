-- A failure is retried under retry_policy with capped backoff, then dead-lettered (SPEC section 4, workload_fail).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'fail-tests') $$;


-- exponential backoff: 1 s, 2 s, then 4 s capped at max_delay_ms 3 s; the 4th failure dead-letters
SELECT pg_temp.make('exp', '{"retry_policy": {"max_attempts": 4, "initial_delay_ms": 1000, "max_delay_ms": 3000, "backoff": "exponential"}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'boom 1');
SELECT * FROM t.st(:'id');
-- not due yet: it cannot be claimed a moment before its delay is over
SET workload.clock_override = '2026-01-01 00:00:00.999+00';
SELECT count(*) AS claimed FROM workload_claim('w1', '{}', 'fail-tests', 'billing');
SET workload.clock_override = '2026-01-01 00:00:01+00';
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'boom 2');
SELECT * FROM t.st(:'id');
SET workload.clock_override = '2026-01-01 00:00:03+00';
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'boom 3');
SELECT * FROM t.st(:'id');
SET workload.clock_override = '2026-01-01 00:00:06+00';
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'boom 4');
SELECT * FROM t.st(:'id');
-- last_failure is the latest failure: kind, error, attempt (and fence and time)
SELECT jsonb_pretty(workload_get(:'id') -> 'last_failure');
-- every attempt row ended FAILED with its kind and error
SELECT attempt_number, outcome, failure_kind, error, finished_at IS NOT NULL AS finished
FROM workload.attempt_log WHERE workload_id = :'id' ORDER BY attempt_number;
-- the history: each failure is FAILED, then READY with its delay, the last DEAD_LETTER
SELECT event_type, from_state, to_state, actor, evidence - 'at' AS evidence
FROM workload_history(:'id') WHERE to_state IN ('FAILED', 'READY', 'DEAD_LETTER') ORDER BY sequence;

-- fixed backoff: every delay is initial_delay_ms
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT pg_temp.make('fixed', '{"retry_policy": {"max_attempts": 3, "initial_delay_ms": 500, "max_delay_ms": 10000, "backoff": "fixed"}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SELECT * FROM t.st(:'id');
SET workload.clock_override = '2026-01-01 00:00:00.5+00';
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SELECT * FROM t.st(:'id');
SET workload.clock_override = '2026-01-01 00:00:01+00';
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SELECT * FROM t.st(:'id');

-- a kind not in retry_on is not retried, whatever attempts remain
SELECT pg_temp.make('validation') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'validation', 'field n is missing');
SELECT * FROM t.st(:'id');
SELECT evidence - 'at' AS evidence FROM workload_history(:'id') WHERE to_state = 'DEAD_LETTER';
SELECT outcome, failure_kind, error FROM workload.attempt_log WHERE workload_id = :'id' ORDER BY attempt_number;

-- max_attempts 1: the first retryable failure is already the last
SELECT pg_temp.make('once', '{"retry_policy": {"max_attempts": 1}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SELECT * FROM t.st(:'id');
SELECT evidence - 'at' AS evidence FROM workload_history(:'id') WHERE to_state = 'DEAD_LETTER';

-- a claimed workload that was never started cannot fail: CLAIMED -> FAILED is not in the table
SELECT pg_temp.make('claimed') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'id', 'w1', '{}') \gset
SELECT t.fingerprint() AS before \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT * FROM t.st(:'id');
