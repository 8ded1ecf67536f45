-- workload_purge deletes a finished workload's waits and compensation steps with the rest of it, and leaves those of workloads it keeps (SPEC section 4, workload_purge; section 7).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- a cancelled workload that waited, and a dead-lettered saga with a step (and its compensation workload)
SELECT t.create('waited', '{"priority": 2}') AS waited \gset
SELECT t.create('saga', '{"priority": 1, "capability_snapshot": ["undo"], "retry_policy": {"max_attempts": 1}}') AS saga \gset
SELECT workload_wait(workload_id, claim_id, 'w1', fencing_token, 'event', 'k', '2026-01-02')
FROM workload_claim('w1', '{undo}', 'acme', 'billing', '1 hour', start => true);
SELECT claim_id, fencing_token FROM workload_claim('w1', '{undo}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_add_compensation(:'saga', :'claim_id', 'w1', :fencing_token, 'undo', '{"x": 1}') ->> 'step' AS step;
SELECT workload_fail(:'saga', :'claim_id', 'w1', :fencing_token, 'boom', 'failed');
SELECT workload_cancel(:'waited', 'ops:alice');
SELECT count(*) AS compensations FROM workload_compensate(:'saga', 'ops:alice');
SELECT (SELECT count(*) FROM workload.waits) AS waits, (SELECT count(*) FROM workload.compensations) AS steps;

-- a day later: the cancelled one and the dead letter go; the compensation workload (READY) stays
SET workload.clock_override = '2026-01-02 00:00:00+00';
SELECT workload_purge('1 hour', 100, true) AS purged;
SELECT (SELECT count(*) FROM workload.waits) AS waits, (SELECT count(*) FROM workload.compensations) AS steps,
       (SELECT count(*) FROM workload.workloads) AS workloads,
       (SELECT definition_id FROM workload.specs) AS left_over;
