-- workload_purge deletes finished workloads older than a cutoff, with everything hanging off them, one bounded batch per call (SPEC section 4).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- five succeed, one is cancelled, one dead-letters, one keeps running, one stays READY
SELECT count(t.create('p' || g)) FROM generate_series(1, 9) g;
CREATE TEMP TABLE c AS
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 7, start => true);
SELECT count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', 'r-' || workload_id, 'output', '[]'::jsonb)) FROM (SELECT * FROM c ORDER BY workload_id LIMIT 5) x));
SELECT workload_fail(workload_id, claim_id, 'w1', fencing_token, 'validation', 'bad input')
FROM (SELECT * FROM c ORDER BY workload_id OFFSET 5 LIMIT 1) x;
SELECT workload_cancel(workload_id, 'ops') FROM workload.workloads WHERE state = 'READY' ORDER BY workload_id LIMIT 1;
-- a dependent that still waits on a finished workload keeps that workload alive
SELECT t.create('p-dependent', jsonb_build_object('dependencies', jsonb_build_array(
    jsonb_build_object('workload_id', (SELECT workload_id FROM c ORDER BY workload_id LIMIT 1),
                       'required_state', 'SUCCEEDED')))) AS dependent \gset
SELECT state, count(*) FROM workload.workloads GROUP BY 1 ORDER BY 1;

-- nothing is older than an hour yet
SET workload.clock_override = '2026-01-01 00:30:00+00';
SELECT workload_purge('1 hour');

-- two hours later: batches of 2 until nothing is left; DEAD_LETTER stays unless asked
SET workload.clock_override = '2026-01-01 02:00:00+00';
SELECT workload_purge('1 hour', 2) AS first, workload_purge('1 hour', 2) AS second,
       workload_purge('1 hour', 2) AS third, workload_purge('1 hour', 2) AS fourth;
SELECT state, count(*) FROM workload.workloads GROUP BY 1 ORDER BY 1;
SELECT workload_purge('1 hour', 1000, include_dead_letter => true) AS dead_letters;
SELECT state, count(*) FROM workload.workloads GROUP BY 1 ORDER BY 1;

-- nothing of a purged workload is left in any table; the rest are intact
SELECT (SELECT count(*) FROM workload.specs s WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.workload_id = s.workload_id)) AS orphan_specs,
       (SELECT count(*) FROM workload.spec_authority a WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.tenant_id = a.tenant_id AND w.seq = a.workload_seq)) AS orphan_authority,
       (SELECT count(*) FROM workload.specs s WHERE NOT EXISTS (SELECT 1 FROM workload.spec_authority a WHERE a.tenant_id = s.tenant_id AND a.workload_seq = s.workload_seq)) AS specs_without_authority,
       (SELECT count(*) FROM workload.events e WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.tenant_id = e.tenant_id AND w.seq = e.workload_seq)) AS orphan_events,
       (SELECT count(*) FROM workload.attempts a WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.workload_id = a.workload_id)) AS orphan_attempts,
       (SELECT count(*) FROM workload.results r WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.workload_id = r.workload_id)) AS orphan_results,
       (SELECT count(*) FROM workload.queue q WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.tenant_id = q.tenant_id AND w.seq = q.seq)) AS orphan_queue_rows,
       (SELECT count(*) FROM workload.leases l WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.tenant_id = l.tenant_id AND w.seq = l.seq AND w.claim_id IS NOT NULL)) AS stray_leases,
       (SELECT count(*) FROM workload.events) AS events_left;

-- once the dependent finishes, its dependency can go too
SELECT claim_id, fencing_token FROM workload_claim_id(:'dependent', 'w1', '{}') \gset
SELECT workload_start(:'dependent', :'claim_id', 'w1', :fencing_token);
SELECT workload_complete(:'dependent', :'claim_id', 'w1', :fencing_token, 'r-dep', '[]') ->> 'outcome';
SET workload.clock_override = '2026-01-01 04:00:00+00';
SELECT workload_purge('1 hour');
SELECT state, count(*) FROM workload.workloads GROUP BY 1 ORDER BY 1;

-- bad arguments
SELECT workload_purge(NULL);
\echo :SQLSTATE
SELECT workload_purge('1 hour', 0);
\echo :SQLSTATE
SELECT workload_purge('1 hour', 100001);
\echo :SQLSTATE
SELECT workload_purge('-1 hour');
\echo :SQLSTATE
SELECT workload_purge('1 hour', 10, NULL);
\echo :SQLSTATE
