-- An approval needs a second pair of eyes, by identity: the approving role may not be the role that created the workload, a member of it, nor a role it is a member of (SET ROLE either way), superusers aside; a creator that no longer exists under its name (renamed) cannot be told apart from anyone (SPEC section 5.1, "Four eyes by identity").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS ap_alice; DROP ROLE IF EXISTS ap_group; DROP ROLE IF EXISTS ap_boss;
DROP ROLE IF EXISTS ap_carol; DROP ROLE IF EXISTS "AP_ALICE";
RESET client_min_messages;
-- alice creates; alice belongs to the group; boss may SET ROLE to alice; carol is someone else;
-- "AP_ALICE" is another role whose name differs from alice's only in case
CREATE ROLE ap_alice; CREATE ROLE ap_group; CREATE ROLE ap_boss; CREATE ROLE ap_carol;
CREATE ROLE "AP_ALICE";
GRANT ap_group TO ap_alice;
GRANT ap_alice TO ap_boss;
GRANT workload_client TO ap_alice, ap_group, ap_boss, ap_carol, "AP_ALICE";
GRANT workload_worker TO ap_alice;
SELECT workload_add_tenant_member(r, 'acme', 'billing')
FROM unnest(ARRAY['ap_alice', 'ap_group', 'ap_boss', 'ap_carol', 'AP_ALICE']) r;

-- alice creates two refunds (the admin signed their grants) and her worker puts them to wait
SELECT t.spec('refund-1') AS s1, t.spec('refund-2') AS s2 \gset
SET ROLE ap_alice;
SELECT workload_create(:'s1') ->> 'workload_id' AS r1 \gset
SELECT workload_create(:'s2') ->> 'workload_id' AS r2 \gset
SELECT count(*) AS waiting FROM (
    SELECT workload_wait(workload_id, claim_id, 'w1', fencing_token, 'human_approval', 'signoff',
                         '2026-01-03 00:00:00+00')
    FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', 2, start => true)) w;
-- alice herself
SELECT workload_approve(:'r1', 'human:alice', true, NULL);
\echo :SQLSTATE
-- alice through a group she belongs to (SET ROLE)
SET ROLE ap_group;
SELECT current_user;
SELECT workload_approve(:'r1', 'human:alice', true, NULL);
\echo :SQLSTATE
RESET ROLE;
-- boss, who may SET ROLE to alice
SET ROLE ap_boss;
SELECT workload_approve(:'r1', 'human:boss', true, NULL);
\echo :SQLSTATE
RESET ROLE;
SELECT state FROM workload.workloads WHERE workload_id = :'r1';
-- a role whose name is alice's in upper case is another role: it may approve
SET ROLE "AP_ALICE";
SELECT workload_approve(:'r2', 'human:other', true, NULL) AS approved;
RESET ROLE;
-- carol may, and the event names her role
SET ROLE ap_carol;
SELECT workload_approve(:'r1', 'human:carol', true, 'ok') AS approved;
RESET ROLE;
SELECT CASE workload_id WHEN :'r1' THEN 'r1' ELSE 'r2' END AS refund, state
FROM workload.workloads WHERE workload_id IN (:'r1', :'r2') ORDER BY 1;
SELECT evidence -> 'approver_role' AS approver_role FROM workload_history(:'r1') ORDER BY sequence DESC LIMIT 1;

-- a superuser's workload: its creator's superuser rights make nobody a member of it
SELECT t.create('refund-3') AS r3 \gset
SELECT claim_id AS c3, fencing_token AS f3 FROM t.run(:'r3') \gset
SELECT workload_wait(:'r3', :'c3', 'w1', :f3, 'human_approval', 'signoff', '2026-01-03 00:00:00+00');
SET ROLE ap_carol;
SELECT workload_approve(:'r3', 'human:carol', true, NULL) AS approved;
RESET ROLE;

-- alice's workload after alice was renamed: its creator cannot be told apart from anyone, so
-- neither the renamed alice nor carol may approve it; a superuser may
SELECT t.spec('refund-4') AS s4 \gset
SET ROLE ap_alice;
SELECT workload_create(:'s4') ->> 'workload_id' AS r4 \gset
SELECT claim_id AS c4, fencing_token AS f4 FROM workload_claim_id(:'r4', 'w1', '{}', '1 hour') \gset
SELECT workload_start(:'r4', :'c4', 'w1', :f4);
SELECT workload_wait(:'r4', :'c4', 'w1', :f4, 'human_approval', 'signoff', '2026-01-03 00:00:00+00');
RESET ROLE;
ALTER ROLE ap_alice RENAME TO ap_alice_renamed;
SET ROLE ap_alice_renamed;
SELECT workload_approve(:'r4', 'human:alice', true, NULL);
\echo :SQLSTATE
RESET ROLE;
SET ROLE ap_carol;
SELECT workload_approve(:'r4', 'human:carol', true, NULL);
\echo :SQLSTATE
RESET ROLE;
SELECT workload_approve(:'r4', 'human:admin', true, NULL) AS approved_by_a_superuser;
ALTER ROLE ap_alice_renamed RENAME TO ap_alice;

SELECT workload_remove_tenant_member(r, 'acme', 'billing')
FROM unnest(ARRAY['ap_alice', 'ap_group', 'ap_boss', 'ap_carol', 'AP_ALICE']) r;
SET client_min_messages = warning;
DROP OWNED BY ap_alice, ap_group, ap_boss, ap_carol, "AP_ALICE";
DROP ROLE ap_alice; DROP ROLE ap_group; DROP ROLE ap_boss; DROP ROLE ap_carol; DROP ROLE "AP_ALICE";
