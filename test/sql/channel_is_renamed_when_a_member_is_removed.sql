-- When a member is removed from a tenant and application, its NOTIFY channel gets a new name under a new secret of its own (workload_channel answers it; other tenants' channels keep theirs), so a removed role that still listens hears nothing more; removing a role that was no member renames nothing (SPEC section 5.1, "The channel secret is rotated when a member is removed").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET client_min_messages = warning;
DROP ROLE IF EXISTS ch_worker; DROP ROLE IF EXISTS ch_gone;
RESET client_min_messages;
CREATE ROLE ch_worker; CREATE ROLE ch_gone;
GRANT workload_worker TO ch_worker, ch_gone;
SELECT workload_add_tenant_member(r, 'acme', 'billing') FROM unnest(ARRAY['ch_worker', 'ch_gone']) r;
SELECT workload_add_tenant_member('ch_worker', 'globex', 'billing');

SELECT workload_channel('acme', 'billing') AS acme_before, workload_channel('globex', 'billing') AS globex_before \gset
-- the formula of SPEC section 4 under the secret made at CREATE EXTENSION
SELECT :'acme_before' = 'workload_' || left(encode(hmac('acme:billing', c.secret, 'sha256'), 'hex'), 32) AS spec_formula
FROM workload.channel_secret c;
-- removing a role that is no member of globex renames nothing
SELECT workload_remove_tenant_member('ch_gone', 'globex', 'billing');
SELECT workload_channel('globex', 'billing') = :'globex_before' AS globex_kept;
SELECT count(*) AS own_secrets FROM workload.channel_secrets;

-- ch_gone is removed from acme: acme's channel is renamed, under acme's own secret
SELECT workload_remove_tenant_member('ch_gone', 'acme', 'billing');
SELECT workload_channel('acme', 'billing') AS acme_after \gset
SELECT :'acme_after' <> :'acme_before' AS acme_renamed,
       :'acme_after' = 'workload_' || left(encode(hmac('acme:billing', s.secret, 'sha256'), 'hex'), 32) AS same_formula
FROM workload.channel_secrets s WHERE s.tenant_id = 'acme' AND s.application_id = 'billing';
SELECT workload_channel('globex', 'billing') = :'globex_before' AS globex_kept;
-- the remaining member is told the new name; the removed role may not ask for it
SET ROLE ch_worker;
SELECT workload_channel('acme', 'billing') = :'acme_after' AS member_hears_the_new_name;
RESET ROLE;
SET ROLE ch_gone;
SELECT workload_channel('acme', 'billing');
\echo :SQLSTATE
RESET ROLE;
-- creating goes on (its NOTIFY goes to the new name)
SELECT t.create('after-rotation') IS NOT NULL AS created;
-- nobody but the extension's owner reads the secrets
SELECT has_table_privilege('workload_admin', 'workload.channel_secrets', 'SELECT') AS admin_reads,
       has_table_privilege('pg_read_all_data', 'workload.channel_secrets', 'SELECT') AS reader_privilege;
SET ROLE pg_read_all_data;
SELECT count(*) AS rows_seen_by_pg_read_all_data FROM workload.channel_secrets;
RESET ROLE;

SELECT workload_remove_tenant_member('ch_worker', t, 'billing') FROM unnest(ARRAY['acme', 'globex']) t;
SET client_min_messages = warning;
DROP OWNED BY ch_worker, ch_gone; DROP ROLE ch_worker; DROP ROLE ch_gone;
