-- A role that may not act in a tenant, given EXECUTE on workload_recover_expired, returns at once and recovers nothing of that tenant (SPEC section 5, tenant isolation; section 4, workload_recover_expired).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'wl_outsider') THEN
        CREATE ROLE wl_outsider NOLOGIN;
    END IF;
END $$;
GRANT EXECUTE ON FUNCTION workload_recover_expired() TO wl_outsider;
GRANT USAGE ON SCHEMA t TO wl_outsider;
SELECT workload_add_tenant_member('wl_outsider', 'other', 'app');

-- one claim in tenant acme whose lease expires, one in the outsider's own tenant
SELECT t.create('held') AS held \gset
SELECT * FROM workload_claim_id(:'held', 'w1', '{}', '10 seconds') \gset held_
SELECT t.create('own', '{}', 'other', 'app') AS own \gset
SELECT * FROM workload_claim_id(:'own', 'w2', '{}', '10 seconds') \gset own_
SET workload.clock_override = '2026-01-01 00:01:00+00';

-- on 1.1 this loop selected the foreign row again and again until statement_timeout
SET statement_timeout = '5s';
SET ROLE wl_outsider;
SELECT id = :'own' AS recovered_own FROM workload_recover_expired() id;
RESET ROLE;
RESET statement_timeout;
-- the foreign claim is untouched: still held, its lease still expired, no recovery event
SELECT state, claimed FROM t.st(:'held');
SELECT count(*) AS recovery_events FROM workload.event_log
WHERE workload_id = :'held' AND actor = 'workload.recovery';
-- the outsider's own workload was recovered
SELECT state FROM t.st(:'own');
-- an admin recovers the rest
SELECT id = :'held' AS recovered_held FROM workload_recover_expired() id;
SELECT state, claimed FROM t.st(:'held');

REVOKE EXECUTE ON FUNCTION workload_recover_expired() FROM wl_outsider;
REVOKE USAGE ON SCHEMA t FROM wl_outsider;
SELECT workload_remove_tenant_member('wl_outsider', 'other', 'app');
