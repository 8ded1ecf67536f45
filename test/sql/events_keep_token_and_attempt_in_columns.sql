-- An event's fencing token and attempt number are stored as columns of workload.events and its evidence keeps the rest; every reader (workload_history, workload_get, workload.event_log) shows the evidence whole, as it was given (SPEC section 6).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('e') AS e \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'e', 'w1', '{}', '1 hour') \gset
SELECT workload_start(:'e', :'claim_id', 'w1', :fencing_token) IS NOT NULL AS started;
SELECT workload_complete(:'e', :'claim_id', 'w1', :fencing_token, 'r-e', '{}') IS NOT NULL AS completed;

-- stored: the token and the attempt in their columns, the rest in evidence
SELECT e.to_state, e.fencing_token, e.attempt, e.evidence
FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
WHERE w.workload_id = :'e' ORDER BY e.sequence;
-- read: whole, and the same through every reader
SELECT h.to_state, h.evidence FROM workload_history(:'e') h ORDER BY h.sequence;
SELECT (SELECT jsonb_agg(h.evidence ORDER BY h.sequence) FROM workload_history(:'e') h)
     = (SELECT jsonb_agg(x -> 'evidence') FROM jsonb_array_elements(workload_get(:'e') -> 'events') x)
   AND (SELECT jsonb_agg(h.evidence ORDER BY h.sequence) FROM workload_history(:'e') h)
     = (SELECT jsonb_agg(l.evidence ORDER BY l.sequence) FROM workload.event_log l WHERE l.workload_id = :'e')
  AS every_reader_agrees;

-- workload.event_evidence puts back what was taken, and only that
SELECT workload.event_evidence('{"cause": "x"}', 7, 2) AS both,
       workload.event_evidence('{"cause": "x"}', NULL, NULL) AS neither,
       workload.event_evidence('{}', 7, NULL) AS token_only,
       workload.event_evidence('{"a": [1, {"b": 2}]}', NULL, 3) AS nested_kept,
       workload.event_evidence(NULL, 1, 1) AS no_evidence;
-- bad input: what is not an object comes back as it is; deep and wide evidence whole
SELECT workload.event_evidence('[1, 2]', 7, 2) AS array_kept, workload.event_evidence('"x"', NULL, 1) AS scalar_kept;
SELECT workload.event_evidence((repeat('[', 5000) || repeat(']', 5000))::jsonb, 1, 1)
       = (repeat('[', 5000) || repeat(']', 5000))::jsonb AS deep_array_kept;
SELECT workload.event_evidence(jsonb_build_object('d', (repeat('{"a":', 3000) || '1' || repeat('}', 3000))::jsonb), 3, 4)
       = jsonb_build_object('d', (repeat('{"a":', 3000) || '1' || repeat('}', 3000))::jsonb, 'fencing_token', 3, 'attempt', 4)
  AS deep_object_whole;
SELECT count(*) AS wide_keys FROM jsonb_object_keys(workload.event_evidence(
    (SELECT jsonb_object_agg('k' || g, g) FROM generate_series(1, 20000) g), 9, NULL));
