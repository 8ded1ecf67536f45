-- g_local_shards.sql: on a worker, the shards of m.workloads placed on this node, and
-- what reading them directly (no Citus planning, no other node) sees.
DO $$
DECLARE r record; n bigint; total bigint := 0; shards int := 0; t text; tenants text[] := '{}';
BEGIN
  FOR r IN SELECT s.shardid, format('m.workloads_%s', s.shardid) AS shard
           FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
           WHERE s.logicalrelid = 'm.workloads'::regclass
             AND p.groupid = (SELECT groupid FROM pg_dist_local_group) LOOP
    EXECUTE format('SELECT count(*), min(tenant_id) FROM %s', r.shard) INTO n, t;
    shards := shards + 1; total := total + n;
    IF t IS NOT NULL THEN tenants := tenants || t; END IF;
  END LOOP;
  RAISE NOTICE 'local shards: %, rows in them: %, tenants seen: %', shards, total, tenants;
END $$;
