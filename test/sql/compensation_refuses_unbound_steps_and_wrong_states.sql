-- workload_compensate refuses a workload that is not FAILED, DEAD_LETTER or CANCELLED (WORKLOAD_TRANSITION_DENIED), and any step not bound to the workload's authorization digest or not covered by a run authority that still holds (WORKLOAD_COMPENSATION_UNAUTHORIZED), creating nothing; workload_add_compensation refuses what it could never run (SPEC section 7, compensation).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS cr_globex;
RESET client_min_messages;
CREATE ROLE cr_globex;
GRANT workload_client, workload_worker TO cr_globex;
SELECT workload_add_tenant_member('cr_globex', 'globex', 'billing');

SELECT t.create('order', '{"capability_snapshot": ["stock.reserve", "stock.release"]}') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{stock.reserve,stock.release}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT t.fingerprint() AS before \gset

-- add_compensation: NULLs, a secret in the input, a capability the run authority does not cover, a stale fence
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, NULL, '{}');
\echo :SQLSTATE
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, 'stock.release', NULL);
\echo :SQLSTATE
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, 'stock.release', '{"api_key": "x"}');
\echo :SQLSTATE
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, 'payments.refund', '{}');
\echo :SQLSTATE
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token + 1, 'stock.release', '{}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- two good steps; while the workload runs it cannot be compensated
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, 'stock.release', '{"sku": "A"}') ->> 'step' AS step;
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, 'stock.release', '{"sku": "B"}') ->> 'step' AS step;
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_compensate(:'id', 'ops:alice');
\echo :SQLSTATE
SELECT * FROM workload_compensate(NULL, 'ops:alice');
\echo :SQLSTATE
SELECT * FROM workload_compensate(:'id', NULL);
\echo :SQLSTATE
SELECT * FROM workload_compensate('workload_000000000000000000000000', 'ops:alice');
\echo :SQLSTATE
-- nor once it SUCCEEDED
SELECT t.create('done') AS done \gset
SELECT claim_id AS dc, fencing_token AS dt FROM workload_claim_id(:'done', 'w1', '{}', '1 hour') \gset
SELECT workload_start(:'done', :'dc', 'w1', :dt);
SELECT workload_complete(:'done', :'dc', 'w1', :dt, 'done-result', '{}') ->> 'outcome' AS outcome;
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_compensate(:'done', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- the order fails for good
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'out_of_stock', 'no more B');
-- another tenant cannot see it to compensate it
SET ROLE cr_globex;
SELECT * FROM workload_compensate(:'id', 'mallory');
\echo :SQLSTATE
RESET ROLE;

-- a superuser rebinds step 2 behind the API's back: the whole compensation is refused, nothing is created
ALTER TABLE workload.compensations DISABLE TRIGGER compensations_raw_write_trg;
UPDATE workload.compensations SET authorization_digest = repeat('0', 64) WHERE workload_id = :'id' AND step = 2;
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_compensate(:'id', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- ... or swaps a step's capability for one the saga was never granted
UPDATE workload.compensations p SET authorization_digest = q.authorization_digest, capability_id = 'payments.refund'
FROM workload.compensations q WHERE q.workload_id = p.workload_id AND q.step = 1 AND p.workload_id = :'id' AND p.step = 2;
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_compensate(:'id', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
UPDATE workload.compensations SET capability_id = 'stock.release' WHERE workload_id = :'id' AND step = 2;
ALTER TABLE workload.compensations ENABLE ALWAYS TRIGGER compensations_raw_write_trg;
SELECT t.fingerprint() AS before \gset

-- once the run authority has expired (workload.run_authority_ttl, 24 hours), nothing can be compensated under it
SET workload.clock_override = '2026-01-02 00:00:00+00';
SELECT * FROM workload_compensate(:'id', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- within it, the compensation runs
SET workload.clock_override = '2026-01-01 23:59:59+00';
SELECT count(*) AS compensations FROM workload_compensate(:'id', 'ops:alice');

-- a compensated workload that an operator retries cannot record new steps: they could never be ordered before the old ones
SELECT workload_retry(:'id', 'ops:alice');
SELECT claim_id, fencing_token FROM workload_claim_id(:'id', 'w1', '{stock.reserve,stock.release}', '1 hour') \gset
SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);
SELECT workload_add_compensation(:'id', :'claim_id', 'w1', :fencing_token, 'stock.release', '{"sku": "C"}');
\echo :SQLSTATE

DROP OWNED BY cr_globex;
DROP ROLE cr_globex;
