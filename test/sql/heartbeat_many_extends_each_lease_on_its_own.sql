-- workload_heartbeat_many extends the leases of a batch of one worker's claims in one transaction, each item on its own: a stale fence, an expired lease, a secret in the progress, an unknown workload or a malformed item is refused and changes nothing, the rest are extended with the answer workload_heartbeat gives, cancellation_requested included (SPEC section 4, "Claiming and running"; since 1.1).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT count(t.create('h' || g)) AS created FROM generate_series(1, 6) g;
CREATE TEMP TABLE c AS
SELECT x.*, s.idempotency_key AS k
FROM workload_claim('w1', '{}', 'acme', 'billing', '30 seconds', 10, true) x
JOIN workload.specs s USING (workload_id);
SELECT count(*) AS claimed FROM c;
-- h3's client asks to cancel it: heartbeats go on and say so
SELECT workload_cancel((SELECT workload_id FROM c WHERE k = 'h3'), 'ops') AS h3;
-- h6 is heartbeated on its own, at the same moment, to compare the answers
SET workload.clock_override = '2026-01-01 00:00:20+00';
SELECT workload_heartbeat(workload_id, claim_id, 'w1', fencing_token, '45 seconds', '{"pct": 60}') AS single
FROM c WHERE k = 'h6' \gset
SELECT t.fingerprint() AS before \gset

-- h1 carries a stale token, h5 a secret in its progress; h2 reports progress;
-- h4 is named twice; one item names no workload, one has an unknown field,
-- one is not an object
SELECT coalesce(c.k, m.workload_id) AS item, m.outcome, m.code,
       m.answer ->> 'state' AS state, m.answer ->> 'lease_expires_at' AS lease_expires_at,
       m.answer ->> 'cancellation_requested' AS cancellation_requested
FROM workload_heartbeat_many('w1',
    (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id, 'claim_id', claim_id,
         'fencing_token', CASE k WHEN 'h1' THEN fencing_token + 1 ELSE fencing_token END)
         || CASE k WHEN 'h2' THEN '{"progress": {"pct": 40}}'::jsonb
                   WHEN 'h5' THEN '{"progress": {"password": "hunter2"}}'::jsonb ELSE '{}' END)
     FROM c, generate_series(1, 2) rep WHERE k <> 'h6' AND (rep = 1 OR k = 'h4'))
    || '[{"workload_id": "workload_000000000000000000000000", "claim_id": "x", "fencing_token": 1},
         {"workload_id": "x", "claim_id": "y", "fencing_token": 1, "extra": 1},
         "not an object"]'::jsonb,
    '45 seconds') m
LEFT JOIN c USING (workload_id)
ORDER BY m.outcome, m.code NULLS FIRST, item;

-- the extended rows carry the new lease and heartbeat; only h2 got progress;
-- h1 and h5 are as they were
SELECT k, w.state, w.lease_expires_at, w.last_heartbeat_at, w.progress
FROM c JOIN workload.workloads w USING (workload_id) ORDER BY k;
-- the batch answers exactly what workload_heartbeat answers
SELECT m.answer - 'workload_id' = :'single'::jsonb - 'workload_id' AS same_answer
FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
         'claim_id', claim_id, 'fencing_token', fencing_token, 'progress', '{"pct": 60}'::jsonb))
     FROM c WHERE k = 'h4'), '45 seconds') m;
-- no event is written for a heartbeat, as for workload_heartbeat
SELECT count(*) AS heartbeat_events FROM workload.event_log WHERE event_type LIKE '%heartbeat%';

-- past h5's lease (it was not extended): refused, the others still extended
SET workload.clock_override = '2026-01-01 00:00:40+00';
SELECT k, m.outcome, m.code
FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
         'claim_id', claim_id, 'fencing_token', fencing_token)) FROM c WHERE k IN ('h2', 'h5')),
     '45 seconds') m JOIN c USING (workload_id) ORDER BY k;

-- a worker role in its own tenant: another tenant's claim in its batch is not found, while
-- its own claim (a claim belongs to the role that took it) is extended
SELECT t.create('foreign', '{}', 'other', 'billing') IS NOT NULL AS created,
       t.create('mine') IS NOT NULL AS created_mine;
CREATE TEMP TABLE f AS SELECT * FROM workload_claim('w1', '{}', 'other', 'billing', '30 seconds', 1, true);
SELECT workload_add_tenant_member('workload_worker', 'acme', 'billing');
GRANT SELECT ON c, f TO workload_worker;
SET ROLE workload_worker;
CREATE TEMP TABLE mine AS SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', '30 seconds', 1, true);
SELECT m.outcome, m.code
FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
         'claim_id', claim_id, 'fencing_token', fencing_token))
     FROM (SELECT workload_id, claim_id, fencing_token FROM mine
           UNION ALL SELECT workload_id, claim_id, fencing_token FROM f) x), '45 seconds') m
ORDER BY 1, 2;
RESET ROLE;
SELECT w.lease_expires_at = '2026-01-01 00:01:10+00' AS foreign_lease_as_claimed
FROM f JOIN workload.workloads w USING (workload_id);

-- the whole call is refused, changing nothing, for a NULL argument, a
-- non-array, too many items, or an extend that is not a positive interval
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_heartbeat_many(NULL, '[]', '1 minute');
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', NULL, '1 minute');
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', '[]', NULL);
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', '{"workload_id": "x"}', '1 minute');
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(g) FROM generate_series(1, 1001) g), '1 minute');
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
         'claim_id', claim_id, 'fencing_token', fencing_token)) FROM c), '-1 minute');
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', '[]', '1 minute');
SELECT t.fingerprint() = :'before' AS unchanged;
-- PUBLIC may not call it; a client role may not either
SET ROLE workload_client;
SELECT * FROM workload_heartbeat_many('w1', '[]', '1 minute');
\echo :SQLSTATE
RESET ROLE;
