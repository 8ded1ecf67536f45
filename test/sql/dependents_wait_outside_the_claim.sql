-- A READY workload whose dependencies have not all reached their required states keeps a blocked queue row that no claim steps over; the transition that meets its last dependency (a single complete, a batch of completions, a cancel) makes it claimable in the same transaction, and the cascade takes the row of a dependent that can no longer run; a dependent that requires a state that is not final is checked by each claim instead (SPEC section 4, workload_create dependencies).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET workload.clock_override = '2026-01-01 00:00:00+00';
-- dep(key, prio, deps): a workload at priority prio depending on each id of deps (a state after ':', else SUCCEEDED)
CREATE FUNCTION t.dep(key text, prio int, VARIADIC deps text[]) RETURNS text LANGUAGE sql AS $$
    SELECT t.create(key, jsonb_build_object('priority', prio, 'dependencies',
        (SELECT jsonb_agg(jsonb_build_object('workload_id', split_part(d, ':', 1),
                'required_state', COALESCE(NULLIF(split_part(d, ':', 2), ''), 'SUCCEEDED')))
         FROM unnest(deps) d)))
$$;
-- q(): every queue row, by key: blocked or not
CREATE FUNCTION t.q() RETURNS TABLE(key text, blocked boolean) LANGUAGE sql AS $$
    SELECT s.idempotency_key, q.blocked FROM workload.queue q
    JOIN workload.specs s ON s.tenant_id = q.tenant_id AND s.workload_seq = q.seq ORDER BY 1
$$;
-- claimed(n): the keys a claim of up to n takes, best first
CREATE FUNCTION t.claimed(n int) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(s.idempotency_key ORDER BY c.fencing_token, s.idempotency_key)
    FROM workload_claim('w9', '{}', 'acme', 'billing', max_items => n) c
    JOIN workload.specs s ON s.workload_id = c.workload_id
$$;
SELECT t.create('p') AS p \gset
SELECT t.create('r') AS r \gset
SELECT claim_id AS p_claim, fencing_token AS p_tok FROM t.run(:'p') \gset
SELECT claim_id AS r_claim, fencing_token AS r_tok FROM t.run(:'r') \gset
SELECT t.dep('d1', 9, :'p') AS d1 \gset
SELECT t.dep('d2', 9, :'p', :'r') AS d2 \gset
SELECT t.dep('d4', 8, :'p' || ':RUNNING') AS d4 \gset
SELECT t.dep('d5', 9, :'d1') AS d5 \gset
SELECT t.create('f', '{"priority": 1}') AS f \gset
-- blocked: d1, d2, d5; d4 requires a state that is not final: not blocked, checked by each claim
SELECT * FROM t.q();
-- a claim passes over the blocked rows to d4 (p is RUNNING) and f, best first
SELECT t.claimed(10) AS claimed;
-- named, a blocked one is refused as before
SELECT * FROM workload_claim_id(:'d1', 'w1', '{}');
\echo :SQLSTATE

-- p succeeds: d1 is unblocked by that call; d2 still waits for r
SELECT workload_complete(:'p', :'p_claim', 'w1', :p_tok, 'rp', '{}') ->> 'result_id' AS result;
SELECT * FROM t.q();
-- r succeeds in a batch: d2 is unblocked
SELECT count(*) AS completed FROM workload_complete_many('w1', jsonb_build_array(jsonb_build_object(
    'workload_id', :'r', 'claim_id', :'r_claim', 'fencing_token', :r_tok, 'result_id', 'rr', 'output', '{}'::jsonb)));
SELECT * FROM t.q();

-- x cancelled: d3, which required CANCELLED, is unblocked
SELECT t.create('x', '{"priority": -1}') AS x \gset
SELECT t.dep('d3', 9, :'x' || ':CANCELLED') AS d3 \gset
SELECT blocked AS d3_blocked FROM t.q() WHERE key = 'd3';
SELECT workload_cancel(:'x', 'ops') AS x_state;
SELECT * FROM t.q();

-- d1 cancelled: the cascade cancels d5 (it required d1 SUCCEEDED), and d5's queue row goes with it
SELECT workload_cancel(:'d1', 'ops') AS d1_state;
SELECT workload_get(:'d5') ->> 'state' AS d5_state;
SELECT * FROM t.q();
SELECT t.claimed(10) AS claimed;

-- a dependency that reached its state before the dependent was made: not blocked
SELECT t.dep('d6', 0, :'p') AS d6 \gset
SELECT * FROM t.q();
-- every READY workload has one queue row, and no other workload has one
SELECT bool_and((w.state = 'READY') = (q.seq IS NOT NULL)) AS one_row_each
FROM workload.workloads w LEFT JOIN workload.queue q ON q.tenant_id = w.tenant_id AND q.seq = w.seq;
