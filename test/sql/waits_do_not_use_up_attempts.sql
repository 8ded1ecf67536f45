-- An attempt that ends in a durable wait is not a failure: a workload that waits N times still gets max_attempts runs that may fail (attempts remain while attempt_count - wait_count < max_attempts) (SPEC section 7, durable waits; section 4, workload_fail).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- a three-step approval chain with max_attempts 2
SELECT t.create('chain', '{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 0}}') AS id \gset
DO $$
DECLARE
    c record;
BEGIN
    FOR i IN 1..3 LOOP
        SELECT * INTO c FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true);
        PERFORM workload_wait(c.workload_id, c.claim_id, 'w', c.fencing_token, 'human_approval', 'step-' || i,
                              '2026-01-02 00:00:00+00');
        PERFORM workload_approve(c.workload_id, 'human:alice', true, NULL);
    END LOOP;
END $$;
SELECT state, attempt_count, wait_count, retry_count FROM workload.workloads WHERE workload_id = :'id';

-- the fourth attempt fails: one failure of two allowed, so it is retried
SELECT claim_id, fencing_token, attempt FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT :attempt AS attempt;
SELECT workload_fail(:'id', :'claim_id', 'w', :fencing_token, 'worker_failure', 'first failure');
SELECT evidence FROM workload_history(:'id') ORDER BY sequence DESC LIMIT 1;
-- the fifth fails too: the second failure uses up max_attempts
SELECT claim_id, fencing_token FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_fail(:'id', :'claim_id', 'w', :fencing_token, 'worker_failure', 'second failure');
SELECT evidence FROM workload_history(:'id') ORDER BY sequence DESC LIMIT 1;
SELECT state, attempt_count, wait_count, retry_count FROM workload.workloads WHERE workload_id = :'id';
SELECT attempt_number, outcome, failure_kind FROM workload.attempt_log WHERE workload_id = :'id' ORDER BY attempt_number;

-- lease recovery counts the same way: after one wait, the second attempt's lost worker is its first failure of two
SELECT t.create('lost', '{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 0}}') AS lost \gset
SELECT claim_id, fencing_token FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_wait(:'lost', :'claim_id', 'w', :fencing_token, 'event', 'go', '2026-01-02 00:00:00+00');
SELECT workload_signal('acme', 'billing', 'go', '{}');
SELECT claim_id, fencing_token FROM workload_claim('w', '{}', 'acme', 'billing', '10 seconds', start => true) \gset
SET workload.clock_override = '2026-01-01 00:00:11+00';
SELECT workload_recover_expired() = :'lost' AS recovered;
SELECT state, attempt_count, wait_count FROM workload.workloads WHERE workload_id = :'lost';
