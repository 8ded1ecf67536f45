-- A session's claim starts, in each priority it claimed from, after the last workload it claimed there (so a claim under a long-held snapshot does not walk every entry claimed since), yet every claim takes the best claimable workload, highest priority first, then oldest: a workload that became claimable behind a point (retried, recovered, woken, a dependency met, a rolled-back claim, come due) is taken before newer ones by the very next claim, in this session or another (SPEC section 4, workload_claim; section 5.1, "The claim order ... holds for every claim in every session").  With the library preloaded, as in the test command; without it, as in the package's build-time check, every claim scans from the start and each answer is the same (the _1 expected file).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-resume
\set retry '{"retry_policy": {"initial_delay_ms": 1, "backoff": "fixed", "max_attempts": 5}}'
SHOW workload.claim_full_scan_every;
-- the record of rows made claimable needs the library preloaded
SELECT setting ~ 'workload' AS preloaded FROM pg_settings WHERE name = 'shared_preload_libraries';

-- a1..a6 at priority 0, oldest first
SELECT count(t.create('a' || g, :'retry', :'tn')) AS created FROM generate_series(1, 6) g;
SET workload.clock_override = '2026-01-01 00:01:00+00';

-- claim 1 takes a1; it fails and is retried at once, keeping its created_at: behind the point
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'tn', 'billing', start => true) \gset
SELECT :'key' AS claim_1, workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'crashed') AS a1_after;
SET workload.clock_override = '2026-01-01 00:01:01+00';
-- claim 2 takes the retried a1 (the oldest), then the claims go on after it: a2, a3
SELECT input->>'n' AS claim_2, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS claim_3 FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS claim_4 FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);

-- a retried workload of a higher priority is taken before anything of the point's priority
SELECT t.create('h1', :'retry'::jsonb || '{"priority": 5}', :'tn') IS NOT NULL AS created;
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'tn', 'billing', start => true) \gset
SELECT :'key' AS claimed, workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'crashed') AS h1_after;
SET workload.clock_override = '2026-01-01 00:01:02+00';
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS key FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);

-- a workload not due yet (a backoff) is stepped over, and taken once it is due, before newer ones
\set td hb-due
\set slow '{"retry_policy": {"initial_delay_ms": 60000, "backoff": "fixed", "max_attempts": 5}}'
SELECT count(t.create('x' || g, :'slow', :'td')) AS created FROM generate_series(1, 4) g;
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'td', 'billing', start => true) \gset
SELECT :'key' AS claimed, workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'later') AS x1_after;
SELECT input->>'n' AS not_yet_due_so FROM workload_claim('w1', '{}', :'td', 'billing', start => true);
SET workload.clock_override = '2026-01-01 00:03:10+00';
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'td', 'billing', start => true);
SELECT input->>'n' AS key FROM workload_claim('w1', '{}', :'td', 'billing', start => true);

-- a dependency met behind the point: the dependent (older) is taken before newer work
\set tp hb-dep
SELECT t.create('parent', '{}', :'tp') AS parent \gset
SELECT t.create('child', jsonb_build_object('dependencies', jsonb_build_array(
    jsonb_build_object('workload_id', :'parent'))), :'tp') IS NOT NULL AS child_created;
SELECT count(t.create('n' || g, '{}', :'tp')) AS created FROM generate_series(1, 2) g;
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'tp', 'billing', start => true) \gset
SELECT input->>'n' AS child_blocked_so FROM workload_claim('w1', '{}', :'tp', 'billing', start => true);
SELECT workload_complete(:'id', :'claim', 'w1', :token, 'r-parent', '{}') ->> 'outcome' AS parent;
SELECT input->>'n' AS key FROM workload_claim('w1', '{}', :'tp', 'billing', start => true);
SELECT input->>'n' AS key FROM workload_claim('w1', '{}', :'tp', 'billing', start => true);

-- a claim rolled back puts its workload back: the next claim takes it again
SELECT count(*) AS drained FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => 20, start => true);
SELECT count(t.create('b' || g, '{}', :'tn')) AS created FROM generate_series(1, 2) g;
BEGIN;
SELECT input->>'n' AS claimed_then_rolled_back FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
ROLLBACK;
SELECT input->>'n' AS claimed_again FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS claimed_next FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);

-- the point is kept per capability set: c1 needs "gpu", which a claim with no
-- capabilities steps over; the first claim with "gpu" takes c1, not c3
SELECT t.create('c1', '{"capability_snapshot": ["gpu"]}', :'tn') IS NOT NULL AS created;
SELECT count(t.create('c' || g, '{}', :'tn')) AS created FROM generate_series(2, 3) g;
SELECT input->>'n' AS without_gpu FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS with_gpu FROM workload_claim('w1', '{gpu}', :'tn', 'billing', start => true);
SELECT input->>'n' AS with_gpu FROM workload_claim('w1', '{gpu}', :'tn', 'billing', start => true);

-- a queue row after the point that a transaction locked and let go is taken in its order
SET workload.claim_full_scan_every = 1000;
\set tx hb-resume-locked
SELECT count(t.create('f' || g, '{}', :'tx')) AS created FROM generate_series(1, 4) g;
SELECT input->>'n' AS first_claim FROM workload_claim('w1', '{}', :'tx', 'billing', start => true);
BEGIN;
SELECT q.seq IS NOT NULL AS f2_locked FROM workload.queue q
WHERE q.tenant_id = :'tx' AND q.seq = (SELECT s.workload_seq FROM workload.specs s
    WHERE s.tenant_id = :'tx' AND s.input->>'n' = 'f2') FOR UPDATE OF q;
COMMIT;
SELECT input->>'n' AS takes_f2 FROM workload_claim('w1', '{}', :'tx', 'billing', start => true);
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tx', 'billing', max_items => 10, start => true);
RESET workload.claim_full_scan_every;

-- every claim was of a READY workload, and none was claimed twice at once:
-- one claimed event per attempt
SELECT s.input->>'n' AS key, w.state, w.attempt_count,
       (SELECT count(*) FROM workload.event_log e WHERE e.workload_id = w.workload_id
          AND e.event_type = 'workload.claimed') AS claimed_events
FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE w.tenant_id IN (:'tn', :'td', :'tp') ORDER BY w.tenant_id, w.seq;
