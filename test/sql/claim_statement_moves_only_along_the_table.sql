-- The claim statement is the one state change made in SQL rather than through the transition path: every move it records (READY -> CLAIMED, and CLAIMED -> RUNNING with start) is an edge of the transition table, with the event type the table's target names (SPEC section 3; section 4, workload_claim).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT t.create('a') IS NOT NULL, t.create('b') IS NOT NULL, t.create('c') IS NOT NULL;
SELECT count(*) AS claimed FROM workload_claim('w1', '{}', 'acme', 'billing', '30 seconds', 1, false);
SELECT count(*) AS claimed_and_started FROM workload_claim('w2', '{}', 'acme', 'billing', '30 seconds', 1, true);
SELECT count(*) AS claimed_by_id FROM workload_claim_id(t.create('d'), 'w3', '{}', '30 seconds');

-- the moves the claims recorded, each checked against the table
SELECT e.from_state, e.to_state, e.event_type, count(*),
       bool_and(workload_can_transition(e.from_state, e.to_state)) AS in_table
FROM workload.event_log e WHERE e.actor IN ('w1', 'w2', 'w3')
GROUP BY 1, 2, 3 ORDER BY 1, 2;
-- no event anywhere records a move the table forbids
SELECT count(*) AS illegal_moves FROM workload.event_log e
WHERE e.from_state IS NOT NULL AND NOT workload_can_transition(e.from_state, e.to_state);
-- and each event's type is the one the table's target state names
SELECT count(DISTINCT (to_state, event_type)) = count(DISTINCT to_state) AS one_type_per_target
FROM workload.event_log;
