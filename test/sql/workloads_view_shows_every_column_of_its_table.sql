-- workload.workloads is a view of workload.workload_rows (1.3): it shows every column of the table, in the table's order and with its types, reads with the caller's rights, and shows the state, token, attempt and claim that the API's document shows. A column added to the table by a later script and not to the view would be missing from everything that reads workload.workloads; this test names the gap.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
-- the same columns, names, types and order
SELECT count(*) AS table_columns,
       count(*) FILTER (WHERE v.column_name IS NOT NULL AND v.data_type = t.data_type
                        AND v.udt_name = t.udt_name) AS same_in_view
FROM information_schema.columns t
LEFT JOIN information_schema.columns v ON v.table_schema = 'workload' AND v.table_name = 'workloads'
    AND v.ordinal_position = t.ordinal_position AND v.column_name = t.column_name
WHERE t.table_schema = 'workload' AND t.table_name = 'workload_rows';
SELECT count(*) AS view_columns FROM information_schema.columns
WHERE table_schema = 'workload' AND table_name = 'workloads';
-- a view with the caller's rights, nothing else
SELECT c.relkind, c.reloptions FROM pg_class c WHERE c.oid = 'workload.workloads'::regclass;
-- what the API writes is read through it: the state, token, attempt and claim its
-- document shows, after the create and after the claim
SELECT t.create('seen') AS id \gset
CREATE FUNCTION pg_temp.agrees(id text) RETURNS boolean LANGUAGE sql AS $$
    SELECT v.state::text = d->>'state' AND v.fencing_token = (d->>'fencing_token')::bigint
       AND v.attempt_count = (d->>'attempt_count')::int
       AND v.claim_id IS NOT DISTINCT FROM d->'current_claim'->>'claim_id'
    FROM workload.workloads v, workload_get(id) d WHERE v.workload_id = id $$;
SELECT pg_temp.agrees(:'id') AS agrees_when_created;
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT pg_temp.agrees(:'id') AS agrees_when_claimed,
       (SELECT state FROM workload.workloads WHERE workload_id = :'id') AS state,
       (SELECT claim_id = :'claim_id' FROM workload.workloads WHERE workload_id = :'id') AS its_claim;
