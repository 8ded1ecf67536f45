#!/usr/bin/env bash
# a_shapes.sh: each statement shape of store_sql.c, prepared in C (SPI_prepare_cursor +
# SPI_keepplan) with opts 1 = CURSOR_OPT_GENERIC_PLAN, 2 = CURSOR_OPT_CUSTOM_PLAN,
# 0 = default (plan_cache_mode auto), called 7 times in one session, on the coordinator
# (probe_run, not distributed) and delegated to the tenant's worker (probe_deleg).
. "$(dirname "$0")/lib.sh"
declare -a NAME SQL ARGS
add() { NAME+=("$1"); SQL+=("$2"); ARGS+=("$3"); }
add single_select "SELECT w.fencing_token FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = \$2" "{acme_1}"
add single_update "UPDATE m.workloads SET attempt_count = attempt_count + 1 WHERE tenant_id = \$1 AND workload_id = \$2 RETURNING attempt_count" "{acme_2}"
add lock_for_nku "SELECT w.state FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = \$2 FOR NO KEY UPDATE" "{acme_3}"
add join_2tables "SELECT s.input FROM m.workloads w JOIN m.specs s ON s.tenant_id = w.tenant_id AND s.workload_id = w.workload_id WHERE w.tenant_id = \$1 AND s.tenant_id = \$1 AND w.workload_id = \$2" "{acme_4}"
add scalar_subq "SELECT w.workload_id, (SELECT s.input FROM m.specs s WHERE s.tenant_id = \$1 AND s.workload_id = w.workload_id) FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = \$2" "{acme_5}"
add update_from "UPDATE m.workloads w SET attempt_count = w.attempt_count + 1 FROM m.specs s WHERE w.tenant_id = \$1 AND s.tenant_id = \$1 AND s.workload_id = w.workload_id AND w.workload_id = \$2 RETURNING s.input" "{acme_6}"
add skip_locked_limit "SELECT c.workload_id FROM m.workloads c WHERE c.tenant_id = \$1 AND c.claimable ORDER BY c.priority DESC, c.created_at, c.seq LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED" "{}"
add insert_values "INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, \$2, \$3::int, 'c') ON CONFLICT DO NOTHING" "{acme_7,1}"
add insert_select "INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) SELECT w.tenant_id, w.workload_id, 100 + \$2::int, 'c' FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id = 'acme_8' ON CONFLICT DO NOTHING" "{1}"
add insert_unnest "INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) SELECT \$1, x, 1, 'c' FROM unnest(\$2::text[]) x ON CONFLICT DO NOTHING" "{\"{acme_9,acme_10}\"}"
add cte_insert_returning "WITH ins AS (INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, 'acme_11', \$2::int + (random() * 1e8)::int, 'c') RETURNING attempt_number) SELECT * FROM ins" "{1}"
add cte_update_unnest "WITH x AS (SELECT * FROM unnest(\$2::text[]) AS x(workload_id)) UPDATE m.workloads w SET attempt_count = w.attempt_count + 1 FROM x WHERE w.tenant_id = \$1 AND w.workload_id = ANY(\$2::text[]) AND w.workload_id = x.workload_id RETURNING w.workload_id" "{\"{acme_12,acme_13}\"}"
add claim_cte "WITH picked AS (SELECT c.workload_id FROM m.workloads c WHERE c.tenant_id = \$1 AND c.claimable ORDER BY c.priority DESC, c.created_at, c.seq LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED), upd AS (UPDATE m.workloads w SET state = 'CLAIMED', fencing_token = w.fencing_token + 1 FROM m.specs s WHERE w.tenant_id = \$1 AND s.tenant_id = \$1 AND w.workload_id = ANY (ARRAY(SELECT p.workload_id FROM picked p)) AND s.workload_id = w.workload_id RETURNING w.workload_id, w.fencing_token, s.input), att AS (INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) SELECT \$1, u.workload_id, u.fencing_token::int + 10000, 'c' FROM upd u) SELECT * FROM upd" "{}"
modes="1 2 0"
[ -n "${ONLY:-}" ] && { NAME=("${NAME[@]:$ONLY:1}"); SQL=("${SQL[@]:$ONLY:1}"); ARGS=("${ARGS[@]:$ONLY:1}"); }
for fn in probe_run probe_deleg; do
  for i in "${!NAME[@]}"; do
    for m in $modes; do
      out=$(for k in 1 2 3 4 5 6 7; do echo "SELECT $fn('acme', \$q\$${SQL[$i]}\$q\$, $m, '${ARGS[$i]}');"; done \
        | c -qAt 2>&1 | tr '\n' ' ' | sed 's/psql:<stdin>:[0-9]*: //g')
      printf '%-12s %-22s opts=%s  %s\n' "$fn" "${NAME[$i]}" "$m" "${out:0:230}"
    done
  done
done
