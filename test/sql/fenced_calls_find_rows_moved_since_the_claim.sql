-- A session's fenced calls look first where its claim found the workload's rows
-- (store_memo.c); rows moved since (VACUUM FULL here: every tuple id changes, the
-- tables shrink, old ids point past their end or at other workloads' rows) are found
-- by their keys as before, and each call acts on its own workload, fence checked.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- 200 workloads run and finish first: their rows lie before the others'
SELECT count(t.create('old' || g)) FROM generate_series(1, 200) g;
SELECT count(*) AS finished FROM (
    SELECT workload_complete(workload_id, claim_id, 'w1', fencing_token, 'r-' || workload_id, '{}')
    FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 200, start => true)) x;

-- three hours later this session claims 100 more: it has seen where their rows are
SELECT count(t.create('new' || g)) FROM generate_series(1, 100) g;
SET workload.clock_override = '2026-01-01 03:00:00+00';
CREATE TEMP TABLE c AS
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 100, start => true);
SELECT count(*) AS claimed FROM c;
CREATE TEMP TABLE before AS
SELECT w.workload_id, w.ctid AS row_at, r.ctid AS run_at,
       pg_relation_size('workload.workload_rows') AS rows_size, pg_relation_size('workload.runs') AS runs_size
FROM workload.workload_rows w JOIN workload.runs r USING (tenant_id, seq)
WHERE w.workload_id IN (SELECT workload_id FROM c);

-- the first 200 are purged and both tables rewritten
SELECT workload_purge('1 hour', 1000) AS purged;
VACUUM FULL workload.workload_rows;
VACUUM FULL workload.runs;
SELECT count(*) FILTER (WHERE w.ctid <> b.row_at) AS rows_moved,
       count(*) FILTER (WHERE r.ctid <> b.run_at) AS runs_moved,
       bool_and(pg_relation_size('workload.workload_rows') < b.rows_size) AS rows_shrank,
       bool_and(pg_relation_size('workload.runs') < b.runs_size) AS runs_shrank
FROM before b JOIN workload.workload_rows w USING (workload_id)
JOIN workload.runs r ON r.tenant_id = w.tenant_id AND r.seq = w.seq;

-- a stale fence is still refused, a heartbeat still extends its own lease
SELECT workload_heartbeat(workload_id, claim_id, 'w1', fencing_token + 1, '1 minute')
FROM c ORDER BY workload_id LIMIT 1;
SELECT workload_heartbeat(workload_id, claim_id, 'w1', fencing_token, '1 minute') ->> 'lease_expires_at'
FROM c ORDER BY workload_id LIMIT 1;

-- every completion reaches its own workload, and its result is that workload's
SELECT outcome, count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', 'r-' || workload_id, 'output', jsonb_build_object('for', workload_id))) FROM c))
GROUP BY 1;
SELECT count(*) AS own_results FROM workload.workloads w
JOIN workload.runs r ON r.tenant_id = w.tenant_id AND r.seq = w.seq
WHERE w.workload_id IN (SELECT workload_id FROM c) AND w.state = 'SUCCEEDED'
  AND r.result_id = 'r-' || w.workload_id AND r.output ->> 'for' = w.workload_id;
