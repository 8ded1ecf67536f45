-- A queue row says where its workload's row and spec were written (row_at, spec_at), and
-- the claim looks there first; rows moved since (VACUUM FULL: every tuple id changes, old
-- ids point past the tables' ends or at other workloads' rows) are found by their keys, and
-- each claim returns its own workload's input and definition.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
-- what this shows is how the direct paths store rows: not there to see when
-- every call runs through its statements
SELECT COALESCE(current_setting('workload.statement_path', true), 'off') AS statement_path \gset
\if :statement_path
\echo 'skipped: the direct paths do not run (workload.statement_path is on)'
\quit
\endif
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- 200 workloads, claimed and finished first: their rows and specs lie before the others'
SELECT count(t.create('old' || g)) FROM generate_series(1, 200) g;
SELECT count(*) AS finished FROM (
    SELECT workload_complete(workload_id, claim_id, 'w1', fencing_token, 'r-' || workload_id, '{}')
    FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 200, start => true)) x;

-- 30 more: each queue row points at its workload's row and spec as written
SELECT count(t.create('new' || g)) FROM generate_series(1, 30) g;
SELECT count(*) AS queued,
       count(*) FILTER (WHERE q.row_at = w.ctid) AS row_at_right,
       count(*) FILTER (WHERE q.spec_at = s.ctid) AS spec_at_right
FROM workload.queue q
JOIN workload.workload_rows w ON w.tenant_id = q.tenant_id AND w.seq = q.seq
JOIN workload.specs s ON s.tenant_id = q.tenant_id AND s.workload_seq = q.seq;

-- claimed where they were written: each its own input
SELECT count(*) AS claimed, count(*) FILTER (WHERE c.input ->> 'n' = 'new' || g.g) AS own_input
FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10) c
JOIN generate_series(1, 30) g(g) ON t.create('new' || g.g) = c.workload_id;

-- the first 200 purged, both tables rewritten: the queue rows' ids are now wrong
SET workload.clock_override = '2026-01-01 03:00:00+00';
SELECT workload_purge('1 hour', 1000) AS purged;
VACUUM FULL workload.workload_rows;
VACUUM FULL workload.specs;
SELECT count(*) AS queued,
       count(*) FILTER (WHERE q.row_at <> w.ctid) AS rows_moved,
       count(*) FILTER (WHERE q.spec_at <> s.ctid) AS specs_moved
FROM workload.queue q
JOIN workload.workload_rows w ON w.tenant_id = q.tenant_id AND w.seq = q.seq
JOIN workload.specs s ON s.tenant_id = q.tenant_id AND s.workload_seq = q.seq;

-- every claim still takes a READY workload once and returns its own input and definition
CREATE TEMP TABLE c AS
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 100, start => true);
SELECT count(*) AS claimed, count(DISTINCT c.workload_id) AS distinct_claimed,
       count(*) FILTER (WHERE c.input ->> 'n' = 'new' || g.g AND c.definition_id = 'invoice.render'
                          AND c.definition_revision = 'r1') AS own_input
FROM c JOIN generate_series(1, 30) g(g) ON t.create('new' || g.g) = c.workload_id;
SELECT state, count(*) FROM workload.workloads WHERE workload_id IN (SELECT workload_id FROM c)
GROUP BY 1;
SELECT count(*) AS still_queued FROM workload.queue;
