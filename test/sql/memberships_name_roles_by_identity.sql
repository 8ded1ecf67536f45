-- A membership names its role by identity (its OID), never by a parsed or case-folded name: a membership of "Alice" lets the role "Alice" act, not alice; a role renamed keeps it; a role dropped and made again under the same name does not inherit it (SPEC section 5.1, "Memberships name roles by their identity").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS mi_alice; DROP ROLE IF EXISTS "MI_ALICE"; DROP ROLE IF EXISTS mi_renamed;
DROP ROLE IF EXISTS mi_bob;
RESET client_min_messages;
CREATE ROLE mi_alice; CREATE ROLE "MI_ALICE"; CREATE ROLE mi_bob;
GRANT workload_client, workload_worker TO mi_alice, "MI_ALICE", mi_bob;
SELECT t.spec('k1') AS spec, t.spec('k2') AS spec2 \gset

-- the membership is given to "MI_ALICE", spelled exactly
SELECT workload_add_tenant_member('MI_ALICE', 'acme', 'billing');
SELECT role, role_oid = '"MI_ALICE"'::regrole AS by_oid FROM workload.tenant_members;
-- mi_alice, whose name is the same but for case, may not act
SET ROLE mi_alice;
SELECT workload_create(:'spec');
\echo :SQLSTATE
SELECT * FROM workload_claim('w', '{}', 'acme', 'billing');
\echo :SQLSTATE
RESET ROLE;
-- "MI_ALICE" may
SET ROLE "MI_ALICE";
SELECT workload_create(:'spec') ->> 'state' AS created;
RESET ROLE;

-- renamed, the role keeps its membership: it is the same role
ALTER ROLE "MI_ALICE" RENAME TO mi_renamed;
SET ROLE mi_renamed;
SELECT count(*) AS claimed FROM workload_claim('w', '{}', 'acme', 'billing');
RESET ROLE;

-- bob is a member; dropped and made again under the same name, the new bob is not
SELECT workload_add_tenant_member('mi_bob', 'acme', 'billing');
SELECT workload_remove_tenant_member('mi_bob', 'acme', 'billing');
SELECT workload_add_tenant_member('mi_bob', 'acme', 'billing');
SELECT count(*) AS bob_rows FROM workload.tenant_members WHERE role = 'mi_bob';
SET client_min_messages = warning;
DROP OWNED BY mi_bob; DROP ROLE mi_bob;
RESET client_min_messages;
CREATE ROLE mi_bob; GRANT workload_client TO mi_bob;
SET ROLE mi_bob;
SELECT workload_create(:'spec2');
\echo :SQLSTATE
RESET ROLE;
-- removing names the role exactly too: removing "mi_RENAMED" (no such role) is refused
SELECT workload_remove_tenant_member('mi_RENAMED', 'acme', 'billing');
\echo :SQLSTATE
SELECT workload_remove_tenant_member('mi_renamed', 'acme', 'billing');
-- the old bob's row counts for nobody; removing bob's membership removes it too
SELECT role FROM workload.tenant_members WHERE tenant_id = 'acme' ORDER BY 1;
SELECT workload_remove_tenant_member('mi_bob', 'acme', 'billing');
\echo :SQLSTATE
SELECT count(*) AS left FROM workload.tenant_members WHERE tenant_id = 'acme';

SET client_min_messages = warning;
DROP OWNED BY mi_alice, mi_renamed, mi_bob;
DROP ROLE mi_alice; DROP ROLE mi_renamed; DROP ROLE mi_bob;
