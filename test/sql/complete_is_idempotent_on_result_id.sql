-- Completing again with the same result_id and fence returns the stored result and writes nothing; a result_id of another workload is WORKLOAD_RESULT_DUPLICATE; completion needs RUNNING and a valid result (SPEC 4, "Claiming and running": workload_complete).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-complete

SELECT t.create('invoice-a', '{"priority": 3}', :'tn') AS a \gset
SELECT t.create('invoice-b', '{"priority": 2}', :'tn') AS b \gset
SELECT t.create('invoice-c', '{"priority": 1}', :'tn') AS c \gset
SELECT claim_id AS a_claim, fencing_token AS a_token FROM workload_claim_id(:'a', 'w1', '{}') \gset
SELECT workload_start(:'a', :'a_claim', 'w1', :a_token);
SELECT claim_id AS b_claim, fencing_token AS b_token FROM workload_claim_id(:'b', 'w2', '{}') \gset
SELECT workload_start(:'b', :'b_claim', 'w2', :b_token);
SELECT claim_id AS c_claim, fencing_token AS c_token FROM workload_claim_id(:'c', 'w3', '{}') \gset

-- A completes
SET workload.clock_override = '2026-01-01 00:00:01+00';
SELECT workload_complete(:'a', :'a_claim', 'w1', :a_token, 'hb-result-a', '{"total": 42}') AS first_answer \gset
SELECT :'first_answer'::jsonb->>'result_id' AS result_id, :'first_answer'::jsonb->'output' AS output,
       :'first_answer'::jsonb->>'created_at' AS created_at;

-- the same call again, later (a retried request): the identical stored result, nothing written
SET workload.clock_override = '2026-01-01 00:00:09+00';
SELECT t.fingerprint() AS before \gset
SELECT workload_complete(:'a', :'a_claim', 'w1', :a_token, 'hb-result-a', '{"total": 42}') = :'first_answer'::jsonb AS identical;
-- a retry whose output differs still gets the stored result, not the new output
SELECT r->'output' AS output, r = :'first_answer'::jsonb AS identical
FROM workload_complete(:'a', :'a_claim', 'w1', :a_token, 'hb-result-a', '{"total": 43}') r;
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT workload_get(:'a')->'result' = :'first_answer'::jsonb AS get_shows_it,
       jsonb_array_length(workload_get(:'a')->'attempts') AS attempts,
       (SELECT count(*) FROM workload_history(:'a') WHERE event_type = 'workload.completed') AS completed_events;

-- refusals, each changing nothing:
-- the same result_id presented under another fence: WORKLOAD_STALE_FENCE
SELECT workload_complete(:'a', :'a_claim', 'w1', :a_token + 1, 'hb-result-a', '{"total": 42}');
\echo :SQLSTATE
SELECT workload_complete(:'a', :'a_claim', 'w9', :a_token, 'hb-result-a', '{"total": 42}');
\echo :SQLSTATE
-- a new result_id for A after it succeeded: WORKLOAD_CLAIM_INVALID (its claim is released)
SELECT workload_complete(:'a', :'a_claim', 'w1', :a_token, 'hb-result-a-2', '{"total": 42}');
\echo :SQLSTATE
-- A's result_id used by B, with B's own valid fence: WORKLOAD_RESULT_DUPLICATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-a', '{"total": 7}');
\echo :SQLSTATE
-- C is claimed but not started: WORKLOAD_TRANSITION_DENIED
SELECT workload_complete(:'c', :'c_claim', 'w3', :c_token, 'hb-result-c', '{}');
\echo :SQLSTATE
-- invalid arguments: WORKLOAD_INVALID
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{}', '{}', 0);
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{}', '{}', -1);
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{}', '{}', NULL);
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', NULL);
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, NULL, '{}');
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, ' ', '{}');
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{}', NULL);
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{}', ARRAY['s3://x', NULL]);
\echo :SQLSTATE
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b',
                         jsonb_build_object('blob', repeat('x', 1024 * 1024)));
\echo :SQLSTATE
-- a secret in the output: WORKLOAD_SECRET_REJECTED
SELECT workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{"note": "sk-live-abcdef"}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT s.input->>'n' AS key, w.state FROM workload.workloads w JOIN workload.specs s USING (workload_id) WHERE w.tenant_id = :'tn' ORDER BY key;

-- B completes with artifacts and schema_version 2; both are stored and shown
SELECT r->>'result_id' AS result_id, r->'artifacts' AS artifacts, r->>'schema_version' AS schema_version,
       r->'provenance'->>'worker_id' AS worker
FROM workload_complete(:'b', :'b_claim', 'w2', :b_token, 'hb-result-b', '{"total": 7}',
                       ARRAY['s3://reports/b.pdf', 's3://reports/b.csv'], 2) r;
SELECT r->>'result_id' AS result_id, r->'output' AS output, r->'artifacts' AS artifacts, r->>'schema_version' AS schema_version
FROM (SELECT workload_get(:'b')->'result') x(r);
SELECT result_id, artifacts, schema_version, output_hash = encode(digest(output::text, 'sha256'), 'hex') AS hash_ok
FROM workload.results WHERE workload_id IN (:'a', :'b') ORDER BY result_id;
