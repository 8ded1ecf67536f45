-- One tenant's 10,000-link dependency chain cancelled in a tick does not stop that tick: another tenant's expired lease is recovered in the same pass, and the whole chain is cancelled (SPEC section 5, maintenance isolation; section 4, workload_tick).
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

-- on 1.1 the cascade overflowed the stack and the whole tick failed, recovering nothing
SELECT t.recovered, t.failed, t.errors
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, errors jsonb);
SELECT state, claimed FROM t.st(:'b');
SELECT state, count(*) FROM workload.workloads WHERE tenant_id = 'tenant-a' GROUP BY state ORDER BY 1;
