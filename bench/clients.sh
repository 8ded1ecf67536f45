#!/usr/bin/env bash
# bench/clients.sh [--seconds T] [--preload P] [--concurrency C] [--rounds R] [--no-build]
#
# What the client libraries cost over the SQL they send: jobs/s of a worker
# with a no-op handler and concurrency C (default 16) in Python
# (clients/python) and in Node.js (clients/node), against the SQL-level
# batched cycle (bench/clients/sql_cycle.pgbench: workload_claim with
# max_items => C, then workload_complete_many, one pgbench client), and
# beside it that cycle with the execution contexts the libraries ask for
# (sql_cycle_context.pgbench), in one run on one throwaway cluster.  Each variant drains a tenant of its own,
# preloaded with P READY workloads (default 150000; half that for the
# libraries' tenants, which drain slower); jobs/s is the growth of
# that tenant's results between two samples T seconds apart (default 10),
# taken from 1 s after its first result, over the server's clock.  The
# variants run one after another, R rounds (default 1), interleaved.  Writes
# bench/results/<date>-clients.md (the command, the commit, the figures and
# their ratios).  As root on Debian 12, like test/run-all.sh.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_W=10
PRELOAD=150000
CONC=16
ROUNDS=1
BUILD=1
ARGS="$*"
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) SECONDS_W=$2; shift 2 ;;
	--preload) PRELOAD=$2; shift 2 ;;
	--concurrency) CONC=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--no-build) BUILD=0; shift ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
wl_install_deps
missing=""
for p in python3-psycopg python3-psycopg-pool nodejs npm; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v node >/dev/null && command -v npm >/dev/null && missing=${missing//nodejs/} && missing=${missing//npm/}
if [ -n "${missing// /}" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
(cd "$WL_ROOT/clients/node" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
[ "$BUILD" = 1 ] && wl_build
wl_cluster_start "max_connections = 100" "shared_buffers = 512MB" "synchronous_commit = on" \
	"max_wal_size = 8GB" "checkpoint_timeout = 30min" >/dev/null
export PGDATABASE=wl_bench_clients
psql -X -q -d postgres -c "CREATE DATABASE $PGDATABASE"
psql -X -q -v ON_ERROR_STOP=1 -f "$WL_ROOT/test/clients/setup.sql"
psql -X -q -v ON_ERROR_STOP=1 -f "$WL_ROOT/bench/sql/setup.sql" >/dev/null
q() { psql -X -qAt -v ON_ERROR_STOP=1 -c "$1"; }

# preload TENANT COUNT: the tenant's members and COUNT READY workloads (bench.create_range, 10k a statement)
preload() {
	local t=$1 count=$2 lo=1 hi
	q "SELECT workload_add_tenant_member('wlc_worker', '$t', 'bench')" >/dev/null
	while [ $lo -le "$count" ]; do
		hi=$((lo + 9999)); [ $hi -gt "$count" ] && hi=$count
		q "SELECT bench.create_range('$t', 'bench', $lo, $hi)" >/dev/null
		lo=$((hi + 1))
	done
	q "VACUUM ANALYZE" >/dev/null
}
done_now() { q "SELECT count(*) || ' ' || extract(epoch FROM statement_timestamp()) FROM workload.results WHERE tenant_id = '$1'"; }

# measure TENANT COMMAND...: starts the command, samples, stops it; prints jobs/s
measure() {
	local t=$1; shift
	"$@" >"$WL_TMP/$t.out" 2>&1 &
	local pid=$! a b end=$((SECONDS + 60))
	until [ "$(q "SELECT count(*) > 0 FROM workload.results WHERE tenant_id = '$t'")" = t ]; do
		[ $SECONDS -lt $end ] || { echo "no result from $t" >&2; cat "$WL_TMP/$t.out" >&2; kill $pid; exit 1; }
		sleep 0.1
	done
	sleep 1
	a=$(done_now "$t")
	sleep "$SECONDS_W"
	b=$(done_now "$t")
	local left
	left=$(q "SELECT count(*) FROM workload.workloads WHERE tenant_id = '$t' AND state = 'READY'")
	kill -TERM $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	[ "$left" -gt 0 ] || { echo "$t ran dry within its window: raise --preload" >&2; exit 1; }
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.0f\n", (y[1] - x[1]) / (y[2] - x[2]) }'
}

CONN="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=wlc_worker"
URL="postgresql://wlc_worker@/$PGDATABASE?host=$PGHOST&port=$PGPORT"
declare -A R
for r in $(seq 1 "$ROUNDS"); do
	for v in sql ctx python node; do
		t="$v$r"
		case $v in sql | ctx) preload "$t" "$PRELOAD" ;; *) preload "$t" $((PRELOAD / 2)) ;; esac
		case $v in
		sql) R[$v,$r]=$(measure "$t" "$WL_PG_BIN/pgbench" -n -M prepared -c 1 -T $((SECONDS_W + 30)) \
			-U wlc_worker -h "$PGHOST" -p "$PGPORT" -D tenant="$t" -D batch="$CONC" \
			-f "$WL_ROOT/bench/clients/sql_cycle.pgbench" "$PGDATABASE") ;;
		ctx) R[$v,$r]=$(measure "$t" "$WL_PG_BIN/pgbench" -n -M prepared -c 1 -T $((SECONDS_W + 30)) \
			-U wlc_worker -h "$PGHOST" -p "$PGPORT" -D tenant="$t" -D batch="$CONC" \
			-f "$WL_ROOT/bench/clients/sql_cycle_context.pgbench" "$PGDATABASE") ;;
		python) R[$v,$r]=$(measure "$t" env PYTHONPATH="$WL_ROOT/clients/python" /usr/bin/python3 \
			"$WL_ROOT/bench/clients/noop.py" "$CONN" "$t" "$CONC") ;;
		node) R[$v,$r]=$(cd "$WL_ROOT/clients/node" && measure "$t" node "$WL_ROOT/bench/clients/noop.mjs" "$URL" "$t" "$CONC") ;;
		esac
		echo "round $r $v: ${R[$v,$r]} jobs/s"
	done
done

median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for v in sql ctx python node; do
	vals=""
	for r in $(seq 1 "$ROUNDS"); do vals="$vals ${R[$v,$r]}"; done
	eval "MED_$v=$(echo $vals | median)"
	eval "ALL_$v='${vals# }'"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

out="$WL_ROOT/bench/results/$(date -u +%Y-%m-%d)-clients.md"
commit=$(git -C "$WL_ROOT" rev-parse --short HEAD)$(git -C "$WL_ROOT" diff --quiet HEAD -- clients bench || echo "+uncommitted")
{
	echo "# Client libraries against the SQL-level batched cycle"
	echo
	echo "- command: \`bench/clients.sh${ARGS:+ $ARGS}\`"
	echo "- commit: $commit"
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME"), $("$WL_PG_BIN/postgres" --version), Python $(/usr/bin/python3 -c 'import platform; print(platform.python_version())') with psycopg $(/usr/bin/python3 -c 'import psycopg; print(psycopg.__version__)'), Node.js $(node --version) with pg $(node -p "require('$WL_ROOT/clients/node/node_modules/pg/package.json').version")"
	echo "- settings: fsync on, synchronous_commit on, shared_buffers 512MB; each variant drains its own tenant of $PRELOAD READY workloads (the libraries $((PRELOAD / 2))); window $SECONDS_W s from 1 s after its first result; $ROUNDS round(s)"
	echo
	echo "| variant | what runs | jobs/s (median) | per round | ratio to the SQL cycle | ratio to it with contexts |"
	echo "|---|---|---|---|---|---|"
	echo "| SQL cycle | pgbench, 1 client: \`workload_claim(max_items => $CONC, start => true)\` + \`workload_complete_many\` | $MED_sql | $ALL_sql | 1.00 | |"
	echo "| SQL cycle with contexts | the same, and one statement asking \`workload_execution_context\` for the claimed rows | $MED_ctx | $ALL_ctx | $(ratio "$MED_ctx" "$MED_sql") | 1.00 |"
	echo "| Python | \`run_worker(..., concurrency=$CONC)\`, a no-op handler, 1 process | $MED_python | $ALL_python | $(ratio "$MED_python" "$MED_sql") | $(ratio "$MED_python" "$MED_ctx") |"
	echo "| Node.js | \`runWorker({concurrency: $CONC})\`, a no-op handler, 1 process | $MED_node | $ALL_node | $(ratio "$MED_node" "$MED_sql") | $(ratio "$MED_node" "$MED_ctx") |"
	echo
	echo "Each library worker does per job what the SQL cycle leaves out: it has the server"
	echo "verify the execution context of each claimed workload (its grant and run authority:"
	echo "the \"with contexts\" row is that cost alone), announces each finish on the tenant's"
	echo "done channel (\`pg_notify\`), and runs the handler (Python: in a thread), with the"
	echo "heartbeats and the claim loop around it."
} >"$out"
cat "$out"
