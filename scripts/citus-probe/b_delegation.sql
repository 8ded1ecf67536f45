-- b_delegation.sql: where a distributed function's call runs (probe_where() answers with
-- the port, the application name and whether our API flag is set), by call form.
-- acme is on w1, hooli on w2.
CREATE FUNCTION probe_srf(tenant text) RETURNS TABLE (node text, n bigint) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT probe_where(), count(*) FROM m.workloads WHERE tenant_id = tenant;
  RETURN QUERY SELECT probe_where(), 2::bigint;
END $$;
SELECT create_distributed_function('probe_srf(text)', '$1', colocate_with := 'm.workloads');
CREATE FUNCTION probe_json(tenant text) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN RETURN jsonb_build_object('node', probe_where()); END $$;
SELECT create_distributed_function('probe_json(text)', '$1', colocate_with := 'm.workloads');
\echo -- 0 two calls in one SELECT
SELECT probe_deleg('acme', 'SELECT probe_where()', 1), probe_deleg('hooli', 'SELECT probe_where()', 1);
\echo -- 1 autocommit, plain distributed function
SELECT probe_deleg('acme', 'SELECT probe_where()', 1);
\echo -- 2 in a transaction block, plain
BEGIN; SELECT probe_deleg('acme', 'SELECT probe_where()', 1); COMMIT;
\echo -- 3 set-returning: SELECT * FROM f()
SELECT * FROM probe_srf('acme');
\echo -- 3b set-returning: SELECT f()
SELECT probe_srf('acme');
\echo -- 4 jsonb result (plpgsql; a LANGUAGE sql body would be inlined and never delegated)
SELECT probe_json('hooli');
\echo -- 5 expression around the call
SELECT probe_deleg('acme', 'SELECT probe_where()', 1) || '';
\echo -- 6 prepared statement with the tenant as parameter
PREPARE p(text) AS SELECT probe_deleg($1, 'SELECT probe_where()', 1);
EXECUTE p('acme'); EXECUTE p('hooli'); EXECUTE p('acme'); EXECUTE p('hooli'); EXECUTE p('acme'); EXECUTE p('hooli'); EXECUTE p('acme');
\echo -- 7 force_delegation, autocommit
SELECT probe_force('acme', 'SELECT probe_where()', 1);
\echo -- 8 force_delegation: two calls same tenant in one transaction
BEGIN; SELECT probe_force('acme', 'SELECT probe_where()', 1); SELECT probe_force('acme', 'SELECT count(*) FROM m.workloads WHERE tenant_id = $1', 1); COMMIT;
\echo -- 9 force_delegation: tenant A then tenant B (other node) in one transaction
BEGIN; SELECT probe_force('acme', 'SELECT probe_where()', 1); SELECT probe_force('hooli', 'SELECT probe_where()', 1); COMMIT;
\echo -- 10 force_delegation: tenant A then tenant stark (same node w1, other shard)
BEGIN; SELECT probe_force('acme', 'SELECT probe_where()', 1); SELECT probe_force('stark', 'SELECT probe_where()', 1); COMMIT;
\echo -- 11 force_delegation: plain statement for A first, then the call
BEGIN; SELECT count(*) FROM m.workloads WHERE tenant_id = 'acme'; SELECT probe_force('acme', 'SELECT probe_where()', 1); COMMIT;
\echo -- 12 force_delegation: call then a plain statement on A, then on B
BEGIN; SELECT probe_force('acme', 'SELECT probe_where()', 1); SELECT count(*) FROM m.workloads WHERE tenant_id = 'acme'; SELECT count(*) FROM m.workloads WHERE tenant_id = 'hooli'; COMMIT;
\echo -- 13 force_delegation in txn: function touches a reference table (read)
BEGIN; SELECT probe_force('acme', 'SELECT count(*) FROM m.signing_keys', 1); COMMIT;
\echo -- 14 force_delegation in txn: function writes a reference table
BEGIN; SELECT probe_force('acme', 'INSERT INTO m.revoked_grants (grant_id) VALUES ($1 || random()::text)', 1); COMMIT;
\echo -- 15 force_delegation in txn: function reads another tenant (multi-shard)
BEGIN; SELECT probe_force('acme', 'SELECT count(*) FROM m.workloads', 1); COMMIT;
\echo -- 16 plain delegation autocommit: function reads all tenants / writes reference table
SELECT probe_deleg('acme', 'SELECT count(*) FROM m.workloads', 1);
SELECT probe_deleg('acme', 'INSERT INTO m.revoked_grants (grant_id) VALUES ($1 || random()::text) RETURNING grant_id', 1);
\echo -- 17 force_delegation: call in txn for A, the function touches another tenant on the same node
BEGIN; SELECT probe_force('acme', 'SELECT count(*) FROM m.workloads WHERE tenant_id = ''stark''', 1); COMMIT;
\echo -- 18 force_delegation: SELECT * FROM f() form in txn, then a rollback
BEGIN; SELECT * FROM probe_force('acme', 'UPDATE m.workloads SET priority = 7 WHERE tenant_id = $1 AND workload_id = ''acme_1''', 1); ROLLBACK;
SELECT priority FROM m.workloads WHERE tenant_id = 'acme' AND workload_id = 'acme_1';
\echo -- 19 nested, from C through SPI (custom plan): SELECT * FROM force_delegated($1, ...)
SELECT probe_run('acme', $q$SELECT * FROM probe_force($1, 'SELECT probe_where()', 1)$q$, 2);
\echo -- 20 nested, from C through SPI (generic plan)
SELECT probe_run('acme', $q$SELECT * FROM probe_force($1, 'SELECT probe_where()', 1)$q$, 1);
\echo -- 21 nested, from C: SELECT force_delegated($1, ...) (not in FROM)
SELECT probe_run('acme', $q$SELECT probe_force($1, 'SELECT probe_where()', 1)$q$, 2);
\echo -- 22 nested, from C: a plain (not forced) distributed function
SELECT probe_run('acme', $q$SELECT * FROM probe_deleg($1, 'SELECT probe_where()', 1)$q$, 2);
\echo -- 23 nested force-delegated calls from C inside BEGIN, tenant on w1 then tenant on w2
BEGIN;
SELECT probe_run('acme', $q$SELECT * FROM probe_force($1, 'SELECT probe_where()', 1)$q$, 2);
SELECT probe_run('hooli', $q$SELECT * FROM probe_force($1, 'SELECT probe_where()', 1)$q$, 2);
COMMIT;
\echo -- 24 from a DO block: x := f() (a simple expression) and SELECT * INTO x FROM f()
DO $$ DECLARE r text; BEGIN r := probe_force('acme', 'SELECT probe_where()', 1); RAISE NOTICE 'assign: %', r;
  SELECT * INTO r FROM probe_force('acme', 'SELECT probe_where()', 1); RAISE NOTICE 'select into from: %', r; END $$;
\echo -- 25 the tenant looked up by workload id inside the distribution argument: the call runs once per shard
SELECT probe_run_many('x', ARRAY[$q$SELECT count(*) FROM probe_force((SELECT w.tenant_id FROM m.workloads w WHERE w.workload_id = $2), 'SELECT probe_where()', 1)$q$], 2, '{hooli_5}');
\echo -- 26 the lookup by workload id alone from C: generic plan, then custom plan
SELECT probe_run('x', $q$SELECT w.tenant_id FROM m.workloads w WHERE w.workload_id = $2$q$, 1, '{hooli_5}');
SELECT probe_run('x', $q$SELECT w.tenant_id FROM m.workloads w WHERE w.workload_id = $2$q$, 2, '{hooli_5}');
\echo -- 27 the lookup, then FOR UPDATE without the tenant
SELECT probe_run('x', $q$SELECT w.tenant_id FROM m.workloads w WHERE w.workload_id = $2 FOR UPDATE$q$, 2, '{hooli_5}');
\echo -- 28 a call made on the tenant's own node runs there, in the caller's backend; on the other worker it is delegated
\c - - - :w1port
SELECT probe_deleg('acme', 'SELECT probe_where()', 1);
\c - - - :w2port
SELECT probe_deleg('acme', 'SELECT probe_where()', 1);
