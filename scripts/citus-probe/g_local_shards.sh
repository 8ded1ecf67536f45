#!/usr/bin/env bash
# g_local_shards.sh: what a maintenance pass running on a worker sees: the distributed
# table (every shard of the cluster, through Citus) or only this node's shards (read
# directly, by shard name from the placement metadata); and FOR UPDATE SKIP LOCKED
# without the tenant (the tick's shape) on the distributed table and on a local shard.
. "$(dirname "$0")/lib.sh"
for n in w1 w2; do
  echo "== on $n"
  wl_citus_psql $n -qAt -c "SELECT 'the distributed table from here: ' || count(*) || ' rows, tenants ' || string_agg(DISTINCT tenant_id, ',') FROM m.workloads"
  wl_citus_psql $n -qAt -c "SET citus.log_remote_commands = on" -c "SET citus.log_local_commands = on" -c "SELECT count(*) FROM m.workloads" 2>&1 \
    | grep -oE 'on server postgres@localhost:[0-9]+|executing the command locally' | sort | uniq -c | sed 's/^/   tasks: /'
  wl_citus_psql $n -qAt -f "$P/g_local_shards.sql" 2>&1 | sed 's/^psql:[^ ]* //'
  wl_citus_psql $n -qAt -v ON_ERROR_STOP=0 -c "SELECT workload_id FROM m.workloads WHERE priority = 1 ORDER BY workload_id LIMIT 2 FOR NO KEY UPDATE SKIP LOCKED" 2>&1 | head -n 1 | sed 's/^/   FOR UPDATE on the distributed table: /'
  S=$(wl_citus_psql $n -qAt -c "SELECT s.shardid FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) WHERE s.logicalrelid = 'm.workloads'::regclass AND p.groupid = (SELECT groupid FROM pg_dist_local_group) ORDER BY 1 LIMIT 1")
  wl_citus_psql $n -qAt -v ON_ERROR_STOP=0 -c "SELECT count(*) FROM (SELECT workload_id FROM m.workloads_$S ORDER BY workload_id LIMIT 2 FOR NO KEY UPDATE SKIP LOCKED) x" 2>&1 | head -n 1 | sed "s/^/   FOR UPDATE on local shard m.workloads_$S: rows /"
done
