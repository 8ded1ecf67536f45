-- A human_approval wait is answered by workload_approve either way: approved or refused, the workload is READY again and the decision, approver and note reach the next run through workload_resume (SPEC section 7, durable waits).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- two refunds wait for a manager, up to two days
SELECT t.create('refund-1', '{"priority": 2}') AS r1 \gset
SELECT t.create('refund-2', '{"priority": 1}') AS r2 \gset
SELECT workload_wait(workload_id, claim_id, 'w1', fencing_token, 'human_approval', 'manager-signoff', '2026-01-03 00:00:00+00')
FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', 2, start => true) ORDER BY workload_id;

-- alice approves the first, with a note
SET workload.clock_override = '2026-01-01 10:00:00+00';
SELECT workload_approve(:'r1', 'human:alice', true, 'within policy');
SELECT state, next_attempt_at FROM workload.workloads WHERE workload_id = :'r1';
SELECT from_state, to_state, actor, evidence FROM workload_history(:'r1') ORDER BY sequence DESC LIMIT 1;
-- bob refuses the second, without a note: it is woken all the same
SELECT workload_approve(:'r2', 'human:bob', false, NULL);
SELECT state FROM workload.workloads WHERE workload_id = :'r2';

-- each run learns the decision and decides what it means
SELECT claim_id AS c1, fencing_token AS f1 FROM workload_claim_id(:'r1', 'w2', '{}', '1 hour') \gset
SELECT workload_resume(:'r1', :'c1', 'w2', :f1) -> 'wake' AS wake;
SELECT claim_id AS c2, fencing_token AS f2 FROM workload_claim_id(:'r2', 'w2', '{}', '1 hour') \gset
SELECT workload_resume(:'r2', :'c2', 'w2', :f2) -> 'wake' AS wake;
SELECT workload_start(:'r2', :'c2', 'w2', :f2);
SELECT workload_fail(:'r2', :'c2', 'w2', :f2, 'refused', 'the manager said no');

-- a second answer, or an answer to a workload that is not waiting for one, does nothing and says false
SELECT t.fingerprint() AS before \gset
SELECT workload_approve(:'r1', 'human:carol', false, 'too late');
SELECT workload_approve(:'r2', 'human:carol', true, NULL);
SELECT t.fingerprint() = :'before' AS unchanged;
-- an event wait is not an approval
SELECT workload_start(:'r1', :'c1', 'w2', :f1);
SELECT workload_wait(:'r1', :'c1', 'w2', :f1, 'event', 'goods-returned', '2026-01-03 00:00:00+00');
SELECT t.fingerprint() AS before \gset
SELECT workload_approve(:'r1', 'human:carol', true, NULL);
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT state FROM workload.workloads WHERE workload_id = :'r1';
