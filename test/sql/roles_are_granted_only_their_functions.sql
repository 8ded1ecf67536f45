-- Each role may call only its functions: a worker cannot create, sign, rotate or read keys; a client cannot claim, complete or fail; PUBLIC can do nothing (SPEC section 5).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS rg_worker; DROP ROLE IF EXISTS rg_client; DROP ROLE IF EXISTS rg_admin; DROP ROLE IF EXISTS rg_nobody;
RESET client_min_messages;
CREATE ROLE rg_worker; GRANT workload_worker TO rg_worker;
CREATE ROLE rg_client; GRANT workload_client TO rg_client;
CREATE ROLE rg_admin; GRANT workload_admin TO rg_admin;
CREATE ROLE rg_nobody;
SELECT workload_add_tenant_member(r, 'acme', 'billing') FROM unnest(ARRAY['rg_worker', 'rg_client', 'rg_nobody']) r;
SELECT t.spec('x') AS spec, t.unsigned_grant() AS unsigned \gset
SELECT t.create('held') AS held \gset
-- the worker takes the claim it later heartbeats (a claim belongs to the role that took it)
SET ROLE rg_worker;
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', start => true) \gset
RESET ROLE;

-- which role may execute which API function (t = yes); a tenant-first overload
-- (workload_start(tenant_id, workload_id, ...)) is granted as the function it stands for
SELECT p.proname, p.prosrc = 'workload_tenant_first' AS tenant_first,
       has_function_privilege('workload_client', p.oid, 'EXECUTE') AS client,
       has_function_privilege('workload_worker', p.oid, 'EXECUTE') AS worker,
       has_function_privilege('workload_admin', p.oid, 'EXECUTE') AS admin,
       has_function_privilege('rg_nobody', p.oid, 'EXECUTE') AS public_
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.proname LIKE 'workload\_%'
ORDER BY p.proname, 2;

-- the worker
SET ROLE rg_worker;
SELECT workload_create(:'spec');
\echo :SQLSTATE
SELECT * FROM workload_create_many(jsonb_build_array(:'spec'::jsonb));
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', 'ops');
\echo :SQLSTATE
SELECT workload_sign_grant(:'unsigned');
\echo :SQLSTATE
SELECT workload_rotate_signing_key();
\echo :SQLSTATE
SELECT count(*) FROM workload.signing_keys;
\echo :SQLSTATE
SELECT count(*) FROM workload.workloads;
\echo :SQLSTATE
SELECT workload_heartbeat(:'held', :'claim_id', 'w1', :fencing_token, '30 seconds') ->> 'state' AS worker_may_heartbeat;
RESET ROLE;

-- the client
SET ROLE rg_client;
SELECT * FROM workload_claim('w2', '{}', 'acme', 'billing');
\echo :SQLSTATE
SELECT workload_complete(:'held', :'claim_id', 'w1', :fencing_token, 'r', '{}');
\echo :SQLSTATE
SELECT workload_fail(:'held', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
\echo :SQLSTATE
SELECT workload_sign_grant(:'unsigned');
\echo :SQLSTATE
SELECT workload_purge('1 day');
\echo :SQLSTATE
SELECT workload_create(:'spec') ->> 'state' AS client_may_create;
SELECT outcome AS client_may_create_many FROM workload_create_many(jsonb_build_array(:'spec'::jsonb));
SELECT count(*) AS client_may_redrive FROM workload_redrive('acme', 'billing', 'ops');
RESET ROLE;

-- a role with no workload role at all, even as a tenant member
SET ROLE rg_nobody;
SELECT workload_get(:'held');
\echo :SQLSTATE
SELECT workload_create(:'spec');
\echo :SQLSTATE
RESET ROLE;

-- the admin reads every table but the keys
SET ROLE rg_admin;
SELECT count(*) > 0 AS admin_reads_workloads FROM workload.workloads;
SELECT count(*) FROM workload.signing_keys;
\echo :SQLSTATE
SELECT workload_sign_grant(:'unsigned') ->> 'key_id' IS NOT NULL AS admin_may_sign;
RESET ROLE;

-- the owner reads the keys; PUBLIC holds no privilege on any table or view
SELECT count(*) AS keys_visible_to_owner FROM workload.signing_keys;
SELECT c.relname, c.relkind, EXISTS (SELECT 1 FROM aclexplode(c.relacl) a WHERE a.grantee = 0) AS public_has_a_privilege
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'workload' AND c.relkind IN ('r', 'v') ORDER BY c.relname;

-- the views read with the caller's rights: SELECT on workload.workloads alone
-- (granted here by hand) reads nothing of the table behind it
GRANT USAGE ON SCHEMA workload TO rg_nobody;
GRANT SELECT ON workload.workloads, workload.event_log, workload.attempt_log TO rg_nobody;
SET ROLE rg_nobody;
SELECT count(*) FROM workload.workloads;
\echo :SQLSTATE
SELECT count(*) FROM workload.event_log;
\echo :SQLSTATE
SELECT count(*) FROM workload.attempt_log;
\echo :SQLSTATE
RESET ROLE;
REVOKE USAGE ON SCHEMA workload FROM rg_nobody;

DROP OWNED BY rg_worker, rg_client, rg_admin, rg_nobody;
DROP ROLE rg_worker; DROP ROLE rg_client; DROP ROLE rg_admin; DROP ROLE rg_nobody;
