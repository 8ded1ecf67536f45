-- In workload_complete_many a result id another workload of the tenant and application has (stored before, or by an earlier item of the same batch) refuses that item with WORKLOAD_RESULT_DUPLICATE and the rest complete, whatever the batch's size; the refused item's workload is left as it was (SPEC section 4, workload_complete and workload_complete_many).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- d0 completes alone with the result id "taken"
SELECT count(t.create('d' || g)) FROM generate_series(0, 20) g;
SELECT claim_id AS d0_claim, fencing_token AS d0_token FROM workload_claim_id(t.create('d0'), 'w1', '{}') \gset
SELECT workload_start(t.create('d0'), :'d0_claim', 'w1', :d0_token) IS NOT NULL AS started;
SELECT workload_complete(t.create('d0'), :'d0_claim', 'w1', :d0_token, 'taken', '{"n": 0}') ->> 'result_id' AS stored;
CREATE TEMP TABLE c AS
SELECT c.*, k.key FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 20, start => true) c
JOIN LATERAL (SELECT 'd' || g AS key FROM generate_series(1, 20) g WHERE t.create('d' || g) = c.workload_id) k ON true;
SELECT count(*) AS claimed FROM c;

-- a batch of ten (d1..d10): d2 names the result id d0 has; d3 and d4 name
-- the same new one ("twin"), so whichever of them the batch decides first
-- stores it and the other is refused; the seven others complete
CREATE TEMP TABLE answer AS
SELECT * FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', CASE key WHEN 'd2' THEN 'taken' WHEN 'd3' THEN 'twin' WHEN 'd4' THEN 'twin'
                          ELSE 'r-' || key END,
    'output', jsonb_build_object('n', key)))
  FROM c WHERE key IN ('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10')));
SELECT c.key, a.outcome, a.code FROM answer a JOIN c USING (workload_id)
WHERE c.key NOT IN ('d3', 'd4') ORDER BY c.key COLLATE "C";
-- of the twins, one succeeded with its result and one was refused
SELECT string_agg(a.outcome || coalesce(' ' || a.code, ''), ', ' ORDER BY a.outcome) AS twins,
       count(*) FILTER (WHERE a.result ->> 'result_id' = 'twin') AS stored
FROM answer a JOIN c USING (workload_id) WHERE c.key IN ('d3', 'd4');

-- each completed workload is SUCCEEDED with its own result and one
-- completion event; a refused one is RUNNING, with no result and no event of it
SELECT c.key, w.state,
       (SELECT string_agg(r.result_id, ',') FROM workload.results r WHERE r.workload_id = w.workload_id) AS results,
       (SELECT count(*) FROM workload_history(w.workload_id) h WHERE h.event_type = 'workload.completed') AS completed_events
FROM c JOIN workload.workloads w USING (workload_id)
WHERE c.key IN ('d1', 'd2', 'd5', 'd10') ORDER BY c.key COLLATE "C";
SELECT count(*) FILTER (WHERE w.state = 'SUCCEEDED') AS succeeded, count(*) FILTER (WHERE w.state = 'RUNNING') AS running,
       (SELECT count(*) FROM workload.results r WHERE r.result_id = 'twin') AS twin_results
FROM c JOIN workload.workloads w USING (workload_id) WHERE c.key IN ('d3', 'd4');
-- d0's result is untouched
SELECT r.output, w.workload_id = t.create('d0') AS is_d0
FROM workload.results r JOIN workload.workloads w USING (workload_id) WHERE r.result_id = 'taken';

-- d2 completes later under a free result id, in a batch of two in which
-- the twin that was refused names a taken id again
SELECT c.key = 'd2' AS is_d2, a.outcome, a.code
FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', c.workload_id, 'claim_id', c.claim_id, 'fencing_token', c.fencing_token,
    'result_id', CASE WHEN c.key = 'd2' THEN 'r-d2' ELSE 'r-d1' END, 'output', '{}'::jsonb))
  FROM c JOIN workload.workloads w USING (workload_id)
  WHERE c.key = 'd2' OR (c.key IN ('d3', 'd4') AND w.state = 'RUNNING'))) a
JOIN c USING (workload_id) ORDER BY c.key = 'd2' DESC, a.outcome;
-- a batch of one alike, then with a free id
SELECT c.key AS twin, c.workload_id AS twin_id, c.claim_id AS twin_claim, c.fencing_token AS twin_token
FROM c JOIN workload.workloads w USING (workload_id) WHERE c.key IN ('d3', 'd4') AND w.state = 'RUNNING' \gset
SELECT a.outcome, a.code FROM workload_complete_many('w1', jsonb_build_array(jsonb_build_object(
    'workload_id', :'twin_id', 'claim_id', :'twin_claim', 'fencing_token', :twin_token,
    'result_id', 'taken', 'output', '{}'::jsonb))) a;
SELECT a.outcome, a.result ->> 'result_id' AS result_id FROM workload_complete_many('w1', jsonb_build_array(jsonb_build_object(
    'workload_id', :'twin_id', 'claim_id', :'twin_claim', 'fencing_token', :twin_token,
    'result_id', 'r-twin', 'output', '{}'::jsonb))) a;
SELECT count(*) FILTER (WHERE w.state = 'SUCCEEDED') AS succeeded, count(*) FILTER (WHERE w.state = 'RUNNING') AS running
FROM c JOIN workload.workloads w USING (workload_id) WHERE c.key IN ('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10');

-- a batch of ten (d11..d20) in which every result id is taken refuses
-- every item and writes nothing
SELECT t.fingerprint() AS before2 \gset
SELECT a.outcome, a.code, count(*)
FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', c.workload_id, 'claim_id', c.claim_id, 'fencing_token', c.fencing_token,
    'result_id', 'taken', 'output', '{}'::jsonb))
  FROM c WHERE substr(c.key, 2)::int BETWEEN 11 AND 20)) a
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT t.fingerprint() = :'before2' AS unchanged;
