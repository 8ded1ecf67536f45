-- Cancelling a workload cancels every dependent it leaves unreachable, however long the chain: 10,000 links in one call, no recursion limit (SPEC section 5, maintenance isolation; section 4, workload_cancel).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- chain(tenant, n, extra): n workloads, each depending on the one before; returns the head
CREATE FUNCTION pg_temp.chain(tenant text, n int, head_extra jsonb DEFAULT '{}') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    g jsonb := t.grant(tenant, 'app');
    base jsonb := t.spec('x', '{}', tenant, 'app') || jsonb_build_object('authorization_snapshot', g);
    head text;
    prev text;
BEGIN
    head := workload_create(base || head_extra || jsonb_build_object('idempotency_key', 'link-0')) ->> 'workload_id';
    prev := head;
    FOR i IN 1 .. n LOOP
        prev := workload_create(base || jsonb_build_object('idempotency_key', 'link-' || i,
            'dependencies', jsonb_build_array(jsonb_build_object('workload_id', prev)))) ->> 'workload_id';
    END LOOP;
    RETURN head;
END $$;

SELECT pg_temp.chain('chain-a', 10000) AS head \gset
SELECT count(*) AS links, count(*) FILTER (WHERE state = 'READY') AS ready
FROM workload.workloads WHERE tenant_id = 'chain-a';
-- on 1.1 the recursive cascade overflowed the stack after some six thousand links
SELECT workload_cancel(:'head', 'ops');
SELECT state, count(*) FROM workload.workloads WHERE tenant_id = 'chain-a' GROUP BY state;
-- each link says which dependency made it unreachable, and the chain's end was reached
SELECT count(*) AS cascade_events FROM workload.event_log
WHERE tenant_id = 'chain-a' AND event_type = 'workload.cancelled'
  AND evidence ->> 'cause' = 'dependency_unreachable' AND evidence ->> 'dependency_state' = 'CANCELLED';
