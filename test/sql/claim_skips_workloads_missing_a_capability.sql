-- A worker claims only workloads whose capability_snapshot is a subset of its capabilities; '*' is a literal capability here, not a wildcard; an empty snapshot is claimable by anyone (SPEC 4, "Claiming and running": workload_claim).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-caps

SELECT t.create('needs-gpu', '{"priority": 10, "capability_snapshot": ["gpu"]}', :'tn') IS NOT NULL AS created;
SELECT t.create('needs-gpu-net', '{"priority": 5, "capability_snapshot": ["gpu", "net"]}', :'tn') IS NOT NULL AS created;
SELECT t.create('needs-star', '{"priority": 3, "capability_snapshot": ["*"]}', :'tn') IS NOT NULL AS created;
SELECT t.create('needs-none', '{"priority": 0, "capability_snapshot": []}', :'tn') IS NOT NULL AS created;
SELECT t.create('needs-nothing-said', '{}', :'tn') IS NOT NULL AS created;
SELECT input->>'n' AS key, capability_snapshot
FROM workload.workloads w JOIN workload.specs s USING (workload_id) WHERE w.tenant_id = :'tn' ORDER BY priority DESC, key;

SET workload.clock_override = '2026-01-01 00:00:10+00';
-- a worker with no capabilities gets only the workloads that need none, though others rank higher
SELECT input->>'n' AS key FROM workload_claim('w-bare', '{}', :'tn', 'billing', max_items => 10) ORDER BY 1;

-- a worker with net only: nothing left it may take; the empty claim changes nothing
SELECT t.fingerprint() AS before \gset
SELECT count(*) AS claimed FROM workload_claim('w-net', '{net}', :'tn', 'billing', max_items => 10);
-- capabilities are matched exactly: GPU is not gpu
SELECT count(*) AS claimed FROM workload_claim('w-upper', '{GPU,NET}', :'tn', 'billing', max_items => 10);
SELECT t.fingerprint() = :'before' AS unchanged;

-- '*' in the worker's list matches only a workload that asks for '*' itself:
-- needs-gpu and needs-gpu-net rank higher and stay READY
SELECT input->>'n' AS key FROM workload_claim('w-star', '{*}', :'tn', 'billing', max_items => 10) ORDER BY 1;

-- gpu alone is not enough for needs-gpu-net
SELECT input->>'n' AS key FROM workload_claim('w-gpu', '{gpu}', :'tn', 'billing', max_items => 10) ORDER BY 1;

-- a superset (order and extra capabilities do not matter) takes it
SELECT input->>'n' AS key FROM workload_claim('w-full', '{extra,net,gpu}', :'tn', 'billing', max_items => 10) ORDER BY 1;

-- who got what
SELECT s.input->>'n' AS key, w.state, w.worker_id, w.capability_snapshot
FROM workload.workloads w JOIN workload.specs s USING (workload_id) WHERE w.tenant_id = :'tn' ORDER BY key;

-- a capabilities list that is NULL, holds NULL or a blank is WORKLOAD_INVALID
SELECT t.create('needs-none-2', '{}', :'tn') IS NOT NULL AS created;
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_claim('w-bad', NULL, :'tn', 'billing');
\echo :SQLSTATE
SELECT * FROM workload_claim('w-bad', ARRAY['gpu', NULL], :'tn', 'billing');
\echo :SQLSTATE
SELECT * FROM workload_claim('w-bad', ARRAY[' '], :'tn', 'billing');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
