-- An operator's retry and timeout move a workload under its retry policy; other states refuse (SPEC section 4, workload_retry and workload_timeout).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'retry-tests') $$;


-- retry: a DEAD_LETTER workload goes back to READY, due now, and the operator is the event's actor
SELECT pg_temp.make('dead', '{"retry_policy": {"max_attempts": 1}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SET workload.clock_override = '2026-01-01 00:05:00+00';
SELECT workload_retry(:'id', 'ops:alice');
SELECT * FROM t.st(:'id');
SELECT from_state, to_state, actor, evidence FROM workload_history(:'id') ORDER BY sequence DESC LIMIT 1;
SELECT attempt = 2 AS second_attempt FROM workload_claim_id(:'id', 'w2', '{}');

-- retry refuses READY, RUNNING and SUCCEEDED, and changes nothing
SELECT pg_temp.make('ready') AS ready \gset
SELECT pg_temp.make('running') AS running \gset
SELECT * FROM t.run(:'running') \gset running_
SELECT pg_temp.make('done') AS done \gset
SELECT * FROM t.run(:'done') \gset
SELECT workload_complete(:'done', :'claim_id', 'w1', :fencing_token, 'retry-tests-result-done', '{}') ->> 'result_id' AS result_id;
SELECT t.fingerprint() AS before \gset
SELECT workload_retry(:'ready', 'ops:alice');
\echo :SQLSTATE
SELECT workload_retry(:'running', 'ops:alice');
\echo :SQLSTATE
SELECT workload_retry(:'done', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- timeout on RUNNING, "timeout" in retry_on (the default) and attempts left: TIMED_OUT, then READY with backoff
SELECT workload_timeout(:'running', 'ops:alice');
SELECT * FROM t.st(:'running');
SELECT from_state, to_state, actor, evidence - 'fencing_token' AS evidence
FROM workload_history(:'running') WHERE to_state IN ('TIMED_OUT', 'READY') ORDER BY sequence;
SELECT attempt_number, outcome, failure_kind, finished_at IS NOT NULL AS finished
FROM workload.attempt_log WHERE workload_id = :'running' ORDER BY attempt_number;
-- the claim is gone: the timed-out worker can no longer complete
SELECT workload_complete(:'running', :'running_claim_id', 'w1', :running_fencing_token, 'retry-tests-result-late', '{}');
\echo :SQLSTATE

-- without "timeout" in retry_on: TIMED_OUT, then DEAD_LETTER
SELECT pg_temp.make('no-timeout-retry', '{"retry_policy": {"retry_on": ["worker_failure"]}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_timeout(:'id', 'ops:alice');
SELECT from_state, to_state, actor, evidence - 'fencing_token' AS evidence
FROM workload_history(:'id') WHERE to_state IN ('TIMED_OUT', 'DEAD_LETTER') ORDER BY sequence;

-- no attempts left: DEAD_LETTER too
SELECT pg_temp.make('last-attempt', '{"retry_policy": {"max_attempts": 1}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_timeout(:'id', 'ops:alice');

-- a CLAIMED workload times out like a running one
SELECT pg_temp.make('claimed') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'id', 'w1', '{}') \gset
SELECT workload_timeout(:'id', 'ops:alice');
SELECT outcome FROM workload.attempt_log WHERE workload_id = :'id' ORDER BY attempt_number;

-- on READY: TIMED_OUT, then READY again under the policy (no attempt to close)
SELECT workload_timeout(:'ready', 'ops:alice');
SELECT * FROM t.st(:'ready');
SELECT from_state, to_state FROM workload_history(:'ready') ORDER BY sequence;
SELECT count(*) AS attempts FROM workload.attempt_log WHERE workload_id = :'ready';

-- timeout refuses SUCCEEDED and DEAD_LETTER (no such edge), and changes nothing
SELECT pg_temp.make('dead2', '{"retry_policy": {"max_attempts": 1}}') AS dead2 \gset
SELECT * FROM t.run(:'dead2') \gset
SELECT workload_fail(:'dead2', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SELECT t.fingerprint() AS before \gset
SELECT workload_timeout(:'done', 'ops:alice');
\echo :SQLSTATE
SELECT workload_timeout(:'dead2', 'ops:alice');
\echo :SQLSTATE

-- NULL arguments and unknown ids
SELECT workload_retry(NULL, 'ops:alice');
\echo :SQLSTATE
SELECT workload_retry(:'dead2', NULL);
\echo :SQLSTATE
SELECT workload_timeout(NULL, 'ops:alice');
\echo :SQLSTATE
SELECT workload_timeout(:'ready', NULL);
\echo :SQLSTATE
SELECT workload_retry('workload_000000000000000000000000', 'ops:alice');
\echo :SQLSTATE
SELECT workload_timeout('workload_000000000000000000000000', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
