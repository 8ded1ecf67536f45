#!/usr/bin/env bash
# scripts/citus-probe/run.sh [probe...]: the Citus probes behind the Citus design
# (their notes: bench/JOURNAL.md, "workload on Citus: what the cluster did"),
# on a fresh local cluster (scripts/citus.sh): builds and installs the throwaway
# wlprobe extension (C functions shaped like store.c) and workload into PG_CONFIG's
# PostgreSQL, starts a coordinator and two workers with citus, pg_stat_statements and
# wlprobe preloaded, loads model.sql and seed.sql, runs each probe (default: all, in
# order), writing its output to $OUT/<probe>.out (default OUT=/tmp/citus-probe-out),
# and stops the cluster.  Run as root, e.g.
#   export PG_CONFIG=$(scripts/dev-pg.sh citus); scripts/citus-probe/run.sh a_shapes d_guard
set -euo pipefail
P=$(cd "$(dirname "$0")" && pwd)
WL_ROOT=$(cd "$P/../.." && pwd)
. "$WL_ROOT/scripts/citus.sh"
wl_need_root
export OUT=${OUT:-/tmp/citus-probe-out} CITUS_PROBE_ENV=${CITUS_PROBE_ENV:-/tmp/citus-probe.env}
rm -rf "$OUT"; mkdir -p "$OUT"
wl_install_deps
wl_build
wl_citus_build | tail -n 1
make -s -C "$P/wlprobe" install PG_CONFIG="$PG_CONFIG" >/dev/null
make -s -C "$P/wlappname" install PG_CONFIG="$PG_CONFIG" >/dev/null
# the SQL text printer of a_plan_real (store_sql.c compiled alone)
gcc -I"$WL_ROOT/src" -I"$("$PG_CONFIG" --includedir-server)" -o "$OUT/print_sql" \
	"$P/print_sql.c" "$WL_ROOT/src/store_sql.c"
PROBES=${*:-a_shapes a_tasks a_own_writes a_cost a_plan_real b_delegation c_sequences d_guard e_notify g_local_shards h_workload11 b_crash}
WL_CITUS_LIBS=citus,pg_stat_statements,wlprobe wl_citus_start \
	"citus.enable_unsafe_triggers = on" "pg_stat_statements.track = all" "pg_stat_statements.track_planning = on"
{
	echo "WL_CITUS_TMP=$WL_CITUS_TMP WL_CITUS_DB=$WL_CITUS_DB WL_CITUS_NODES='$WL_CITUS_NODES'"
	echo "WL_CITUS_COORD_PORT=$WL_CITUS_COORD_PORT WL_CITUS_W1_PORT=$WL_CITUS_W1_PORT WL_CITUS_W2_PORT=$WL_CITUS_W2_PORT"
	echo "PG_CONFIG=$PG_CONFIG OUT=$OUT"
	echo "export PGHOST=$PGHOST PGPORT=$PGPORT PGUSER=postgres PGDATABASE=$PGDATABASE PATH=$WL_PG_BIN:\$PATH"
} >"$CITUS_PROBE_ENV"
wl_citus_psql coord -q -f "$P/model.sql" -f "$P/seed.sql" >/dev/null
wl_citus_psql coord -qc "CREATE EXTENSION pg_stat_statements" >/dev/null
for probe in $PROBES; do
	echo "== $probe"
	if [ -f "$P/$probe.sh" ]; then
		bash "$P/$probe.sh" >"$OUT/$probe.out" 2>&1 || echo "   (exit $?)"
	else
		(. "$P/lib.sh"; c -X -v ON_ERROR_STOP=0 -v w1port="$WL_CITUS_W1_PORT" -v w2port="$WL_CITUS_W2_PORT" -f "$P/$probe.sql") >"$OUT/$probe.out" 2>&1 || echo "   (exit $?)"
	fi
	# a probe that adds a node records it for wl_citus_stop
	[ -f "$OUT/nodes" ] && WL_CITUS_NODES=$(cat "$OUT/nodes")
	sed 's/^/   /' "$OUT/$probe.out" | head -n "${SHOW:-400}"
done
