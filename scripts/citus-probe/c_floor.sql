-- c_floor.sql: a tenant's event sequence that stays strictly increasing whichever node
-- draws it.  Every node has its own plain sequence (overlapping values are fine: the key is
-- (tenant_id, sequence)); a draw that would not exceed the tenant's highest sequence so far
-- moves this node's sequence past it (under a node-wide advisory lock, so concurrent draws
-- in that rare case stay distinct).
DROP TABLE IF EXISTS m.ev_floor;
CREATE TABLE m.ev_floor (tenant_id text NOT NULL, sequence bigint NOT NULL, how text,
    at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (tenant_id, sequence));
SELECT create_distributed_table('m.ev_floor', 'tenant_id', colocate_with := 'm.workloads');
SELECT run_command_on_all_nodes($$SET citus.enable_ddl_propagation TO off; CREATE SEQUENCE IF NOT EXISTS m.node_ev_seq$$);
CREATE OR REPLACE FUNCTION m.next_event_seq(tenant text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v bigint; f bigint;
BEGIN
  v := nextval('m.node_ev_seq');
  SELECT e.sequence INTO f FROM m.ev_floor e WHERE e.tenant_id = tenant ORDER BY e.sequence DESC LIMIT 1;
  IF f IS NOT NULL AND v <= f THEN
    PERFORM pg_advisory_xact_lock(8606223218634613093);
    v := nextval('m.node_ev_seq');
    IF v <= f THEN
      PERFORM setval('m.node_ev_seq', f);
      v := nextval('m.node_ev_seq');
    END IF;
  END IF;
  RETURN v;
END $$;
CREATE OR REPLACE FUNCTION m.add_event(tenant text, how text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE v bigint;
BEGIN
  v := m.next_event_seq(tenant);
  INSERT INTO m.ev_floor (tenant_id, sequence, how) VALUES (tenant, v, how);
  RETURN probe_where() || ' seq=' || v;
END $$;
SELECT create_distributed_function('m.add_event(text, text)', '$1', colocate_with := 'm.workloads');
