-- workload_claim with max_items and start claims up to N workloads and moves each to RUNNING in the same call, with both events and a started attempt; every claim bumps the fencing token and attempt count (SPEC 4, "Claiming and running": workload_claim).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-batch

SELECT count(t.create('batch-' || lpad(i::text, 2, '0'), '{}', :'tn')) AS created FROM generate_series(1, 12) i;

-- max_items outside 1..1000, or NULL, is WORKLOAD_INVALID and claims nothing
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => 0);
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => 1001);
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => NULL);
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', max_items => -1);
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', start => NULL);
\echo :SQLSTATE
SELECT * FROM workload_claim(NULL, '{}', :'tn', 'billing');
\echo :SQLSTATE
SELECT * FROM workload_claim('', '{}', :'tn', 'billing');
\echo :SQLSTATE
-- so is a lease that is not above zero and at most a day
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', lease => NULL);
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', lease => '0 seconds');
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', lease => '-5 seconds');
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', lease => '86401 seconds');
\echo :SQLSTATE
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', lease => '1 month');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- ten at once, started: ten rows, each RUNNING
SET workload.clock_override = '2026-01-01 00:00:05+00';
CREATE TEMP TABLE batch AS
SELECT * FROM workload_claim('w1', '{}', :'tn', 'billing', lease => '1 minute', max_items => 10, start => true);
SELECT count(*) AS rows, count(DISTINCT workload_id) AS workloads, count(DISTINCT claim_id) AS claims,
       min(fencing_token) AS min_token, max(fencing_token) AS max_token,
       min(attempt) AS min_attempt, max(attempt) AS max_attempt,
       min(lease_expires_at) = max(lease_expires_at) AND min(lease_expires_at) = '2026-01-01 00:01:05+00' AS lease_now_plus_1_minute
FROM batch;
SELECT w.state, count(*) FROM workload.workloads w WHERE w.tenant_id = :'tn' GROUP BY w.state ORDER BY w.state;
-- the claim in the table is the one returned, and each has claimed then started
SELECT bool_and(w.claim_id = b.claim_id AND w.worker_id = 'w1' AND w.state = 'RUNNING') AS held_and_running
FROM batch b JOIN workload.workloads w USING (workload_id);
SELECT h.event_type, h.from_state, h.to_state, h.actor, h.evidence, count(*)
FROM batch b, workload_history(b.workload_id) h
WHERE h.event_type IN ('workload.claimed', 'workload.started')
GROUP BY 1, 2, 3, 4, 5 ORDER BY 1;
SELECT a->>'attempt' AS attempt, a->>'worker_id' AS worker, a->>'claimed_at' AS claimed_at,
       a->>'started_at' AS started_at, a->>'finished_at' AS finished_at, count(*)
FROM batch b, jsonb_array_elements(workload_get(b.workload_id)->'attempts') a
GROUP BY 1, 2, 3, 4, 5 ORDER BY 1;

-- the rest: two left although 1000 are asked for; without start they stay CLAIMED, attempts not started
SET workload.clock_override = '2026-01-01 00:00:06+00';
SELECT input->>'n' AS key, attempt, fencing_token FROM workload_claim('w2', '{}', :'tn', 'billing', max_items => 1000) ORDER BY 1;
SELECT s.input->>'n' AS key, w.state, a->>'started_at' AS started_at
FROM workload.workloads w JOIN workload.specs s USING (workload_id),
     jsonb_array_elements(workload_get(w.workload_id)->'attempts') a
WHERE w.tenant_id = :'tn' AND w.worker_id = 'w2' ORDER BY key;

-- a second claim of the same workload: fencing token 2, attempt 2, a new claim id
SELECT workload_id AS wid, claim_id AS first_claim, fencing_token AS first_token FROM batch ORDER BY workload_id LIMIT 1 \gset
SELECT workload_fail(:'wid', :'first_claim', 'w1', :first_token, 'worker_failure', 'crashed');
SET workload.clock_override = '2026-01-01 00:00:08+00';
SELECT workload_id = :'wid' AS same_workload, fencing_token, attempt, claim_id <> :'first_claim' AS new_claim,
       claim_id = 'claim_' || left(encode(digest(:'wid' || ':2:w3', 'sha256'), 'hex'), 20) AS claim_id_per_spec
FROM workload_claim('w3', '{}', :'tn', 'billing', start => true);
SELECT d->>'state' AS state, d->>'fencing_token' AS fencing_token, d->>'attempt_count' AS attempt_count,
       d->>'retry_count' AS retry_count
FROM workload_get(:'wid') d;
SELECT a->>'attempt' AS attempt, a->>'worker_id' AS worker, a->>'fencing_token' AS token,
       a->>'started_at' AS started_at, a->>'outcome' AS outcome
FROM jsonb_array_elements(workload_get(:'wid')->'attempts') a ORDER BY (a->>'attempt')::int;
