-- d_guard_setup.sql: tables with the raw-write guard (a BEFORE statement trigger, ENABLE
-- ALWAYS, like 1.1's) created before distribution (as CREATE EXTENSION would), and one
-- table whose trigger is created after distribution.
DROP SCHEMA IF EXISTS g CASCADE;
CREATE SCHEMA g;
CREATE TABLE g.workloads (tenant_id text NOT NULL, workload_id text NOT NULL, n int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, workload_id));
CREATE TABLE g.events (tenant_id text NOT NULL, sequence bigint NOT NULL, workload_id text NOT NULL, PRIMARY KEY (tenant_id, sequence));
CREATE TABLE g.keys (key_id text PRIMARY KEY, secret bytea NOT NULL);
CREATE TABLE g.late (tenant_id text NOT NULL, x int NOT NULL, PRIMARY KEY (tenant_id, x));
-- (loaded after distribution, through the probe API)
-- INSERT INTO g.workloads SELECT t, t || '_' || i FROM unnest(ARRAY['acme', 'hooli']) t, generate_series(1, 10) i;
-- INSERT INTO g.keys VALUES ('k1', '\x00');
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['workloads', 'events', 'keys'] LOOP
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON g.%I FOR EACH STATEMENT EXECUTE FUNCTION probe_guard(''MODE'')', t || '_raw_write_trg', t);
    EXECUTE format('ALTER TABLE g.%I ENABLE ALWAYS TRIGGER %I', t, t || '_raw_write_trg');
  END LOOP;
END $$;
SELECT create_distributed_table('g.workloads', 'tenant_id', colocate_with := 'm.workloads');
SELECT create_distributed_table('g.events', 'tenant_id', colocate_with := 'm.workloads');
SELECT create_reference_table('g.keys');
SELECT create_distributed_table('g.late', 'tenant_id', colocate_with := 'm.workloads');
CREATE TRIGGER late_raw_write_trg BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON g.late FOR EACH STATEMENT EXECUTE FUNCTION probe_guard('MODE');
ALTER TABLE g.late ENABLE ALWAYS TRIGGER late_raw_write_trg;
