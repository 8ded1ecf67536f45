-- A worker whose lease expired is fenced off: its heartbeat is WORKLOAD_LEASE_EXPIRED, recovery makes the workload READY again, and after a new claim its late completion is WORKLOAD_STALE_FENCE and changes nothing; the fence is checked claim, then triple, then lease (SPEC 4, the fence; "Claiming and running").
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-stale

SELECT t.create('report', '{}', :'tn') AS id \gset
SELECT claim_id AS old_claim, fencing_token AS old_token
FROM workload_claim('w-old', '{}', :'tn', 'billing', lease => '5 seconds', start => true) \gset
\echo :old_token

-- the old worker goes quiet; 6 seconds later its lease is over
SET workload.clock_override = '2026-01-01 00:00:06+00';
SELECT t.fingerprint() AS before \gset
SELECT workload_heartbeat(:'id', :'old_claim', 'w-old', :old_token, '30 seconds');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- recovery: the attempt is WORKER_LOST, the claim is cleared, the workload READY after backoff
-- (other workloads in the database may be recovered too; count this tenant's)
SELECT count(*) FILTER (WHERE r = :'id') AS recovered_this,
       count(*) FILTER (WHERE r IN (SELECT workload_id FROM workload.workloads WHERE tenant_id = :'tn')) AS recovered_in_tenant
FROM workload_recover_expired() r;
SELECT count(*) AS recovered_again FROM workload_recover_expired() r
WHERE r IN (SELECT workload_id FROM workload.workloads WHERE tenant_id = :'tn');
SELECT d->>'state' AS state, d->'current_claim' AS current_claim, d->>'next_attempt_at' AS next_attempt_at,
       d->>'retry_count' AS retry_count
FROM workload_get(:'id') d;
SELECT a->>'attempt' AS attempt, a->>'worker_id' AS worker, a->>'outcome' AS outcome, a->>'failure_kind' AS failure_kind,
       a->>'finished_at' AS finished_at
FROM jsonb_array_elements(workload_get(:'id')->'attempts') a ORDER BY (a->>'attempt')::int;
SELECT event_type, from_state, to_state, actor, evidence FROM workload_history(:'id')
ORDER BY sequence OFFSET 4;

-- not due until the backoff has passed; then a new worker claims it with a larger token
SELECT count(*) AS claimed FROM workload_claim('w-new', '{}', :'tn', 'billing');
SET workload.clock_override = '2026-01-01 00:00:07+00';
SELECT claim_id AS new_claim, fencing_token AS new_token
FROM workload_claim('w-new', '{}', :'tn', 'billing', lease => '30 seconds', start => true) \gset
SELECT :new_token > :old_token AS larger_token, :new_token AS new_token, :'new_claim' <> :'old_claim' AS new_claim;

-- the old worker comes back and tries to complete: WORKLOAD_STALE_FENCE, nothing changes
SELECT t.fingerprint() AS before \gset
SELECT workload_complete(:'id', :'old_claim', 'w-old', :old_token, 'hb-result-old', '{"from": "old"}');
\echo :SQLSTATE
-- nor does it help to present the new token with its old claim
SELECT workload_complete(:'id', :'old_claim', 'w-old', :new_token, 'hb-result-old', '{"from": "old"}');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'old_claim', 'w-old', :old_token, '30 seconds');
\echo :SQLSTATE
SELECT workload_fail(:'id', :'old_claim', 'w-old', :old_token, 'worker_failure', 'late');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- the new worker completes; the result names the new claim
SELECT r->'output' AS output, r->'provenance'->>'worker_id' AS worker,
       r->'provenance'->>'fencing_token' AS token, r->'provenance'->>'attempt' AS attempt,
       r->'provenance'->>'claim_id' = :'new_claim' AS new_claim
FROM workload_complete(:'id', :'new_claim', 'w-new', :new_token, 'hb-result-new', '{"from": "new"}') r;
SELECT workload_get(:'id')->>'state' AS state;
-- still fenced off afterwards: no claim any more
SELECT workload_complete(:'id', :'old_claim', 'w-old', :old_token, 'hb-result-old', '{"from": "old"}');
\echo :SQLSTATE

-- the order of the fence checks, on one workload
SET workload.clock_override = '2026-01-01 01:00:00+00';
SELECT t.create('fence-order', '{}', :'tn') AS fo \gset
SELECT t.fingerprint() AS before \gset
-- 1. no current claim: WORKLOAD_CLAIM_INVALID, whatever is presented
SELECT workload_start(:'fo', 'claim_00000000000000000000', 'w1', 1);
\echo :SQLSTATE
SELECT workload_heartbeat(:'fo', 'claim_00000000000000000000', 'w1', 1, '10 seconds');
\echo :SQLSTATE
SELECT workload_checkpoint(:'fo', 'claim_00000000000000000000', 'w1', 1, '{}');
\echo :SQLSTATE
SELECT workload_fail(:'fo', 'claim_00000000000000000000', 'w1', 1, 'worker_failure', 'x');
\echo :SQLSTATE
SELECT workload_complete(:'fo', 'claim_00000000000000000000', 'w1', 1, 'hb-result-fo', '{}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT claim_id AS fo_claim, fencing_token AS fo_token
FROM workload_claim_id(:'fo', 'w1', '{}', '5 seconds') \gset
SELECT t.fingerprint() AS before \gset
-- 2. any part of the triple differs: WORKLOAD_STALE_FENCE
SELECT workload_start(:'fo', 'claim_00000000000000000000', 'w1', :fo_token);
\echo :SQLSTATE
SELECT workload_start(:'fo', :'fo_claim', 'w2', :fo_token);
\echo :SQLSTATE
SELECT workload_start(:'fo', :'fo_claim', 'w1', :fo_token + 1);
\echo :SQLSTATE
SELECT workload_start(:'fo', :'fo_claim', 'w1', :fo_token - 1);
\echo :SQLSTATE
-- 3. the right triple after the lease: WORKLOAD_LEASE_EXPIRED (at the expiry instant already) ...
SET workload.clock_override = '2026-01-01 01:00:05+00';
SELECT workload_start(:'fo', :'fo_claim', 'w1', :fo_token);
\echo :SQLSTATE
-- ... while a wrong triple is still WORKLOAD_STALE_FENCE
SELECT workload_start(:'fo', :'fo_claim', 'w2', :fo_token);
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- a moment before the expiry the right triple works
SET workload.clock_override = '2026-01-01 01:00:04.999999+00';
SELECT workload_start(:'fo', :'fo_claim', 'w1', :fo_token);
SELECT workload_get(:'fo')->>'state' AS state;
-- NULL parts of the fence are WORKLOAD_INVALID
SELECT workload_start(:'fo', NULL, 'w1', :fo_token);
\echo :SQLSTATE
SELECT workload_start(:'fo', :'fo_claim', NULL, :fo_token);
\echo :SQLSTATE
SELECT workload_start(:'fo', :'fo_claim', 'w1', NULL);
\echo :SQLSTATE
SELECT workload_start(NULL, :'fo_claim', 'w1', :fo_token);
\echo :SQLSTATE
-- an unknown workload is WORKLOAD_NOT_FOUND
SELECT workload_start('workload_000000000000000000000000', :'fo_claim', 'w1', :fo_token);
\echo :SQLSTATE
