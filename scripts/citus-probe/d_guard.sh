#!/usr/bin/env bash
# d_guard.sh: where the raw-write guard fires on Citus and what it decides.
#  strict: today's rule (refuse unless this backend's API flag is set), as a statement
#          trigger created before distribution;
#  citus:  the proposed rule: the trigger also lets through the statement Citus itself
#          sent from another node (a citus_internal / citus_rebalancer backend, top-level
#          statement only), and an executor permission hook (wlprobe, preloaded on every
#          node) refuses, where a statement is planned, any INSERT/UPDATE/DELETE/COPY on
#          a table of schema g unless the API flag is set or Citus sent it.
# Every firing prints "guard fired: port=... rel=... app=... flag=... nest=...".
. "$(dirname "$0")/lib.sh"
setup() { sed "s/MODE/$1/g" "$P/d_guard_setup.sql" | c -q -v ON_ERROR_STOP=0 2>&1 | grep -E 'ERROR|denied' | sed 's/^psql:[^ ]* //'; }
check() { for n in $WL_CITUS_NODES; do wl_citus_psql $n -qc "ALTER SYSTEM SET wlprobe.executor_check = $1" -c "SELECT pg_reload_conf()" >/dev/null; done; sleep 0.5; }
echo "==== strict (1.1's rule, no executor check); tables distributed empty, and one non-empty table"
check off
setup strict
c -qAt -v ON_ERROR_STOP=0 <<'SQL' 2>&1 | grep -E 'ERROR|create' | sed 's/^psql:[^ ]* //'
CREATE TABLE g.nonempty (k text PRIMARY KEY);
CREATE TRIGGER nonempty_raw_write_trg BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON g.nonempty FOR EACH STATEMENT EXECUTE FUNCTION probe_guard('strict');
SELECT probe_run('x', $q$INSERT INTO g.nonempty VALUES ('k1')$q$, 2);
SELECT create_reference_table('g.nonempty');
SQL
bash "$P/d_guard_run.sh" 2>&1 | sed 's/gpid=[0-9]*/gpid=N/g'
echo
echo "==== citus (proposed rule)"
check on
setup citus
bash "$P/d_guard_run.sh" 2>&1 | sed 's/gpid=[0-9]*/gpid=N/g'
echo "-- a user's own distributed function doing a raw UPDATE, delegated"
c -qAt -v ON_ERROR_STOP=0 <<'SQL' 2>&1 | grep -E 'ERROR|^[0-9]' | sed 's/^psql:[^ ]* //'
CREATE FUNCTION public.user_raw(tenant text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN UPDATE g.workloads SET n = n + 100 WHERE tenant_id = tenant; RETURN 1; END $$;
SELECT create_distributed_function('public.user_raw(text)', '$1', colocate_with := 'm.workloads');
SELECT user_raw('acme');
SQL
bash "$P/d_maint.sh"
echo "-- add a fourth node (reference tables are copied to it), move acme there and back"
wl_citus_add_worker w3
echo "$WL_CITUS_NODES" >"$OUT/nodes"
echo "WL_CITUS_W3_PORT=$WL_CITUS_W3_PORT WL_CITUS_NODES='$WL_CITUS_NODES'" >>"$CITUS_PROBE_ENV"
c -qAt -c "SELECT 'reference tables copied: ' || replicate_reference_tables()" 2>&1 | tail -n 1
bash "$P/d_move.sh"
echo "-- API writes (2 clients) during a force_logical move of acme to w3"
S=$(c -qAt -c "SELECT get_shard_id_for_distribution_column('g.workloads', 'acme')")
AP=$(port_of acme)
before=$(c -qAt -c "SELECT count(*) FROM g.workloads WHERE tenant_id = 'acme'")
echo "SELECT probe_deleg('acme', \$q\$INSERT INTO g.workloads VALUES (\$1, 'during_move_' || random())\$q\$, 2);" >bench/during_move.sql
pgbench -n -c 2 -T 6 -f bench/during_move.sql >bench/during_move.out 2>&1 &
sleep 1
c -qAt -c "SELECT citus_move_shard_placement($S, 'localhost', $AP, 'localhost', $WL_CITUS_W3_PORT, shard_transfer_mode := 'force_logical')" >/dev/null
wait
grep -E 'processed|failed' bench/during_move.out
echo "acme rows: before $before, after $(c -qAt -c "SELECT count(*) FROM g.workloads WHERE tenant_id = 'acme'"), now on port $(c -qAt -c "SELECT nodeport FROM pg_dist_placement JOIN pg_dist_node USING (groupid) WHERE shardid = $S")"
echo "guard refusals on w3 during the move: $(grep -c 'denied' "$WL_CITUS_TMP/w3.log")"
c -qAt -c "SELECT citus_move_shard_placement($S, 'localhost', $WL_CITUS_W3_PORT, 'localhost', $AP, shard_transfer_mode := 'block_writes')" >/dev/null
echo "-- a trigger created after distribution: with TRUNCATE it reaches the shell tables only, without it the shards too"
c -q <<'SQL' >/dev/null 2>&1
CREATE TABLE g.late2 (tenant_id text NOT NULL, x int NOT NULL, PRIMARY KEY (tenant_id, x));
CREATE TABLE g.late3 (tenant_id text NOT NULL, x int NOT NULL, PRIMARY KEY (tenant_id, x));
SELECT create_distributed_table('g.late2', 'tenant_id', colocate_with := 'm.workloads');
SELECT create_distributed_table('g.late3', 'tenant_id', colocate_with := 'm.workloads');
CREATE TRIGGER late2_raw_write_trg BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON g.late2 FOR EACH STATEMENT EXECUTE FUNCTION probe_guard('citus');
CREATE TRIGGER late3_raw_write_trg BEFORE INSERT OR UPDATE OR DELETE ON g.late3 FOR EACH STATEMENT EXECUTE FUNCTION probe_guard('citus');
ALTER TABLE g.late2 ENABLE ALWAYS TRIGGER late2_raw_write_trg;
ALTER TABLE g.late3 ENABLE ALWAYS TRIGGER late3_raw_write_trg;
SQL
w1 -qAt -c "SELECT regexp_replace(tgrelid::regclass::text, '_[0-9]+$', '_<shard>') AS rel, tgenabled, count(*) FROM pg_trigger WHERE tgname LIKE 'late%' GROUP BY 1, 2 ORDER BY 1"
