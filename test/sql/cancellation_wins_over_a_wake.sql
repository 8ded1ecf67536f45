-- Cancellation wins over a wake: a cancelled WAITING workload is CANCELLED and its wait closed, and a signal, an approval or its deadline coming afterwards does nothing; a workload cancelled after its wake is cancelled all the same (SPEC section 7, durable waits).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- three workloads wait: for an event, for an approval, and asleep until 01:00
SELECT t.create('event', '{"priority": 3}') AS e \gset
SELECT t.create('approval', '{"priority": 2}') AS a \gset
SELECT t.create('sleep', '{"priority": 1}') AS s \gset
SELECT workload_wait(workload_id, claim_id, 'w1', fencing_token,
                     CASE workload_id WHEN :'e' THEN 'event' WHEN :'a' THEN 'human_approval' ELSE 'schedule' END,
                     'the-key', '2026-01-01 01:00:00+00')
FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', 3, start => true) ORDER BY workload_id;

-- the client cancels all three: WAITING -> CANCELLED, each wait closed as cancelled
SET workload.clock_override = '2026-01-01 00:10:00+00';
SELECT workload_cancel(:'e', 'client:bob') AS e, workload_cancel(:'a', 'client:bob') AS a,
       workload_cancel(:'s', 'client:bob') AS s;
SELECT s.idempotency_key, x.kind, x.outcome, x.resolved_at FROM workload.waits x JOIN workload.specs s USING (workload_id)
ORDER BY 1;
SELECT s.idempotency_key, w.deadline_at FROM workload.workloads w JOIN workload.specs s USING (workload_id) ORDER BY 1;

-- the wakes that come after change nothing
SELECT t.fingerprint() AS before \gset
SELECT workload_signal('acme', 'billing', 'the-key', '{"late": true}');
SELECT workload_approve(:'a', 'human:alice', true, 'approved after the cancel');
SET workload.clock_override = '2026-01-01 01:00:00+00';
SELECT workload_tick() - 'skipped' AS tick;
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT s.idempotency_key, w.state FROM workload.workloads w JOIN workload.specs s USING (workload_id) ORDER BY 1;

-- woken first, then cancelled before any worker claims it: CANCELLED, never run
SELECT t.create('woken-then-cancelled') AS wc \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'wc', 'w1', '{}', '1 hour') \gset
SELECT workload_start(:'wc', :'claim_id', 'w1', :fencing_token);
SELECT workload_wait(:'wc', :'claim_id', 'w1', :fencing_token, 'event', 'go', '2026-01-01 02:00:00+00');
SELECT workload_signal('acme', 'billing', 'go', '{}');
SELECT workload_cancel(:'wc', 'client:bob');
SELECT count(*) AS claimed FROM workload_claim('w2', '{}', 'acme', 'billing');
SELECT from_state, to_state, actor FROM workload_history(:'wc') ORDER BY sequence;
