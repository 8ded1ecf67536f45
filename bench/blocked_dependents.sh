#!/usr/bin/env bash
# bench/blocked_dependents.sh: what READY workloads whose dependencies are not
# met yet cost every claim of their queue.
#
#   bench/blocked_dependents.sh [--blocked "0 1000 10000 20000"] [--claims C] [--name NAME] [--no-build]
#
# For each count B, on a fresh database: one parent workload that is never
# run, B workloads at priority 5 that depend on it (SUCCEEDED), and C free
# workloads at priority 0; then C claims of one workload each (each its own
# transaction, one session), timed together.  A claim walks the queue best
# first, so it steps over (and looks up the dependencies of) every blocked
# workload before it reaches a free one.  Prints ms per claim and the ratio
# to B = 0.  Writes bench/results/<date>-<name>.md (name: blocked-dependents).
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH="$WL_ROOT/bench"
. "$WL_ROOT/scripts/cluster.sh"
COMMAND_LINE="bench/blocked_dependents.sh $*"
blocked="0 1000 10000 20000" claims=200 name=blocked-dependents build=1
while [ $# -gt 0 ]; do
	case "$1" in
		--blocked) blocked=$2; shift ;;
		--claims) claims=$2; shift ;;
		--name) name=$2; shift ;;
		--no-build) build=0 ;;
		-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
		*) echo "unknown option: $1" >&2; exit 2 ;;
	esac
	shift
done
wl_need_root
wl_install_deps
[ "$build" = 1 ] && wl_build
wl_cluster_start "shared_buffers = 1GB" "max_wal_size = 8GB" >/dev/null
q() { PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
out=$(mktemp)
{
	echo "# Claims over blocked dependents ($(date -u +%F))"
	echo
	echo "- command: \`$COMMAND_LINE\` (as root, from the repository root)"
	echo "- git commit: \`$(git -C "$WL_ROOT" rev-parse HEAD)\`$(git -C "$WL_ROOT" status --porcelain | grep -q . && echo ' plus uncommitted changes')"
	echo "- PostgreSQL: $(q -d postgres -c 'SELECT version()')"
	echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| blocked workloads ahead | ms per claim | × none blocked |"
	echo "|---:|---:|---:|"
} >"$out"
base=""
for b in $blocked; do
	q -d postgres -c "DROP DATABASE IF EXISTS blocked_run" -c "CREATE DATABASE blocked_run"
	q -d blocked_run -c "CREATE EXTENSION workload CASCADE" -f "$BENCH/sql/setup.sql" >/dev/null
	q -d blocked_run >/dev/null <<SQL
SELECT workload_create(bench.spec('parent', 'acme', 'bench', 0)) ->> 'workload_id' AS p \gset
SELECT count(workload_create(bench.spec('child-' || i, 'acme', 'bench', 5)
    || jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'p')))))
FROM generate_series(1, $b) i;
SELECT count(workload_create(bench.spec('free-' || i, 'acme', 'bench', 0))) FROM generate_series(1, $claims) i;
VACUUM ANALYZE;
SQL
	# the parent is claimed first (priority 0, created first) and left running
	for i in $(seq 1 "$claims"); do echo "SELECT count(*) FROM workload_claim('w', '{}', 'acme', 'bench');"; done >"$WL_TMP/claims.sql"
	t0=$(date +%s.%N)
	got=$(q -d blocked_run -f "$WL_TMP/claims.sql" | awk '{ s += $1 } END { print s }')
	t1=$(date +%s.%N)
	ms=$(awk -v a="$t0" -v b="$t1" -v n="$claims" 'BEGIN { printf "%.2f", (b - a) * 1000 / n }')
	[ "$got" = "$claims" ] || { echo "claims took $got workloads, not $claims" >&2; exit 1; }
	[ -n "$base" ] || base=$ms
	echo "| $b | $ms | $(awk -v a="$ms" -v b="$base" 'BEGIN { printf "%.1f", a / b }') |" >>"$out"
	echo "blocked $b: $ms ms per claim" >&2
done
echo >>"$out"
echo "Finished; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$out"
mkdir -p "$BENCH/results"
cp "$out" "$BENCH/results/$(date -u +%F)-$name.md"
bash "$BENCH/results_index.sh"
cat "$out"
