#!/usr/bin/env bash
# a_tasks.sh: for each statement shape of store_sql.c (as a single tenant's statement),
# what Citus runs: tasks, two-phase commits, nodes touched; generic vs custom plans,
# from the coordinator and inside a delegated function.  SET=prefix OPTS=1|2 for one set.
. "$(dirname "$0")/lib.sh"
PICK="SELECT c.workload_id FROM m.workloads c WHERE c.tenant_id = \$1 AND c.claimable ORDER BY c.priority DESC, c.created_at, c.seq LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED"
declare -A V
V[v1_pick_upd_array]="WITH picked AS ($PICK), upd AS (UPDATE m.workloads w SET state = 'CLAIMED', fencing_token = w.fencing_token + 1 WHERE w.tenant_id = \$1 AND w.workload_id = ANY (ARRAY(SELECT p.workload_id FROM picked p)) RETURNING w.workload_id, w.fencing_token) SELECT * FROM upd"
V[v2_pick_upd_in]="WITH picked AS ($PICK), upd AS (UPDATE m.workloads w SET state = 'CLAIMED', fencing_token = w.fencing_token + 1 FROM picked p WHERE w.tenant_id = \$1 AND w.workload_id = p.workload_id RETURNING w.workload_id, w.fencing_token) SELECT * FROM upd"
V[v3_upd_where_in_subq]="UPDATE m.workloads w SET state = 'CLAIMED', fencing_token = w.fencing_token + 1 WHERE w.tenant_id = \$1 AND w.workload_id IN ($PICK) RETURNING w.workload_id, w.fencing_token"
V[v4_v3_plus_insert_cte]="WITH upd AS (UPDATE m.workloads w SET state = 'CLAIMED', fencing_token = w.fencing_token + 1 WHERE w.tenant_id = \$1 AND w.workload_id IN ($PICK) RETURNING w.tenant_id, w.workload_id, w.fencing_token), att AS (INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) SELECT u.tenant_id, u.workload_id, u.fencing_token::int + 20000, 'c' FROM upd u) SELECT workload_id FROM upd"
V[v5_v3_specs_join]="UPDATE m.workloads w SET state = 'CLAIMED', fencing_token = w.fencing_token + 1 FROM m.specs s WHERE w.tenant_id = \$1 AND s.tenant_id = \$1 AND s.workload_id = w.workload_id AND w.workload_id IN ($PICK) RETURNING w.workload_id, s.input"
V[v6_insert_cte_values]="WITH upd AS (UPDATE m.workloads w SET fencing_token = w.fencing_token + 1 WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_1000' RETURNING w.fencing_token), ins AS (INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, 'acme_1000', 30000 + (random() * 1e8)::int, 'c') RETURNING attempt_number) SELECT * FROM upd, ins"
V[w1_insert_unnest]="INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) SELECT \$1, x, 40000 + (random() * 1e8)::int, 'c' FROM unnest(ARRAY['acme_1','acme_2']) x"
V[w2_insert_multi_values]="INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, 'acme_1', 50000 + (random() * 1e8)::int, 'c'), (\$1, 'acme_2', 50000 + (random() * 1e8)::int, 'c')"
V[w3_insert_select_pushdown]="INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) SELECT w.tenant_id, w.workload_id, 60000 + (random() * 1e8)::int, 'c' FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_3'"
V[w4_update_from_unnest_cte]="WITH x AS (SELECT * FROM unnest(ARRAY['acme_1','acme_2']) AS x(workload_id)) UPDATE m.workloads w SET attempt_count = w.attempt_count + 1 FROM x WHERE w.tenant_id = \$1 AND w.workload_id = x.workload_id RETURNING w.workload_id"
V[w5_update_from_unnest_inline]="UPDATE m.workloads w SET attempt_count = w.attempt_count + 1 FROM unnest(ARRAY['acme_1','acme_2'], ARRAY[1,2]) AS x(workload_id, n) WHERE w.tenant_id = \$1 AND w.workload_id = x.workload_id RETURNING w.workload_id"
V[w6_doc_full_scalar_subq]="SELECT jsonb_build_object('id', w.workload_id, 'attempts', (SELECT jsonb_agg(a.attempt_number) FROM m.attempts a WHERE a.tenant_id = \$1 AND a.workload_id = w.workload_id), 'input', (SELECT s.input FROM m.specs s WHERE s.tenant_id = \$1 AND s.workload_id = w.workload_id)) FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_1'"
V[w7_join_no_tenant_on_inner]="SELECT s.input FROM m.workloads w JOIN m.specs s ON s.workload_id = w.workload_id WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_1'"
V[w8_ref_table_join]="SELECT count(*) FROM m.workloads w JOIN m.tenant_members t ON t.tenant_id = w.tenant_id WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_1'"
V[w9_delete_cte_chain]="WITH doomed AS (SELECT w.workload_id FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'nonexistent' FOR UPDATE SKIP LOCKED), d1 AS (DELETE FROM m.attempts a WHERE a.tenant_id = \$1 AND a.workload_id IN (SELECT workload_id FROM doomed)) DELETE FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id IN (SELECT workload_id FROM doomed)"
V[g1_single_select]="SELECT w.fencing_token FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_1'"
V[g2_single_update]="UPDATE m.workloads SET attempt_count = attempt_count + 1 WHERE tenant_id = \$1 AND workload_id = 'acme_1' RETURNING attempt_count"
V[g3_lock_for_nku]="SELECT w.state FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_1' FOR NO KEY UPDATE"
V[g4_skip_locked_limit]="SELECT c.workload_id FROM m.workloads c WHERE c.tenant_id = \$1 AND c.claimable ORDER BY c.priority DESC, c.created_at, c.seq LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED"
V[g5_insert_values_on_conflict]="INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, 'acme_1', 1, 'c') ON CONFLICT DO NOTHING"
V[g6_update_from]="UPDATE m.workloads w SET attempt_count = w.attempt_count + 1 FROM m.specs s WHERE w.tenant_id = \$1 AND s.tenant_id = \$1 AND s.workload_id = w.workload_id AND w.workload_id = 'acme_1' RETURNING s.input"
V[g7_update_where_in_subq]="UPDATE m.workloads w SET attempt_count = w.attempt_count + 1 WHERE w.tenant_id = \$1 AND w.workload_id IN (SELECT c.workload_id FROM m.workloads c WHERE c.tenant_id = \$1 AND c.claimable ORDER BY c.priority DESC LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED) RETURNING w.workload_id"
V[g8_delete_single]="DELETE FROM m.attempts WHERE tenant_id = \$1 AND workload_id = 'nonexistent'"
V[g9_update_ref_table]="UPDATE m.signing_keys SET created_at = created_at WHERE key_id = \$1"
V[h1_lock_many_collate]="SELECT w.workload_id FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = ANY(ARRAY['acme_1','acme_2']) ORDER BY w.workload_id COLLATE \"C\" FOR NO KEY UPDATE"
V[h2_for_key_share]="SELECT w.state::text FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_3' FOR KEY SHARE"
V[h3_insert_unnest_onconflict_returning]="INSERT INTO m.results AS r (tenant_id, result_id, workload_id) SELECT \$1, x, x FROM unnest(ARRAY['r1','r2']) x ON CONFLICT DO NOTHING RETURNING r.result_id"
V[h4_update_immutable_fn]="UPDATE m.workloads SET claim_id = md5(workload_id || fencing_token::text), worker_id = 'w' WHERE tenant_id = \$1 AND workload_id = 'acme_4' RETURNING claim_id"
V[h5_update_volatile_fn]="UPDATE m.workloads SET claim_id = md5(random()::text), worker_id = 'w' WHERE tenant_id = \$1 AND workload_id = 'acme_4' RETURNING claim_id"
V[h6_stats_materialized_cte]="WITH w AS MATERIALIZED (SELECT x.state FROM m.workloads x WHERE x.tenant_id = \$1) SELECT jsonb_build_object('total', (SELECT count(*) FROM w), 'ready', (SELECT count(*) FROM w WHERE w.state = 'READY'))"
V[h7_advisory_lock]="SELECT pg_try_advisory_xact_lock(8606223218634613092)"
V[k1_update_any_array]="UPDATE m.workloads w SET fencing_token = w.fencing_token + 1 WHERE w.tenant_id = \$1 AND w.workload_id = ANY(ARRAY['acme_1','acme_2']::text[]) RETURNING w.workload_id, w.fencing_token"
V[k2_select_any_array]="SELECT s.workload_id, s.input FROM m.specs s WHERE s.tenant_id = \$1 AND s.workload_id = ANY(ARRAY['acme_1','acme_2']::text[])"
V[k3_insert_multirow_values]="INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, 'acme_1', (random()*2e9)::int, 'c'), (\$1, 'acme_2', (random()*2e9)::int, 'c')"

# runset PREFIX OPTS: each shape whose name starts with PREFIX, planned with OPTS
# (1 generic, 2 custom), called on the coordinator (probe_run) and delegated
# (probe_deleg): commands the coordinator and the workers issue or run locally,
# how many of them are two-phase commits, and which nodes they touch.
runset() {
  local k fn out res nodes ncmd twopc
  echo "== shapes ${1}*, opts=$2 ($( [ "$2" = 1 ] && echo generic || echo custom ) plans)"
  for k in $(echo "${!V[@]}" | tr ' ' '\n' | grep "^$1" | sort); do
    for fn in probe_run probe_deleg; do
      out=$(c -qAt -v ON_ERROR_STOP=0 -c "set citus.log_remote_commands=on" -c "set citus.log_local_commands=on" -c "select $fn('acme', \$q\$${V[$k]}\$q\$, $2)" 2>&1)
      res=$(echo "$out" | grep -E '^n=|ERROR' | head -1 | cut -c1-110)
      nodes=$(echo "$out" | grep -oE 'on server postgres@localhost:[0-9]+|from localhost:[0-9]+' | grep -oE '[0-9]+$' | sort -u | tr '\n' ' ')
      ncmd=$(echo "$out" | grep -cE 'NOTICE:  (issuing|executing the command locally|executing the copy locally)')
      twopc=$(echo "$out" | grep -c 'PREPARE TRANSACTION')
      printf '%-30s %-12s cmds=%-2s 2pc=%s nodes=[%s] %s\n' "$k" "$fn" "$ncmd" "$twopc" "$nodes" "$res"
      [ -n "${VERBOSE:-}" ] && echo "$out" | grep -E 'NOTICE' | cut -c1-200
    done
  done
}
# the workers log their commands too, so what a delegated call runs is counted
for n in w1 w2; do wl_citus_psql $n -qc "ALTER SYSTEM SET citus.log_local_commands = on" -c "ALTER SYSTEM SET citus.log_remote_commands = on" -c "SELECT pg_reload_conf()" >/dev/null; done
echo "ports: coordinator $WL_CITUS_COORD_PORT, w1 $WL_CITUS_W1_PORT, w2 $WL_CITUS_W2_PORT; acme is on $(c -qAt -c "SELECT nodeport FROM pg_dist_placement JOIN pg_dist_node USING (groupid) WHERE shardid = get_shard_id_for_distribution_column('m.workloads', 'acme')")"
if [ -n "${SET:-}" ]; then
  runset "$SET" "${OPTS:-2}"
else
  runset g 1; runset g 2; runset v 2; runset w 2; runset h 1; runset h 2; runset k 1
fi
for n in w1 w2; do wl_citus_psql $n -qc "ALTER SYSTEM RESET citus.log_local_commands" -c "ALTER SYSTEM RESET citus.log_remote_commands" -c "SELECT pg_reload_conf()" >/dev/null; done
