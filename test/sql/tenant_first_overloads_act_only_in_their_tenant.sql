-- The tenant-first overloads (workload_start(tenant_id, workload_id, ...) and the other calls a worker makes by workload id) do what the original does for a workload of that tenant, and answer WORKLOAD_NOT_FOUND, changing nothing, for a workload of any other; a batch refuses only the items of other tenants; the tenant is checked like any tenant id; the routed twins (workload.route_*) exist for each and belong to the owner alone (SPEC section 1, "Sharding by tenant is real"; src/api_route.c).
\set SHOW_CONTEXT never
\set VERBOSITY terse
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT count(t.create('a' || g)) AS acme FROM generate_series(1, 4) g;
SELECT count(t.create('b1', '{}', 'other')) AS other;
CREATE TEMP TABLE c AS
SELECT x.*, s.idempotency_key AS k FROM workload_claim('w1', '{}', 'acme', 'billing', '30 seconds', 10) x
JOIN workload.specs s USING (workload_id);
SELECT t.fingerprint() AS before \gset

-- every overload, for acme's a1 but naming tenant "other": not found, nothing changed
SELECT workload_start('other', workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';
SELECT workload_heartbeat('other', workload_id, claim_id, 'w1', fencing_token, '1 minute') FROM c WHERE k = 'a1';
SELECT workload_checkpoint('other', workload_id, claim_id, 'w1', fencing_token, '{"s": 1}') FROM c WHERE k = 'a1';
SELECT workload_complete('other', workload_id, claim_id, 'w1', fencing_token, 'r-a1', '{}') FROM c WHERE k = 'a1';
SELECT workload_fail('other', workload_id, claim_id, 'w1', fencing_token, 'transient', 'e') FROM c WHERE k = 'a1';
SELECT workload_confirm_cancel('other', workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';
SELECT workload_execution_context('other', workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';
SELECT workload_resume('other', workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';
SELECT workload_wait('other', workload_id, claim_id, 'w1', fencing_token, 'schedule', NULL,
                     '2026-01-02 00:00:00+00') FROM c WHERE k = 'a1';
SELECT t.fingerprint() = :'before' AS unchanged;

-- a NULL tenant, a blank one, one with ':'
SELECT workload_start(NULL, workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';
SELECT workload_start('  ', workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';
SELECT workload_start('acme:x', workload_id, claim_id, 'w1', fencing_token) FROM c WHERE k = 'a1';

-- naming its own tenant, each does what the original does
SELECT workload_start('acme', workload_id, claim_id, 'w1', fencing_token) AS started
FROM c WHERE k IN ('a1', 'a2', 'a3', 'a4') ORDER BY k;
SELECT workload_heartbeat('acme', workload_id, claim_id, 'w1', fencing_token, '1 minute', '{"pct": 5}')
       ->> 'lease_expires_at' AS lease FROM c WHERE k = 'a1';
SELECT workload_checkpoint('acme', workload_id, claim_id, 'w1', fencing_token, '{"s": 1}') ->> 'sequence' AS checkpoint
FROM c WHERE k = 'a1';
SELECT workload_resume('acme', workload_id, claim_id, 'w1', fencing_token) -> 'checkpoint' ->> 'sequence' AS resumed
FROM c WHERE k = 'a1';
SELECT workload_execution_context('acme', workload_id, claim_id, 'w1', fencing_token) ->> 'tenant_id' AS context
FROM c WHERE k = 'a1';
SELECT workload_complete('acme', workload_id, claim_id, 'w1', fencing_token, 'r-a1', '{"ok": true}') ->> 'outcome' AS a1
FROM c WHERE k = 'a1';
SELECT workload_fail('acme', workload_id, claim_id, 'w1', fencing_token, 'permanent', 'no') AS a2 FROM c WHERE k = 'a2';
SELECT workload_wait('acme', workload_id, claim_id, 'w1', fencing_token, 'schedule', NULL,
                     '2026-01-02 00:00:00+00') AS a3 FROM c WHERE k = 'a3';

-- the batches: other's workload (claimed now) is refused as not found, acme's goes on
INSERT INTO c SELECT x.*, 'b1' FROM workload_claim('w1', '{}', 'other', 'billing', '30 seconds', 1, true) x;
SELECT k, m.outcome, m.code FROM workload_heartbeat_many('acme', 'w1',
    (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id, 'claim_id', claim_id,
         'fencing_token', fencing_token)) FROM c WHERE k IN ('a4', 'b1')), '1 minute') m
JOIN c USING (workload_id) ORDER BY k;
SELECT k, m.outcome, m.code FROM workload_complete_many('acme', 'w1',
    (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id, 'claim_id', claim_id,
         'fencing_token', fencing_token, 'result_id', 'r-' || k, 'output', '{}'::jsonb)) FROM c WHERE k IN ('a4', 'b1'))) m
JOIN c USING (workload_id) ORDER BY k;
SELECT k, w.state FROM c JOIN workload.workloads w USING (workload_id) ORDER BY k;
-- and other's, in its own tenant
SELECT workload_complete('other', workload_id, claim_id, 'w1', fencing_token, 'r-b1', '{}') ->> 'outcome' AS b1
FROM c WHERE k = 'b1';
-- after a tenant-first call, a plain one is narrowed to no tenant
SELECT count(*) AS plain_calls_see_every_tenant FROM c, LATERAL workload_get(c.workload_id) d;

-- the routed twins: one per overload and per other call for one tenant, executable by the owner only
SELECT count(*) AS routed,
       count(*) FILTER (WHERE has_function_privilege('workload_client', p.oid, 'EXECUTE')
           OR has_function_privilege('workload_worker', p.oid, 'EXECUTE')
           OR has_function_privilege('workload_admin', p.oid, 'EXECUTE')) AS executable_by_roles
FROM pg_proc p WHERE p.pronamespace = 'workload'::regnamespace AND p.proname LIKE 'route\_%';
-- a routed twin refuses a call that names no context (the caller; the sending node always gives one)
SELECT workload.route_workload_start('acme', workload_id, claim_id, 'w1', fencing_token, NULL) FROM c WHERE k = 'a1';
-- and one whose context does not name its caller as a string
SELECT workload.route_workload_start('acme', workload_id, claim_id, 'w1', fencing_token, '{"caller": 1}') FROM c WHERE k = 'a1';
SELECT workload.route_workload_start('acme', workload_id, claim_id, 'w1', fencing_token, '["postgres"]') FROM c WHERE k = 'a1';
