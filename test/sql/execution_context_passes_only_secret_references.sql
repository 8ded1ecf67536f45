-- The execution context gives the run its attempt, effective capabilities, scopes and only secret:// references, and re-checks the grant (SPEC sections 4 and 5, workload_execution_context).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'context-tests') $$;


-- granted render, s3.read, s3.write; the workload needs render and s3.read
SELECT pg_temp.make('ctx', jsonb_build_object(
    'capability_snapshot', ARRAY['render', 's3.read'],
    'connection_scopes', ARRAY['db:reporting'],
    'authorization_snapshot', t.grant('context-tests', 'billing', 'planner', ARRAY['s3.write', 'render', 's3.read']))) AS id \gset
SELECT claim_id, fencing_token, lease_expires_at FROM workload_claim_id(:'id', 'w1', ARRAY['render', 's3.read', 'gpu'], '5 minutes') \gset
SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, ARRAY['secret://vault/billing/db', 'secret://vault/s3']) AS ctx \gset
SELECT :'ctx'::jsonb ->> 'attempt_id' = 'attempt_' || :'id' || '_1' AS attempt_id_ok,
       :'ctx'::jsonb -> 'attempt' AS attempt,
       :'ctx'::jsonb -> 'capabilities' AS capabilities,
       :'ctx'::jsonb -> 'connection_scopes' AS connection_scopes;
SELECT :'ctx'::jsonb -> 'secret_references' AS secret_references,
       (:'ctx'::jsonb ->> 'lease_expires_at')::timestamptz = :'lease_expires_at' AS lease_ok,
       (:'ctx'::jsonb -> 'fencing_token')::bigint = :fencing_token AS fence_ok,
       :'ctx'::jsonb ->> 'claim_id' = :'claim_id' AS claim_ok;
-- capabilities are exactly workload_effective_scopes(grant capabilities, capability_snapshot)
SELECT (:'ctx'::jsonb -> 'capabilities') = to_jsonb(workload_effective_scopes(ARRAY['s3.write', 'render', 's3.read'], ARRAY['render', 's3.read'])) AS is_effective_scopes;
-- no references at all is fine
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token) -> 'secret_references' AS secret_references;

-- a wildcard grant narrows to what the workload asked for; asking for nothing gives nothing
SELECT pg_temp.make('star', '{"capability_snapshot": ["render"]}') AS star \gset
SELECT * FROM workload_claim_id(:'star', 'w1', ARRAY['render']) \gset star_
SELECT workload_execution_context(:'star', :'star_claim_id', 'w1', :star_fencing_token) -> 'capabilities' AS capabilities;
SELECT pg_temp.make('empty') AS empty \gset
SELECT * FROM workload_claim_id(:'empty', 'w1', '{}') \gset empty_
SELECT workload_execution_context(:'empty', :'empty_claim_id', 'w1', :empty_fencing_token) -> 'capabilities' AS capabilities;

-- anything that is not a secret:// reference is refused, and nothing changes
SELECT t.fingerprint() AS before \gset
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, ARRAY['postgres://u:p@h/db']);
\echo :SQLSTATE
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, ARRAY['secret://']);
\echo :SQLSTATE
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, ARRAY['SECRET://x']);
\echo :SQLSTATE
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, ARRAY['secret://vault/ok', 'hunter2']);
\echo :SQLSTATE
-- NULL is invalid, as an array or as an element
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, NULL);
\echo :SQLSTATE
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token, ARRAY['secret://vault/ok', NULL]);
\echo :SQLSTATE
-- a stale fence gets nothing
SELECT workload_execution_context(:'id', :'claim_id', 'w1', :fencing_token + 1);
\echo :SQLSTATE
SELECT workload_execution_context(:'id', :'claim_id', 'w2', :fencing_token);
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- a grant that expires while the lease still holds: AUTHORIZATION_DENIED
SELECT pg_temp.make('expiring', jsonb_build_object('authorization_snapshot',
    t.grant('context-tests', 'billing', 'planner', ARRAY['*'], 'active', '2026-01-01T00:10:00Z'))) AS exp \gset
SELECT * FROM workload_claim_id(:'exp', 'w1', '{}', '1 hour') \gset exp_
SELECT workload_execution_context(:'exp', :'exp_claim_id', 'w1', :exp_fencing_token) ->> 'workload_id' = :'exp' AS allowed_before;
SET workload.clock_override = '2026-01-01 00:10:00+00';
SELECT t.fingerprint() AS before \gset
SELECT workload_execution_context(:'exp', :'exp_claim_id', 'w1', :exp_fencing_token);
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
