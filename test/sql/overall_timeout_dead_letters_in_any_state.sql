-- A workload older than timeouts.overall_ms is timed out by workload_tick in whatever unfinished state it is (READY, CLAIMED, running, WAITING) and dead-lettered, never retried (SPEC section 4, workload_tick: overall timeout).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- four workloads with a one-minute budget and "timeout" retried (the default policy), and one that finishes in time
SELECT t.create('ready', '{"timeouts": {"overall_ms": 60000}, "priority": 1}') AS ready \gset
SELECT t.create('claimed', '{"timeouts": {"overall_ms": 60000}, "priority": 2}') AS claimed \gset
SELECT t.create('running', '{"timeouts": {"overall_ms": 60000}, "priority": 3}') AS running \gset
SELECT t.create('waiting', '{"timeouts": {"overall_ms": 60000}, "priority": 4}') AS waiting \gset
SELECT t.create('done', '{"timeouts": {"overall_ms": 60000}, "priority": 5}') AS done \gset
SELECT claim_id AS d_claim, fencing_token AS d_token FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_complete(:'done', :'d_claim', 'w', :d_token, 'r-done', '[]') ->> 'outcome' AS outcome;
SELECT claim_id AS wa_claim, fencing_token AS wa_token FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_wait(:'waiting', :'wa_claim', 'w', :wa_token, 'event', 'never', '2026-01-02 00:00:00+00');
SELECT claim_id AS r_claim, fencing_token AS r_token FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_checkpoint(:'running', :'r_claim', 'w', :r_token, '{"half": true}') ->> 'sequence' AS sequence;
SELECT count(*) AS claimed FROM workload_claim('w', '{}', 'acme', 'billing', '1 hour');
SELECT s.idempotency_key, w.state, w.deadline_at FROM workload.workloads w JOIN workload.specs s USING (workload_id)
ORDER BY w.priority;

SET workload.clock_override = '2026-01-01 00:00:59.999+00';
SELECT workload_tick() ->> 'overall_timed_out' AS overall_timed_out;
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_tick();
SELECT s.idempotency_key, w.state, w.claim_id IS NOT NULL AS claimed, w.deadline_at
FROM workload.workloads w JOIN workload.specs s USING (workload_id) ORDER BY w.priority;
SELECT s.idempotency_key, e.from_state, e.to_state, e.actor, e.evidence ->> 'cause' AS cause
FROM workload.event_log e JOIN workload.specs s USING (workload_id)
WHERE e.to_state IN ('TIMED_OUT', 'DEAD_LETTER') ORDER BY e.sequence;
-- the attempts workers still held ended TIMED_OUT (the waiting one's had ended in its wait); the wait was closed as timed out
SELECT s.idempotency_key, a.attempt_number, a.outcome FROM workload.attempt_log a JOIN workload.specs s USING (workload_id)
ORDER BY 1, 2;
SELECT wait_number, outcome, resolved_at FROM workload.waits WHERE workload_id = :'waiting';
-- a signal for the closed wait does nothing
SELECT workload_signal('acme', 'billing', 'never', '{}');
-- nothing is left for the next tick
SELECT workload_tick() ->> 'overall_timed_out' AS overall_timed_out;
SELECT count(*) AS deadlines_left FROM workload.workloads WHERE deadline_at IS NOT NULL;
