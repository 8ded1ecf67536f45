-- An output that misses the workload's completion criteria (result_count min and max, result_contains, an output that is not an array) is not stored: the attempt fails with COMPLETION_CRITERIA_UNMET, the workload is dead-lettered without retry, and workload_complete (and workload_complete_many) answer that outcome (SPEC section 7, completion criteria).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- done(key, criteria, output): create a workload with these criteria, run it and complete it with output
CREATE FUNCTION pg_temp.done(key text, criteria jsonb, output jsonb, extra jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    id text := t.create(key, jsonb_build_object('completion_criteria', criteria) || extra);
    c record;
BEGIN
    SELECT * INTO c FROM workload_claim_id(id, 'w1', '{}', '1 hour');
    PERFORM workload_start(id, c.claim_id, 'w1', c.fencing_token);
    RETURN workload_complete(id, c.claim_id, 'w1', c.fencing_token, 'result-' || key, output);
END $$;

-- result_count: at least 2, at most 3
SELECT pg_temp.done('too-few', '[{"kind": "result_count", "min": 2, "max": 3}]', '[1]') - 'workload_id' AS answer;
SELECT pg_temp.done('too-many', '[{"kind": "result_count", "min": 2, "max": 3}]', '[1, 2, 3, 4]') - 'workload_id' AS answer;
SELECT pg_temp.done('just-right', '[{"kind": "result_count", "min": 2, "max": 3}]', '[1, 2, 3]') ->> 'outcome' AS outcome;
SELECT pg_temp.done('no-max', '[{"kind": "result_count", "min": 1}]', '[1, 2, 3, 4, 5]') ->> 'outcome' AS outcome;
-- result_contains: some result has status = "paid"
SELECT pg_temp.done('unpaid', '[{"kind": "result_contains", "field": "status", "equals": "paid"}]',
                    '[{"status": "open"}, {"state": "paid"}, "paid"]') - 'workload_id' AS answer;
SELECT pg_temp.done('paid', '[{"kind": "result_contains", "field": "status", "equals": "paid"}]',
                    '[{"status": "open"}, {"status": "paid", "id": 7}]') ->> 'outcome' AS outcome;
-- equals compares JSON values: numbers by value, objects whole
SELECT pg_temp.done('number', '[{"kind": "result_contains", "field": "n", "equals": 3}]', '[{"n": 3.0}]') ->> 'outcome' AS outcome;
SELECT pg_temp.done('object', '[{"kind": "result_contains", "field": "o", "equals": {"a": 1}}]', '[{"o": {"a": 1, "b": 2}}]') ->> 'reason' AS reason;
-- an output that is not an array meets no criterion
SELECT pg_temp.done('not-array', '[{"kind": "result_count", "min": 1}]', '{"rows": [1]}') ->> 'reason' AS reason;
-- every criterion must hold
SELECT pg_temp.done('both', '[{"kind": "result_count", "min": 1}, {"kind": "result_contains", "field": "ok", "equals": true}]',
                    '[{"ok": false}]') ->> 'reason' AS reason;
-- no criteria: any output will do
SELECT pg_temp.done('free', '[]', '{"anything": true}') ->> 'outcome' AS outcome;

-- unmet is permanent, even with its kind in retry_on; no result is stored, the attempt records why
SELECT pg_temp.done('permanent', '[{"kind": "result_count", "min": 2}]', '[1]',
                    '{"retry_policy": {"retry_on": ["timeout", "COMPLETION_CRITERIA_UNMET"]}}') ->> 'state' AS state;
SELECT s.idempotency_key, w.state, w.retry_count, w.last_failure ->> 'kind' AS last_failure_kind,
       (SELECT count(*) FROM workload.results r WHERE r.workload_id = w.workload_id) AS results
FROM workload.workloads w JOIN workload.specs s USING (workload_id) ORDER BY w.seq;
SELECT a.outcome, a.failure_kind, a.error FROM workload.attempt_log a JOIN workload.specs s USING (workload_id)
WHERE s.idempotency_key = 'permanent';
SELECT e.from_state, e.to_state, e.actor, e.evidence - 'fencing_token' - 'at' AS evidence
FROM workload.event_log e JOIN workload.specs s USING (workload_id)
WHERE s.idempotency_key = 'permanent' AND e.to_state IN ('FAILED', 'DEAD_LETTER') ORDER BY e.sequence;

-- the same completion sent again finds the claim released
SELECT w.workload_id AS id FROM workload.workloads w JOIN workload.specs s USING (workload_id) WHERE s.idempotency_key = 'permanent' \gset
SELECT workload_complete(:'id', 'claim_x', 'w1', 1, 'result-permanent', '[1]');
\echo :SQLSTATE

-- complete_many decides each item: one misses its criteria, one meets them
SELECT t.create('batch-a', '{"completion_criteria": [{"kind": "result_count", "min": 2}], "priority": 2}') AS a \gset
SELECT t.create('batch-b', '{"completion_criteria": [{"kind": "result_count", "min": 2}], "priority": 1}') AS b \gset
CREATE TEMP TABLE claimed AS SELECT * FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour', 2, true);
SELECT m.workload_id = :'a' AS is_a, m.outcome, m.code, m.result ->> 'reason' AS reason, m.result ->> 'state' AS state
FROM workload_complete_many('w2', (SELECT jsonb_agg(jsonb_build_object('workload_id', c.workload_id,
        'claim_id', c.claim_id, 'fencing_token', c.fencing_token, 'result_id', 'many-' || c.workload_id,
        'output', CASE WHEN c.workload_id = :'a' THEN '[1]'::jsonb ELSE '[1, 2]'::jsonb END)) FROM claimed c)) m
ORDER BY 1 DESC;
SELECT workload_id = :'a' AS is_a, state FROM workload.workloads WHERE workload_id IN (:'a', :'b') ORDER BY 1 DESC;
