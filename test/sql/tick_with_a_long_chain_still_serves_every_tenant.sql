-- One tenant's 10,000-link dependency chain cancelled by the tick does not stop or hold the tick: another tenant's expired lease is recovered in the same pass, each pass takes a bounded number of cascade steps and leaves the rest for the next, and the whole chain is cancelled over a few passes (SPEC section 5, maintenance isolation; section 5.1, a pass's budget; section 4, workload_tick).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

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

-- tenant a: a chain whose head a worker holds when its cancel is requested, and the worker
-- dies; tenant b: a claim whose lease lapses too.  The tick's lease recovery cancels a's head
-- (CANCELLATION_REQUESTED -> CANCELLED), which leaves the whole chain unreachable.
SELECT pg_temp.chain('tenant-a', 10000) AS head \gset
SELECT * FROM workload_claim_id(:'head', 'w-a', '{}', '10 seconds') \gset head_
SELECT workload_cancel(:'head', 'ops');
SELECT t.create('b-work', '{}', 'tenant-b', 'app') AS b \gset
SELECT * FROM workload_claim_id(:'b', 'w-b', '{}', '10 seconds') \gset b_
SET workload.clock_override = '2026-01-01 00:05:00+00';

-- the first pass recovers both leases; the chain's cascade is begun, and what its budget
-- did not reach is left for the next passes
SELECT t.recovered, t.failed, t.errors, t.cascade_steps <= 6000 AS bounded, t.more
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, errors jsonb, cascade_steps int, more boolean);
SELECT state, claimed FROM t.st(:'b');
SELECT count(*) > 0 AS left_for_later FROM workload.cascades WHERE tenant_id = 'tenant-a';
-- later passes go on with it, each within its budget, until nothing is left
CREATE TEMP TABLE passes (n serial, r jsonb);
DO $$
BEGIN
    FOR i IN 1 .. 50 LOOP
        INSERT INTO passes (r) SELECT workload_tick();
        EXIT WHEN NOT EXISTS (SELECT 1 FROM workload.cascades);
    END LOOP;
END $$;
SELECT count(*) <= 10 AS few_passes, bool_and((r ->> 'cascade_steps')::int <= 6000) AS each_bounded,
       sum((r ->> 'failed')::int) AS failed
FROM passes;
SELECT state, count(*) FROM workload.workloads WHERE tenant_id = 'tenant-a' GROUP BY state ORDER BY 1;
SELECT count(*) AS left FROM workload.cascades;
