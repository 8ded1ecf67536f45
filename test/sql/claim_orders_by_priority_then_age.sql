-- Claims come highest priority first, then oldest (created_at), then in creation order; max_items takes the best N (SPEC 4, "Claiming and running": workload_claim).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-order

SELECT t.create('old-p0', '{"priority": 0}', :'tn') IS NOT NULL AS created;
SELECT t.create('old-neg', '{"priority": -5}', :'tn') IS NOT NULL AS created;
SET workload.clock_override = '2026-01-01 00:00:10+00';
SELECT t.create('mid-p5', '{"priority": 5}', :'tn') IS NOT NULL AS created;
-- created after mid-p5, but with an earlier clock: it is the older of the two
SET workload.clock_override = '2026-01-01 00:00:05+00';
SELECT t.create('older-p5', '{"priority": 5}', :'tn') IS NOT NULL AS created;
SET workload.clock_override = '2026-01-01 00:00:20+00';
SELECT t.create('new-p0', '{}', :'tn') IS NOT NULL AS created;
-- three at the same time and priority, created in the order b, c, a
-- (neither the order of their keys nor of their ids)
SET workload.clock_override = '2026-01-01 00:00:30+00';
SELECT t.create('tie-b', '{}', :'tn') IS NOT NULL AS created;
SELECT t.create('tie-c', '{}', :'tn') IS NOT NULL AS created;
SELECT t.create('tie-a', '{}', :'tn') IS NOT NULL AS created;
SELECT array_agg(k ORDER BY t.create(k, '{}', :'tn')) AS keys_in_id_order
FROM unnest(ARRAY['tie-a', 'tie-b', 'tie-c']) k;
SET workload.clock_override = '2026-01-01 00:00:40+00';
SELECT t.create('new-p9', '{"priority": 9}', :'tn') IS NOT NULL AS created;

-- one at a time: new-p9, older-p5, mid-p5, old-p0, new-p0, tie-b, tie-c, tie-a, old-neg, then nothing
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing');

-- the claimed events, in the order they were written, name the same order
SELECT w.input->>'n' AS key
FROM workload.event_log e JOIN workload.specs w USING (workload_id)
WHERE e.tenant_id = :'tn' AND e.event_type = 'workload.claimed' ORDER BY e.sequence;

-- max_items: the best N, whatever order the rows come back in
-- (keys are named b1..b5 in the order they should be claimed; created scrambled)
SET workload.clock_override = '2026-01-01 00:02:00+00';
SELECT t.create('b4-p1-newer', '{"priority": 1}', :'tn') IS NOT NULL AS created;
SELECT t.create('b5-p0', '{}', :'tn') IS NOT NULL AS created;
SELECT t.create('b2-p2', '{"priority": 2}', :'tn') IS NOT NULL AS created;
SET workload.clock_override = '2026-01-01 00:01:59+00';
SELECT t.create('b3-p1-older', '{"priority": 1}', :'tn') IS NOT NULL AS created;
SELECT t.create('b1-p3', '{"priority": 3}', :'tn') IS NOT NULL AS created;
SET workload.clock_override = '2026-01-01 00:03:00+00';
SELECT input->>'n' AS key, attempt FROM workload_claim('w2', '{}', :'tn', 'billing', max_items => 3) ORDER BY 1;
SELECT input->>'n' AS key, attempt FROM workload_claim('w2', '{}', :'tn', 'billing', max_items => 10) ORDER BY 1;
SELECT count(*) AS more FROM workload_claim('w2', '{}', :'tn', 'billing', max_items => 10);

-- every one of them was claimed exactly once
SELECT w.state, count(*) AS workloads, sum(w.attempt_count) AS attempts, max(w.fencing_token) AS max_token
FROM workload.workloads w WHERE w.tenant_id = :'tn' GROUP BY w.state ORDER BY w.state;
