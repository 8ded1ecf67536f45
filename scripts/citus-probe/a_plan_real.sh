#!/usr/bin/env bash
# a_plan_real.sh: planning time of 1.1's real statements (store_sql.c text) as custom
# plans on a plain PostgreSQL database (no Citus): EXPLAIN (SUMMARY) EXECUTE, 300 times.
. "$(dirname "$0")/lib.sh"
c -d postgres -qc "DROP DATABASE IF EXISTS plain" -c "CREATE DATABASE plain" >/dev/null 2>&1
c -d plain -qc "CREATE EXTENSION workload CASCADE" >/dev/null 2>&1
# plan_id NAME: the position of P_NAME in store.h's WlPlanId
plan_id() {
  sed -n '/^typedef enum WlPlanId/,/^} WlPlanId/p' "$WL_ROOT/src/store.h" | grep -oE '^\s+P_[A-Z_]+' \
    | tr -d '\t ' | grep -n "^$1\$" | cut -d: -f1 | awk '{print $1 - 1}'
}
plan() { # name types args
  local sql; sql=$("$OUT/print_sql" "$(plan_id "$1")")
  {
    echo "SET plan_cache_mode = force_custom_plan;"
    echo "PREPARE s($2) AS $sql;"
    for i in $(seq 1 300); do echo "EXPLAIN (SUMMARY) EXECUTE s($3);"; done
  } | wl_citus_psql coord -d plain -qAt 2>&1 | sed -n 's/^Planning Time: \([0-9.]*\) ms/\1/p' \
    | sort -n | awk -v n="$1" '{s+=$1; a[++c]=$1} END {printf "%-14s custom plan: mean %.3f ms, median %.3f ms (%d plans)\n", n, s/c, a[int(c/2)+1], c}'
}
plan P_LOCK "text" "'workload_x'"
plan P_CLAIM_MANY "text, text, timestamptz, text[], int, text, interval, text, workload_state, bool, name, text, workload_state, workload_state, text" \
  "'t', 'a', now(), '{}', 10, 'w', '30 s', NULL, 'CLAIMED', true, 'r', 'workload.claimed', 'READY', 'CLAIMED', 'workload.started'"
plan P_DOC_FULL "text" "'workload_x'"
