-- A claim never hands out work whose authorization chain holds a revoked grant, also before the tick's sweep dead-letters it (SPEC section 5, revocation): the chain is read from the spec (the queue row does not carry it), and only while a revocation waits to be swept.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET workload.clock_override = '2026-01-01 00:00:00+00';
-- as(key, who, prio): a READY workload requested by who under who's own grant
CREATE FUNCTION t.as_(key text, who text, prio int) RETURNS text LANGUAGE sql AS $$
    SELECT t.create(key, jsonb_build_object('priority', prio,
        'requested_by', jsonb_build_object('kind', 'agent', 'id', who),
        'authorization_snapshot', t.grant('acme', 'billing', who)))
$$;
SELECT t.as_('s1', 'someone', 9) AS s1 \gset
SELECT t.as_('s2', 'someone', 8) AS s2 \gset
SELECT t.as_('p1', 'planner', 1) AS p1 \gset
SELECT t.as_('p2', 'planner', 0) AS p2 \gset
SELECT t.as_('r1', 'runner', 7) AS r1 \gset
-- the queue row holds no chain: the spec does
SELECT count(*) AS queued, bool_and(s.grant_ids @> ARRAY['grant-acme-someone']) FILTER (WHERE s.workload_id IN (:'s1', :'s2')) AS chain_in_spec
FROM workload.queue q JOIN workload.specs s ON s.tenant_id = q.tenant_id AND s.workload_seq = q.seq;

-- nothing revoked: the best first
SELECT workload_id = :'s1' AS best_first FROM workload_claim('w1', '{}', 'acme', 'billing');
SELECT t.as_('s3', 'someone', 9) AS s3 \gset

-- someone's grant revoked, not yet swept: s2 and s3 stay READY and queued, and no claim takes them
SELECT workload_revoke_grant('grant-acme-someone');
SELECT count(*) AS unswept FROM workload.revoked_grants WHERE swept_at IS NULL;
SELECT array_agg(CASE workload_id WHEN :'r1' THEN 'r1' WHEN :'p1' THEN 'p1' WHEN :'p2' THEN 'p2' ELSE workload_id END
    ORDER BY fencing_token, workload_id) AS claimed
FROM workload_claim('w2', '{}', 'acme', 'billing', max_items => 10);
SELECT state FROM workload.workloads WHERE workload_id IN (:'s2', :'s3') ORDER BY workload_id;
SELECT count(*) AS still_queued FROM workload.queue q JOIN workload.workloads w USING (tenant_id, seq)
WHERE w.workload_id IN (:'s2', :'s3');
SELECT count(*) AS nothing_left FROM workload_claim('w3', '{}', 'acme', 'billing', max_items => 10);
-- named, it is refused with the reason
SELECT * FROM workload_claim_id(:'s2', 'w3', '{}');
\echo :SQLSTATE

-- a workload's own run grant revoked: the same
SELECT t.as_('p3', 'planner', 5) AS p3 \gset
SELECT s.grant_ids[1] AS run_grant FROM workload.specs s WHERE s.workload_id = :'p3' \gset
SELECT workload_revoke_grant(:'run_grant');
SELECT t.as_('p4', 'planner', 4) AS p4 \gset
SELECT workload_id = :'p4' AS only_p4 FROM workload_claim('w4', '{}', 'acme', 'billing', max_items => 10);

-- the sweep dead-letters them; with nothing left to sweep the claim reads no spec
SELECT workload_tick() ->> 'revoked_dead_lettered' AS revoked_dead_lettered;
SELECT count(*) AS unswept FROM workload.revoked_grants WHERE swept_at IS NULL;
SELECT state FROM workload.workloads WHERE workload_id IN (:'s2', :'s3', :'p3') ORDER BY workload_id;
SELECT t.as_('p5', 'planner', 0) AS p5 \gset
SELECT workload_id = :'p5' AS p5_claimed FROM workload_claim('w5', '{}', 'acme', 'billing');
