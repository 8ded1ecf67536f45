-- A role that is neither superuser nor workload_admin acts only in tenants and applications it (or a role it belongs to) is a member of: naming another is WORKLOAD_UNAUTHORIZED, another's workload is WORKLOAD_NOT_FOUND, and a role with no membership can do nothing (SPEC section 5).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS tn_a; DROP ROLE IF EXISTS tn_b; DROP ROLE IF EXISTS tn_none; DROP ROLE IF EXISTS tn_group; DROP ROLE IF EXISTS tn_via_group;
RESET client_min_messages;
CREATE ROLE tn_a; CREATE ROLE tn_b; CREATE ROLE tn_none; CREATE ROLE tn_group; CREATE ROLE tn_via_group;
GRANT workload_client, workload_worker TO tn_a, tn_b, tn_none, tn_group;
GRANT tn_group TO tn_via_group;
SELECT workload_add_tenant_member('tn_a', 'acme', 'billing');
SELECT workload_add_tenant_member('tn_a', 'acme', 'billing');   -- idempotent
SELECT workload_add_tenant_member('tn_b', 'globex', 'billing');
SELECT workload_add_tenant_member('tn_group', 'globex', 'billing');
SELECT role, tenant_id, application_id FROM workload.tenant_members ORDER BY 1, 2, 3;

-- specs are signed by the admin (the superuser here) beforehand
SELECT t.spec('a1') AS spec_a, t.spec('b1', '{}', 'globex') AS spec_b, t.spec('a-other-app', '{}', 'acme', 'payroll') AS spec_a_payroll \gset
-- B's workload, held by a B worker
SET ROLE tn_b;
SELECT workload_create(:'spec_b') ->> 'workload_id' AS b_id \gset
SELECT claim_id AS b_claim, fencing_token AS b_tok FROM workload_claim('wb', '{}', 'globex', 'billing', start => true) \gset
RESET ROLE;
SELECT t.spec('a2', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'b_id')))) AS spec_a_dep \gset

SET ROLE tn_a;
-- A works in its own tenant
SELECT workload_create(:'spec_a') ->> 'state' AS a_creates;
RESET ROLE;
SELECT t.fingerprint() AS before \gset
SET ROLE tn_a;
-- A names tenant B, or another application of its own tenant: unauthorized
SELECT workload_create(:'spec_b');
\echo :SQLSTATE
SELECT workload_create(:'spec_a_payroll');
\echo :SQLSTATE
SELECT * FROM workload_claim('wa', '{}', 'globex', 'billing');
\echo :SQLSTATE
SELECT count(*) FROM workload_list('globex', 'billing');
\echo :SQLSTATE
-- A holds B's workload id: it does not exist for A, in every function
SELECT workload_get(:'b_id');
\echo :SQLSTATE
SELECT count(*) FROM workload_history(:'b_id');
\echo :SQLSTATE
SELECT workload_cancel(:'b_id', 'mallory');
\echo :SQLSTATE
SELECT workload_retry(:'b_id', 'mallory');
\echo :SQLSTATE
SELECT * FROM workload_claim_id(:'b_id', 'wa', '{}');
\echo :SQLSTATE
-- even with B's stolen fence
SELECT workload_heartbeat(:'b_id', :'b_claim', 'wb', :b_tok, '1 minute');
\echo :SQLSTATE
SELECT workload_complete(:'b_id', :'b_claim', 'wb', :b_tok, 'stolen', '{}');
\echo :SQLSTATE
SELECT workload_fail(:'b_id', :'b_claim', 'wb', :b_tok, 'validation', 'x');
\echo :SQLSTATE
SELECT workload_execution_context(:'b_id', :'b_claim', 'wb', :b_tok);
\echo :SQLSTATE
SELECT outcome, code FROM workload_complete_many('wb', jsonb_build_array(jsonb_build_object(
    'workload_id', :'b_id', 'claim_id', :'b_claim', 'fencing_token', :b_tok, 'result_id', 'stolen', 'output', '{}'::jsonb)));
-- a dependency in tenant B does not exist for A either
SELECT workload_create(:'spec_a_dep');
\echo :SQLSTATE
RESET ROLE;
SELECT t.fingerprint() = :'before' AS nothing_changed;
SELECT count(*) FILTER (WHERE tenant_id = 'globex') AS b_workloads, count(*) FILTER (WHERE tenant_id = 'acme') AS a_workloads
FROM workload.workloads;
SELECT state FROM workload.workloads WHERE workload_id = :'b_id';

-- a role with no membership can do nothing, anywhere
SET ROLE tn_none;
SELECT workload_create(:'spec_a');
\echo :SQLSTATE
SELECT * FROM workload_claim('wn', '{}', 'acme', 'billing');
\echo :SQLSTATE
SELECT count(*) FROM workload_list('acme', 'billing');
\echo :SQLSTATE
SELECT workload_get(:'b_id');
\echo :SQLSTATE
RESET ROLE;

-- membership through a group role counts; removing it takes effect at once
SET ROLE tn_via_group;
SELECT workload_get(:'b_id') ->> 'state' AS via_group;
RESET ROLE;
SELECT workload_remove_tenant_member('tn_group', 'globex', 'billing');
SET ROLE tn_via_group;
SELECT workload_get(:'b_id');
\echo :SQLSTATE
RESET ROLE;

-- membership management refuses NULLs and unknown roles
SELECT workload_add_tenant_member(NULL, 'acme', 'billing');
\echo :SQLSTATE
SELECT workload_add_tenant_member('tn_nobody_at_all', 'acme', 'billing');
\echo :SQLSTATE
SELECT workload_remove_tenant_member('tn_a', '', 'billing');
\echo :SQLSTATE

DROP OWNED BY tn_a, tn_b, tn_none, tn_group, tn_via_group;
DROP ROLE tn_a; DROP ROLE tn_b; DROP ROLE tn_none; DROP ROLE tn_via_group; DROP ROLE tn_group;
