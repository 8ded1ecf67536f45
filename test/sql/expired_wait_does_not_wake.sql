-- A wait whose deadline has passed cannot be woken: a late signal or approval does nothing, and workload_tick times the workload out (retried when "timeout" is in retry_on, else dead-lettered); the next run learns the wait expired (SPEC section 7, durable waits).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- an event wait (timeout retried, the default) and an approval wait (timeout not retried), both until 00:10
SELECT t.create('event', '{"priority": 2}') AS e \gset
SELECT t.create('approval', '{"priority": 1, "retry_policy": {"retry_on": ["worker_failure"]}}') AS a \gset
SELECT workload_wait(workload_id, claim_id, 'w1', fencing_token,
                     CASE workload_id WHEN :'e' THEN 'event' ELSE 'human_approval' END,
                     'parcel-delivered', '2026-01-01 00:10:00+00')
FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', 2, start => true) ORDER BY workload_id;

-- at the deadline, before any tick has run, a wake is already too late
SET workload.clock_override = '2026-01-01 00:10:00+00';
SELECT t.fingerprint() AS before \gset
SELECT workload_signal('acme', 'billing', 'parcel-delivered', '{"late": true}');
SELECT workload_approve(:'a', 'human:alice', true, 'late');
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT s.idempotency_key, w.state FROM workload.workloads w JOIN workload.specs s USING (workload_id) ORDER BY 1;

-- the tick expires both: TIMED_OUT, then READY (event, with backoff) or DEAD_LETTER (approval)
SELECT workload_tick() - 'skipped' AS tick;
SELECT s.idempotency_key, w.state, w.attempt_count, w.wait_count, w.next_attempt_at
FROM workload.workloads w JOIN workload.specs s USING (workload_id) ORDER BY 1;
SELECT s.idempotency_key, e.from_state, e.to_state, e.actor, e.evidence - 'fencing_token' AS evidence
FROM workload.event_log e JOIN workload.specs s USING (workload_id)
WHERE e.to_state IN ('TIMED_OUT', 'READY', 'DEAD_LETTER') AND e.from_state <> 'CREATED' ORDER BY e.sequence;
SELECT s.idempotency_key, x.outcome, x.resolved_at FROM workload.waits x JOIN workload.specs s USING (workload_id) ORDER BY 1;

-- a signal after the expiry wakes nothing either
SELECT workload_signal('acme', 'billing', 'parcel-delivered', '{"late": true}');

-- the retried run learns that its wait expired, without a payload
SET workload.clock_override = '2026-01-01 00:10:01+00';
SELECT claim_id, fencing_token FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_resume(:'e', :'claim_id', 'w2', :fencing_token) -> 'wake' AS wake;
