-- The claim's index leads with workload.queue_key(tenant_id, application_id): 64 bits of a SHA-256 of both, each after its length. It is the same for the same pair every time, differs for other pairs (also those whose texts join to the same string), and an operator holding workload_admin finds one queue's READY rows by hand with it, as docs/operations.md shows; other roles may not call it. A claim still takes only its own queue's rows.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS qk_admin; DROP ROLE IF EXISTS qk_worker;
RESET client_min_messages;
CREATE ROLE qk_admin; GRANT workload_admin TO qk_admin;
CREATE ROLE qk_worker; GRANT workload_worker TO qk_worker;

SELECT count(t.create('qk-ab-' || g)) AS acme_billing FROM generate_series(1, 3) g;
SELECT count(t.create('qk-ao-' || g, '{}', 'acme', 'other')) AS acme_other FROM generate_series(1, 2) g;
SELECT count(t.create('qk-gb-' || g, '{}', 'globex', 'billing')) AS globex_billing FROM generate_series(1, 1) g;

-- one key a pair, the same each time; pairs that join to the same text differ
SELECT workload.queue_key('acme', 'billing') = workload.queue_key('acme', 'billing') AS same_each_time,
       count(DISTINCT workload.queue_key(t, a)) AS keys_of_four_pairs
FROM (VALUES ('acme', 'billing'), ('acme', 'other'), ('globex', 'billing'), ('acmeb', 'illing')) v(t, a);
SELECT workload.queue_key(NULL, 'billing') IS NULL AS null_in_null_out,
       pg_typeof(workload.queue_key('', '')) AS type;

-- an operator finds one queue by hand
SET ROLE qk_admin;
SELECT count(*) AS acme_billing_ready FROM workload.queue q
WHERE workload.queue_key(q.tenant_id, q.application_id) = workload.queue_key('acme', 'billing')
  AND q.tenant_id = 'acme' AND q.application_id = 'billing';
RESET ROLE;

-- a worker may not call it (nor read the table)
SET ROLE qk_worker;
SELECT workload.queue_key('acme', 'billing');
\echo :SQLSTATE
RESET ROLE;

-- a claim takes its own queue's rows only
SELECT count(*) AS claimed, count(*) FILTER (WHERE w.tenant_id = 'acme' AND w.application_id = 'billing') AS of_acme_billing
FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10) c
JOIN workload.workloads w ON w.workload_id = c.workload_id;
SELECT tenant_id, application_id, count(*) AS still_queued FROM workload.queue
GROUP BY 1, 2 ORDER BY 1, 2;

DROP ROLE qk_admin; DROP ROLE qk_worker;
