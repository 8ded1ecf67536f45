-- A session's claim starts, in each priority it claimed from, after the last workload it claimed there (so a claim under a long-held snapshot does not walk every entry claimed since, issue 12); priorities are scanned best first, those without a point from their start; work that became claimable behind that point is taken by the session's next scan from the start of the queue: every workload.claim_full_scan_every-th claim, when the scan from the point finds fewer than max_items (in the same call), after an abort, and for another capability set (docs/reference.md, workload_claim).
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

-- a1..a6 at priority 0, oldest first
SELECT count(t.create('a' || g, :'retry', :'tn')) AS created FROM generate_series(1, 6) g;
SET workload.clock_override = '2026-01-01 00:01:00+00';
SET workload.claim_full_scan_every = 4;

-- claim 1, the session's first here (from the start): a1; it fails and is
-- retried at once, keeping its created_at: it is now behind the point
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'tn', 'billing', start => true) \gset
SELECT :'key' AS claim_1, workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'crashed') AS a1_after;
SET workload.clock_override = '2026-01-01 00:01:01+00';
-- claims 2, 3 and 4, from the point: a2, a3 and a4, not the older a1
SELECT input->>'n' AS claim_2 FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS claim_3 FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS claim_4 FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
-- one claim in 4 scans from the start: claim 5 takes the retried a1, the oldest
SELECT input->>'n' AS claim_5, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);

-- a2 fails and is retried (behind the point, a4); a batch larger than what
-- is left after the point gets the rest from the start in the same call:
-- a5 and a6 after the point, a2 from the start, best first
SELECT workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE s.input->>'n' = 'a2' \gset
SELECT workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'crashed') AS a2_after;
SET workload.clock_override = '2026-01-01 00:01:02+00';
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => 10, start => true);

-- a newer workload of a higher priority is taken at once, before older
-- ones of the point's priority (a priority without a point is scanned from
-- its start)
SELECT count(t.create('a' || g, '{}', :'tn')) AS created FROM generate_series(7, 12) g;
SET workload.clock_override = '2026-01-01 00:01:03+00';
SELECT t.create('h1', :'retry'::jsonb || '{"priority": 5}', :'tn') IS NOT NULL AS created;
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'tn', 'billing', start => true) \gset
SELECT :'key' AS claimed;
-- h1 fails and is retried: it is behind the point of priority 5 now, so
-- claims from the points go on at priority 0 until the next full scan, at
-- most claim_full_scan_every (4) claims later, takes it
SELECT workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'crashed') AS h1_after;
SET workload.clock_override = '2026-01-01 00:01:04+00';
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT count(*) AS left_after_the_points FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => 10, start => true);
SELECT count(*) AS nothing_left FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => 10, start => true);

-- a claim rolled back puts its workload back in front of the point: the
-- session forgets its point at the abort, so its next claim takes it again
SELECT count(t.create('b' || g, '{}', :'tn')) AS created FROM generate_series(1, 2) g;
BEGIN;
SELECT input->>'n' AS claimed_then_rolled_back FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
ROLLBACK;
SELECT input->>'n' AS claimed_again FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS claimed_next FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);

-- the point is kept per capability set: c1 needs "gpu", which a claim with no
-- capabilities steps over; the first claim with "gpu" scans from the start
-- and takes c1, not c3 after the other set's point
SELECT t.create('c1', '{"capability_snapshot": ["gpu"]}', :'tn') IS NOT NULL AS created;
SELECT count(t.create('c' || g, '{}', :'tn')) AS created FROM generate_series(2, 3) g;
SELECT input->>'n' AS without_gpu FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
SELECT input->>'n' AS with_gpu FROM workload_claim('w1', '{gpu}', :'tn', 'billing', start => true);
SELECT input->>'n' AS with_gpu FROM workload_claim('w1', '{gpu}', :'tn', 'billing', start => true);

-- a queue row after the point that a transaction locked and let go (here a
-- lock taken and committed; a rolled-back claim of another session leaves the
-- same mark) is not in flight: the next claim from the points takes it, in
-- its order (rows of claims still in flight are passed over:
-- claim_passes_over_work_held_or_gone).  Where the claim statement runs
-- instead (store_claim_direct.c says when) such a row waits for the next
-- scan from the start, behind f3.
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

-- with claim_full_scan_every = 1 every claim scans from the start: a retried
-- workload is taken before newer ones at once
SET workload.claim_full_scan_every = 1;
SELECT count(t.create('d' || g, :'retry', :'tn')) AS created FROM generate_series(1, 3) g;
SELECT input->>'n' AS key, workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', :'tn', 'billing', start => true) \gset
SELECT :'key' AS claimed, workload_fail(:'id', :'claim', 'w1', :token, 'worker_failure', 'crashed') AS d1_after;
SET workload.clock_override = '2026-01-01 00:01:05+00';
SELECT input->>'n' AS key, attempt FROM workload_claim('w1', '{}', :'tn', 'billing', start => true);
RESET workload.claim_full_scan_every;

-- every claim was of a READY workload, and none was claimed twice at once:
-- one claimed event per attempt
SELECT s.input->>'n' AS key, w.state, w.attempt_count,
       (SELECT count(*) FROM workload.event_log e WHERE e.workload_id = w.workload_id
          AND e.event_type = 'workload.claimed') AS claimed_events
FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE w.tenant_id = :'tn' ORDER BY w.seq;
