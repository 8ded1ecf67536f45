#!/usr/bin/env bash
# a_cost.sh [calls]: what a C function's saved SPI statements cost on Citus, against the
# same tables undistributed (schema l, single-node baseline), by path:
#   single  - plain PostgreSQL tables (l.*) on the coordinator
#   coord   - the function runs on the coordinator, each statement routed to the worker
#   deleg   - the function is delegated to the tenant's worker (Citus distributed function)
#   routed  - a C function on the coordinator delegates a force-delegated function
#             through SPI ("SELECT * FROM f($1, ...)", custom plan)
#   on_node - the caller connects to the tenant's worker; the call runs there, locally
# and plan mode (1 generic, 2 custom).  Per case: pg_stat_statements on every node
# (calls, plans, plan and execution ms per call), then server CPU per call (utime+stime
# of the caller's backend and every backend Citus opened for it) over N calls in one
# session.  The machine is shared: CPU times are noisy; compare within one run.
. "$(dirname "$0")/lib.sh"
N=${1:-1000}
c -q <<'SQL'
SET citus.enable_ddl_propagation = off;
DROP SCHEMA IF EXISTS l CASCADE;
CREATE SCHEMA l;
CREATE TABLE l.workloads (LIKE m.workloads INCLUDING ALL);
CREATE TABLE l.specs (LIKE m.specs INCLUDING ALL);
CREATE TABLE l.attempts (LIKE m.attempts INCLUDING ALL);
CREATE TABLE l.events (LIKE m.events INCLUDING ALL);
INSERT INTO l.workloads (tenant_id, workload_id, application_id, state, priority)
  SELECT tenant_id, workload_id, application_id, state, priority FROM m.workloads;
INSERT INTO l.specs SELECT * FROM m.specs;
CREATE INDEX ON l.workloads (workload_id);
ANALYZE l.workloads, l.specs;
SQL
SEL="SELECT w.fencing_token FROM SCH.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = \$2"
UPD="UPDATE SCH.workloads w SET fencing_token = w.fencing_token + 1 FROM SCH.specs s WHERE w.tenant_id = \$1 AND s.tenant_id = \$1 AND s.workload_id = w.workload_id AND w.workload_id = \$2 RETURNING s.input"
LOOKUP="SELECT w.tenant_id FROM SCH.workloads w WHERE w.workload_id = \$2"
mk() { # name fn opts sqltemplate schema [arg]
  local sql=${4//SCH/$5}
  printf "SELECT %s('acme', \$q\$%s\$q\$, %s, '{%s}');\n" "$2" "$sql" "$3" "${6:-acme_1500}" >bench/$1.sql
}
mk SEL_single_1 probe_run 1 "$SEL" l; mk SEL_single_2 probe_run 2 "$SEL" l
mk SEL_coord_1 probe_run 1 "$SEL" m; mk SEL_coord_2 probe_run 2 "$SEL" m
mk SEL_deleg_1 probe_deleg 1 "$SEL" m; mk SEL_deleg_2 probe_deleg 2 "$SEL" m
# a generic UPDATE ... FROM runs on all 32 shards with 2PC (a_tasks.sh g6): only custom
mk UPD_single_2 probe_run 2 "$UPD" l; mk UPD_coord_2 probe_run 2 "$UPD" m; mk UPD_deleg_2 probe_deleg 2 "$UPD" m
# finding a workload's tenant by its id alone: every shard (a generic plan is refused)
mk LOOKUP_single_2 probe_run 2 "$LOOKUP" l hooli_5; mk LOOKUP_coord_2 probe_run 2 "$LOOKUP" m hooli_5
# a claim-sized call: five single-table statements of one tenant in one transaction
stmts() {
  local s=$1
  echo "ARRAY[\$q\$SELECT w.state FROM $s.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = \$2 FOR NO KEY UPDATE\$q\$,
 \$q\$UPDATE $s.workloads SET fencing_token = fencing_token + 1 WHERE tenant_id = \$1 AND workload_id = \$2\$q\$,
 \$q\$INSERT INTO $s.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, \$2, (random() * 2e9)::int, 'c')\$q\$,
 \$q\$INSERT INTO $s.events (tenant_id, sequence, workload_id, event_type, to_state) VALUES (\$1, (random() * 9e18)::bigint, \$2, 'workload.claimed', 'CLAIMED')\$q\$,
 \$q\$SELECT s.input FROM $s.specs s WHERE s.tenant_id = \$1 AND s.workload_id = \$2\$q\$]" | tr '\n' ' '
}
for o in 1 2; do
  echo "SELECT probe_run_many('acme', $(stmts l), $o, '{acme_1700}');" >bench/MULTI_single_$o.sql
  echo "SELECT probe_run_many('acme', $(stmts m), $o, '{acme_1700}');" >bench/MULTI_coord_$o.sql
  echo "SELECT probe_deleg_many('acme', $(stmts m), $o, '{acme_1700}');" >bench/MULTI_deleg_$o.sql
  echo "SELECT probe_run('acme', \$r\$SELECT * FROM probe_force_many(\$1, $(stmts m), $o, ARRAY[\$2])\$r\$, 2, '{acme_1700}');" >bench/MULTI_routed_$o.sql
done
CASES="SEL_single_1 SEL_single_2 SEL_coord_1 SEL_coord_2 SEL_deleg_1 SEL_deleg_2 UPD_single_2 UPD_coord_2 UPD_deleg_2
  LOOKUP_single_2 LOOKUP_coord_2 MULTI_single_1 MULTI_single_2 MULTI_coord_1 MULTI_coord_2 MULTI_deleg_1 MULTI_deleg_2
  MULTI_routed_1 MULTI_routed_2"
echo "== pg_stat_statements per node: calls | plans | plan ms/call | exec ms/call | statement ($N calls, 1 client)"
for k in $CASES; do
  for n in coord w1 w2; do wl_citus_psql $n -qAt -c "SELECT pg_stat_statements_reset()" >/dev/null; done
  lat=$(pgbench -n -t "$N" -c 1 -f bench/$k.sql 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
  echo "-- $k: latency $lat ms"
  for n in coord w1 w2; do
    wl_citus_psql $n -qAt -F ' | ' -c "SELECT '$n', calls, plans, round((total_plan_time / calls)::numeric, 4),
        round((total_exec_time / calls)::numeric, 4), regexp_replace(left(query, 70), '\s+', ' ', 'g')
      FROM pg_stat_statements WHERE calls >= $N / 2 AND query NOT LIKE '%pg_stat_statements%'
        AND query NOT LIKE '%assign_distributed_transaction_id%' AND query !~ '^(BEGIN|COMMIT)'
      ORDER BY toplevel DESC, calls DESC, query LIMIT 7"
  done
done
echo "== server CPU per call (ms), 3 rounds of $((N / 2)) calls"
for r in 1 2 3; do
  for k in SEL_single_1 SEL_coord_1 SEL_deleg_1 LOOKUP_single_2 LOOKUP_coord_2 MULTI_single_1 MULTI_coord_1 MULTI_deleg_1 MULTI_routed_1; do
    bash "$P/a_cpu.sh" bench/$k.sql $((N / 2))
  done
  A_NODE=$(node_of acme) CPU_NODEID=$(c -qAt -c "SELECT nodeid FROM pg_dist_node WHERE nodeport = $(port_of acme)") \
    bash "$P/a_cpu.sh" bench/MULTI_deleg_1.sql $((N / 2)) | sed 's/MULTI_deleg_1  /MULTI_on_node_1/'
done
