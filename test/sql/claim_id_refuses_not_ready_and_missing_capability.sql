-- workload_claim_id claims one named workload only when it exists, is READY, due, has its dependencies met and the worker holds every capability it needs; each refusal changes nothing (SPEC 4, "Claiming and running": workload_claim_id).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-claim-id

SELECT t.create('running', '{}', :'tn') AS running \gset
SELECT t.create('succeeded', '{}', :'tn') AS succeeded \gset
SELECT t.create('backing-off', '{"retry_policy": {"initial_delay_ms": 60000}}', :'tn') AS backing_off \gset
SELECT t.create('waits-for-running', jsonb_build_object('dependencies',
         jsonb_build_array(jsonb_build_object('workload_id', :'running'))), :'tn') AS waits \gset
SELECT t.create('needs-gpu', '{"capability_snapshot": ["gpu", "net"]}', :'tn') AS needs_gpu \gset
SELECT t.create('plain', '{"priority": -1}', :'tn') AS plain \gset
SELECT t.create('important', '{"priority": 100}', :'tn') AS important \gset

-- bring running, succeeded and backing-off where they should be
SELECT claim_id, fencing_token FROM workload_claim_id(:'running', 'w1', '{}') \gset
SELECT workload_start(:'running', :'claim_id', 'w1', :fencing_token);
SELECT claim_id, fencing_token FROM workload_claim_id(:'succeeded', 'w1', '{}') \gset
SELECT workload_start(:'succeeded', :'claim_id', 'w1', :fencing_token);
SELECT workload_complete(:'succeeded', :'claim_id', 'w1', :fencing_token, 'hb-result-succeeded', '{}') IS NOT NULL AS completed;
SELECT claim_id, fencing_token FROM workload_claim_id(:'backing_off', 'w1', '{}') \gset
SELECT workload_start(:'backing_off', :'claim_id', 'w1', :fencing_token);
SELECT workload_fail(:'backing_off', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'crashed');
SELECT s.input->>'n' AS key, w.state, w.next_attempt_at > '2026-01-01 00:00:00+00' AS later
FROM workload.workloads w JOIN workload.specs s USING (workload_id) WHERE w.tenant_id = :'tn' ORDER BY key;

SELECT t.fingerprint() AS before \gset
-- unknown id: WORKLOAD_NOT_FOUND
SELECT * FROM workload_claim_id('workload_000000000000000000000000', 'w2', '{}');
\echo :SQLSTATE
-- not READY: WORKLOAD_NOT_READY
SELECT * FROM workload_claim_id(:'running', 'w2', '{}');
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'succeeded', 'w2', '{}');
\echo :SQLSTATE
-- READY but not yet due: WORKLOAD_NOT_READY
SELECT * FROM workload_claim_id(:'backing_off', 'w2', '{}');
\echo :SQLSTATE
-- READY but its dependency is not SUCCEEDED: WORKLOAD_NOT_READY
SELECT * FROM workload_claim_id(:'waits', 'w2', '{}');
\echo :SQLSTATE
-- a capability missing (net), or only a '*': WORKLOAD_CAPABILITY_DENIED
SELECT * FROM workload_claim_id(:'needs_gpu', 'w2', '{gpu}');
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'needs_gpu', 'w2', '{*}');
\echo :SQLSTATE
-- NULL or out-of-range arguments: WORKLOAD_INVALID
SELECT * FROM workload_claim_id(NULL, 'w2', '{}');
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'plain', NULL, '{}');
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'plain', 'w2', NULL);
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'plain', 'w2', '{}', NULL);
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'plain', 'w2', '{}', '0 seconds');
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'plain', 'w2', '{}', '2 days');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- a valid one: the named workload, though a higher-priority one is READY; attempt 1 opened
SET workload.clock_override = '2026-01-01 00:00:10+00';
SELECT workload_id = :'plain' AS is_plain, fencing_token, attempt, lease_expires_at,
       claim_id = 'claim_' || left(encode(digest(:'plain' || ':1:w2', 'sha256'), 'hex'), 20) AS claim_id_per_spec,
       definition_id, definition_revision, input, checkpoint_sequence
FROM workload_claim_id(:'plain', 'w2', '{}', '45 seconds');
SELECT d->>'state' AS state, d->'current_claim'->>'worker_id' AS worker, d->>'attempt_count' AS attempt_count,
       jsonb_array_length(d->'attempts') AS attempts, d->'attempts'->0->>'attempt_id' = 'attempt_' || :'plain' || '_1' AS attempt_id_per_spec,
       d->'events'->-1->>'event_type' AS last_event
FROM workload_get(:'plain') d;
SELECT state FROM workload.workloads WHERE workload_id = :'important';
-- the capabilities are all there (and more): claimed
SELECT workload_id = :'needs_gpu' AS is_needs_gpu, attempt FROM workload_claim_id(:'needs_gpu', 'w3', '{net,extra,gpu}');
-- once due, the backing-off workload is claimable by id: attempt 2
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_id = :'backing_off' AS is_backing_off, attempt, fencing_token FROM workload_claim_id(:'backing_off', 'w2', '{}');
-- a claimed workload cannot be claimed again by id
SELECT * FROM workload_claim_id(:'plain', 'w4', '{}');
\echo :SQLSTATE
