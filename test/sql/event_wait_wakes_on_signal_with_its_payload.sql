-- A run waits for an event: workload_wait releases its claim (WAITING); workload_signal on the wake key wakes it (READY), and the payload reaches the next run through workload_resume (SPEC section 7, durable waits).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, attempt_count int, wait_count int, claimed boolean, next_attempt_at timestamptz, deadline_at timestamptz)
LANGUAGE sql AS $$
    SELECT w.state::text, w.attempt_count, w.wait_count, w.claim_id IS NOT NULL, w.next_attempt_at, w.deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- the run checkpoints, then waits up to an hour for the payment of invoice 42
SELECT t.create('order-42') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"reserved": true}') ->> 'sequence' AS sequence;
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'event', 'invoice-42-paid', '2026-01-01 01:00:00+00');
-- WAITING: the claim is released, the attempt ended in the wait, the tick will look at it at the deadline
SELECT * FROM pg_temp.st(:'id');
SELECT attempt_number, outcome, finished_at IS NOT NULL AS finished FROM workload.attempt_log WHERE workload_id = :'id';
SELECT from_state, to_state, actor, evidence FROM workload_history(:'id') ORDER BY sequence DESC LIMIT 1;
SELECT workload_get(:'id') -> 'waits' AS waits;
-- nobody can claim it, and the old claim is gone
SELECT count(*) AS claimed FROM workload_claim('w2', '{}', 'acme', 'billing');
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '1 hour');
\echo :SQLSTATE

-- another key, another tenant's same key: nothing wakes
SELECT workload_signal('acme', 'billing', 'invoice-43-paid', '{"amount": 1}');
SELECT workload_signal('globex', 'billing', 'invoice-42-paid', '{"amount": 1}');
SELECT workload_signal('acme', 'shipping', 'invoice-42-paid', '{"amount": 1}');
SELECT state FROM pg_temp.st(:'id');

-- the payment arrives at 00:10: one workload woke, READY and due now
SET workload.clock_override = '2026-01-01 00:10:00+00';
SELECT workload_signal('acme', 'billing', 'invoice-42-paid', '{"amount": 1999, "currency": "EUR"}');
SELECT * FROM pg_temp.st(:'id');
SELECT from_state, to_state, actor, evidence FROM workload_history(:'id') ORDER BY sequence DESC LIMIT 1;
-- a second signal finds no open wait
SELECT workload_signal('acme', 'billing', 'invoice-42-paid', '{"amount": 1}');

-- the next claim resumes from the checkpoint, with the payload
SELECT claim_id, fencing_token, attempt, checkpoint_sequence FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT :attempt AS attempt, :checkpoint_sequence AS checkpoint_sequence;
SELECT r -> 'checkpoint' -> 'state' AS checkpoint_state, r -> 'wake' AS wake
FROM workload_resume(:'id', :'claim_id', 'w2', :fencing_token) r;
SELECT workload_complete(:'id', :'claim_id', 'w2', :fencing_token, 'order-42-done', '["shipped"]') ->> 'outcome' AS outcome;

-- one signal wakes every workload waiting on its key, and only those
SELECT t.create('a') AS a \gset
SELECT t.create('b') AS b \gset
SELECT t.create('c') AS c \gset
SELECT workload_wait(workload_id, claim_id, 'w3', fencing_token, 'event',
                     CASE WHEN workload_id = :'c' THEN 'other-key' ELSE 'batch-done' END, '2026-01-02 00:00:00+00')
FROM workload_claim('w3', '{}', 'acme', 'billing', '1 hour', 3, start => true) ORDER BY workload_id;
SELECT workload_signal('acme', 'billing', 'batch-done', '[1, 2, 3]');
SELECT s.idempotency_key, w.state FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE s.idempotency_key IN ('a', 'b', 'c') ORDER BY 1;
SELECT s.idempotency_key, x.outcome, x.payload FROM workload.waits x JOIN workload.specs s USING (workload_id)
WHERE s.idempotency_key IN ('a', 'b', 'c') ORDER BY 1;
