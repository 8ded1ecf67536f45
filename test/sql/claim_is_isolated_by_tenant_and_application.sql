-- A claim for one tenant and application never takes another tenant's or application's workloads, however high their priority or old their age (SPEC 4, "Claiming and running": workload_claim).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- older and higher priority, but elsewhere
SELECT t.create('other-tenant', '{"priority": 100}', 'hb-iso-globex', 'billing') IS NOT NULL AS created;
SELECT t.create('other-app', '{"priority": 100}', 'hb-iso-acme', 'reports') IS NOT NULL AS created;
SELECT t.create('other-both', '{"priority": 100}', 'hb-iso-globex', 'reports') IS NOT NULL AS created;
-- the same idempotency key in another tenant is another workload
SELECT t.create('same-key', '{"priority": 100}', 'hb-iso-globex', 'billing') IS NOT NULL AS created;
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT t.create('mine-1', '{}', 'hb-iso-acme', 'billing') IS NOT NULL AS created;
SELECT t.create('same-key', '{}', 'hb-iso-acme', 'billing') IS NOT NULL AS created;

SET workload.clock_override = '2026-01-01 00:02:00+00';
SELECT input->>'n' AS key FROM workload_claim('w-acme', '{}', 'hb-iso-acme', 'billing', max_items => 1000) ORDER BY 1;
-- nothing else of acme/billing is left, and the others are untouched
SELECT t.fingerprint() AS before \gset
SELECT count(*) AS claimed FROM workload_claim('w-acme', '{}', 'hb-iso-acme', 'billing', max_items => 1000);
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT w.tenant_id, w.application_id, s.input->>'n' AS key, w.state, w.attempt_count, w.worker_id
FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE w.tenant_id LIKE 'hb-iso-%'
ORDER BY w.tenant_id, w.application_id, key;

-- tenant and application are matched exactly, not by prefix or case
SELECT count(*) AS claimed FROM workload_claim('w-x', '{}', 'HB-ISO-ACME', 'billing', max_items => 1000);
SELECT count(*) AS claimed FROM workload_claim('w-x', '{}', 'hb-iso-glo', 'billing', max_items => 1000);
SELECT count(*) AS claimed FROM workload_claim('w-x', '{}', 'hb-iso-globex', 'billing ', max_items => 1000);
SELECT t.fingerprint() = :'before' AS unchanged;

-- each of the others is claimed only by a claim for its own tenant and application
SELECT input->>'n' AS key FROM workload_claim('w-globex', '{}', 'hb-iso-globex', 'billing', max_items => 1000) ORDER BY 1;
SELECT input->>'n' AS key FROM workload_claim('w-reports', '{}', 'hb-iso-acme', 'reports', max_items => 1000) ORDER BY 1;
SELECT input->>'n' AS key FROM workload_claim('w-gr', '{}', 'hb-iso-globex', 'reports', max_items => 1000) ORDER BY 1;
SELECT w.tenant_id, w.application_id, s.input->>'n' AS key, w.state, w.worker_id
FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE w.tenant_id LIKE 'hb-iso-%'
ORDER BY w.tenant_id, w.application_id, key;

-- NULL or blank tenant or application is WORKLOAD_INVALID
SELECT * FROM workload_claim('w-x', '{}', NULL, 'billing');
\echo :SQLSTATE
SELECT * FROM workload_claim('w-x', '{}', 'hb-iso-acme', NULL);
\echo :SQLSTATE
SELECT * FROM workload_claim('w-x', '{}', '', 'billing');
\echo :SQLSTATE
SELECT * FROM workload_claim('w-x', '{}', 'hb-iso-acme', '  ');
\echo :SQLSTATE
