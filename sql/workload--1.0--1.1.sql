\echo Use "ALTER EXTENSION workload UPDATE TO '1.1'" to load this file. \quit

-- workload 1.0 -> 1.1: workload_heartbeat_many, the batch form of
-- workload_heartbeat, for workers that hold several claims at once (claimed
-- with max_items > 1).  Nothing else changes: no table, no existing function.
-- A fresh CREATE EXTENSION installs 1.0 and runs this script.

CREATE FUNCTION @extschema@.workload_heartbeat_many(worker_id text, items jsonb, extend interval)
    RETURNS TABLE(workload_id text, outcome text, code text, answer jsonb)
    LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_heartbeat_many';
COMMENT ON FUNCTION @extschema@.workload_heartbeat_many(text, jsonb, interval) IS 'extend the leases of a batch in one transaction; each item is extended or refused on its own';

REVOKE ALL ON FUNCTION @extschema@.workload_heartbeat_many(text, jsonb, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.workload_heartbeat_many(text, jsonb, interval) TO workload_worker;
