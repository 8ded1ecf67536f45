-- A workload created twice is one workload; claimed, started and completed it is SUCCEEDED with one attempt and its result and provenance, and stays so across connections (SPEC 4, "Claiming and running").
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-lifecycle

-- creating the same spec twice gives the same workload, once
SELECT t.create('life-1', '{}', :'tn') AS id \gset
SELECT t.create('life-1', '{}', :'tn') = :'id' AS same_id,
       (SELECT count(*) FROM workload.workloads WHERE tenant_id = :'tn') AS workloads,
       workload_get(:'id')->>'state' AS state;

-- claim: the claim id is 'claim_' || 20 hex of sha256(workload_id:token:worker_id)
SET workload.clock_override = '2026-01-01 00:00:01+00';
SELECT * FROM workload_claim('worker-1', '{}', :'tn', 'billing', lease => '30 seconds') \gset claimed_
SELECT :'claimed_workload_id' = :'id' AS is_it, :claimed_fencing_token AS fencing_token,
       :claimed_attempt AS attempt, :'claimed_lease_expires_at'::timestamptz AS lease_expires_at,
       :'claimed_claim_id' = 'claim_' || left(encode(digest(:'id' || ':1:worker-1', 'sha256'), 'hex'), 20) AS claim_id_per_spec,
       :'claimed_definition_id' AS definition_id, :'claimed_definition_revision' AS definition_revision,
       :'claimed_input' AS input, :claimed_checkpoint_sequence AS checkpoint_sequence;
\set claim_id :claimed_claim_id
\set fencing_token :claimed_fencing_token
SELECT workload_get(:'id')->>'state' AS state,
       workload_get(:'id')->'current_claim'->>'worker_id' AS worker,
       workload_get(:'id')->>'attempt_count' AS attempt_count;

-- start
SET workload.clock_override = '2026-01-01 00:00:02+00';
SELECT workload_start(:'id', :'claim_id', 'worker-1', :fencing_token);
SELECT workload_get(:'id')->>'state' AS state;

-- complete
SET workload.clock_override = '2026-01-01 00:00:03+00';
SELECT r->>'result_id' AS result_id, r->>'outcome' AS outcome, r->'output' AS output,
       r->>'output_hash' = encode(digest(r->>'output', 'sha256'), 'hex') AS output_hash_per_spec,
       r->'provenance'->>'claim_id' = :'claim_id' AS provenance_claim,
       r->'provenance'->>'worker_id' AS provenance_worker,
       r->'provenance'->>'fencing_token' AS provenance_token,
       r->'provenance'->>'attempt' AS provenance_attempt
FROM workload_complete(:'id', :'claim_id', 'worker-1', :fencing_token, 'hb-result-life-1',
                       '{"pages": 3, "total": 12.5}') r;

-- the document: SUCCEEDED, claim released, one attempt SUCCEEDED, the stored result
SELECT d->>'state' AS state, d->'current_claim' AS current_claim,
       d->>'attempt_count' AS attempt_count, d->>'retry_count' AS retry_count,
       d->>'fencing_token' AS fencing_token, jsonb_array_length(d->'attempts') AS attempts
FROM workload_get(:'id') d;
SELECT a->>'attempt' AS attempt, a->>'attempt_id' = 'attempt_' || :'id' || '_1' AS attempt_id_per_spec,
       a->>'claim_id' = :'claim_id' AS same_claim, a->>'worker_id' AS worker,
       a->>'fencing_token' AS token, a->>'claimed_at' AS claimed_at, a->>'started_at' AS started_at,
       a->>'finished_at' AS finished_at, a->>'outcome' AS outcome, a->>'failure_kind' AS failure_kind
FROM jsonb_array_elements(workload_get(:'id')->'attempts') a
ORDER BY (a->>'attempt')::int;
SELECT r->>'result_id' AS result_id, r->'output' AS output, r->'artifacts' AS artifacts,
       r->>'schema_version' AS schema_version, r->>'created_at' AS created_at,
       (r->'provenance') - 'claim_id' AS provenance, r->'provenance'->>'claim_id' = :'claim_id' AS provenance_claim
FROM (SELECT workload_get(:'id')->'result') AS x(r);
SELECT event_type, from_state, to_state, actor, at, evidence
FROM workload_history(:'id') ORDER BY sequence;

-- start after completion: the claim was released, so WORKLOAD_CLAIM_INVALID, and nothing changes
SELECT t.fingerprint() AS before \gset
SELECT workload_start(:'id', :'claim_id', 'worker-1', :fencing_token);
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT workload_get(:'id')->'result' AS result_before \gset

-- a new connection sees the same state and result
\c
SET workload.clock_override = '2026-01-01 00:00:04+00';
SELECT workload_get(:'id')->>'state' AS state,
       workload_get(:'id')->'result' = :'result_before'::jsonb AS same_result,
       t.fingerprint() = :'before' AS unchanged;
