#!/usr/bin/env bash
# bench/create_many.sh: workload_create_many against single creates (issue 15).
#
#   bench/create_many.sh [--rounds R] [--count N] [--batch B] [--name NAME] [--no-build] [--here]
#
# Each round, on a fresh database: N workloads made by N workload_create
# calls in one transaction ("single"), and N workloads made by N/B
# workload_create_many calls of B specs in one transaction ("many"); the
# order of the two alternates between rounds.  The specs are made before the
# clock starts (both variants create the same kind of spec, each its own
# keys); a measurement is the wall time of one psql run: BEGIN, the creates,
# COMMIT.  Defaults: R = 3, N = 10000, B = 1000.
# --here uses the server PGHOST/PGPORT name instead of a throwaway cluster.
# Writes bench/results/<date>-<name>.md (name: create-many) and prints it.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH="$WL_ROOT/bench"
. "$WL_ROOT/scripts/cluster.sh"
COMMAND_LINE="bench/create_many.sh $*"

rounds=3 count=10000 batch=1000 name=create-many build=1 here=0
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) rounds=$2; shift ;;
		--count) count=$2; shift ;;
		--batch) batch=$2; shift ;;
		--name) name=$2; shift ;;
		--no-build) build=0 ;;
		--here) here=1 ;;
		-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
		*) echo "unknown option: $1" >&2; exit 2 ;;
	esac
	shift
done
[ $((count % batch)) = 0 ] || { echo "--count must be a multiple of --batch" >&2; exit 2; }

q() { PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
epoch() { date +%s.%N; }
say() { echo "$*" >&2; }

if [ "$build" = 1 ]; then
	say "== building and installing the extension"
	make -s -C "$WL_ROOT" PG_CONFIG="$WL_PG_BIN/pg_config" >/dev/null
	make -s -C "$WL_ROOT" PG_CONFIG="$WL_PG_BIN/pg_config" install >/dev/null
fi
if [ "$here" = 0 ]; then
	wl_cluster_start "fsync = on" "synchronous_commit = on" "shared_buffers = 1GB" \
		"max_wal_size = 8GB" "checkpoint_timeout = 30min" "autovacuum = on"
fi

# db DB: a fresh database with the extension, the bench helpers and the specs
# of both variants (tables bench.single and bench.many, made before timing)
db() {
	q -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"
	q -c "CREATE DATABASE $1"
	q -d "$1" -c "CREATE EXTENSION workload CASCADE"
	q -d "$1" -f "$BENCH/sql/setup.sql" >/dev/null
	q -d "$1" -c "CREATE TABLE bench.single AS SELECT g, bench.spec('single-' || g, 'acme', 'bench') AS spec
		FROM generate_series(1, $count) g;
		CREATE TABLE bench.many AS SELECT g, bench.spec('many-' || g, 'acme', 'bench') AS spec
		FROM generate_series(1, $count) g;
		CREATE TABLE bench.batches AS SELECT k, jsonb_agg(spec ORDER BY g) AS specs
		FROM bench.many, LATERAL (SELECT (g - 1) / $batch AS k) b GROUP BY k;
		VACUUM ANALYZE;
		CHECKPOINT;"
}

SINGLE="BEGIN; SELECT count(workload_create(spec)) FROM bench.single; COMMIT;"
# one call per batch, in order (a LATERAL call per row of bench.batches)
MANY="BEGIN; SELECT count(*) FILTER (WHERE c.outcome = 'created') FROM bench.batches b,
	LATERAL workload_create_many(b.specs) c; COMMIT;"

# run DB SQL: seconds of one psql run; checks every workload was created
run() {
	local t0 t1 made
	t0=$(epoch)
	made=$(q -d "$1" -c "$2" | tail -n 1)
	t1=$(epoch)
	[ "$made" = "$count" ] || { say "created $made of $count"; exit 1; }
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

declare -a S M
for r in $(seq 1 "$rounds"); do
	say "== round $r of $rounds"
	db bench_cm >/dev/null
	if [ $((r % 2)) = 1 ]; then
		S[$r]=$(run bench_cm "$SINGLE"); M[$r]=$(run bench_cm "$MANY")
	else
		M[$r]=$(run bench_cm "$MANY"); S[$r]=$(run bench_cm "$SINGLE")
	fi
	say "   single ${S[$r]} s, many ${M[$r]} s"
done
q -c "DROP DATABASE IF EXISTS bench_cm WITH (FORCE)"

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ms=$(median "${S[@]}"); mm=$(median "${M[@]}")
ratio=$(awk -v s="$ms" -v m="$mm" 'BEGIN { printf "%.2f", s / m }')
mkdir -p "$BENCH/results"
OUT="$BENCH/results/$(date -u +%Y-%m-%d)-$name.md"
commit=$(git -C "$WL_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$WL_ROOT" status --porcelain 2>/dev/null | wc -l)
{
	echo "# workload benchmark: workload_create_many against single creates ($(date -u +%Y-%m-%d))"
	echo
	echo "## Environment"
	echo
	echo "- command: \`$COMMAND_LINE\` (as root, from the repository root)"
	echo "- git commit: \`$commit\`$([ "$dirty" -gt 0 ] && echo " plus $dirty uncommitted paths in the working tree")"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "- cluster: $([ "$here" = 1 ] && echo "an existing one (--here)" || echo "throwaway (scripts/cluster.sh): fsync = on, synchronous_commit = on, shared_buffers = 1GB, max_wal_size = 8GB, checkpoint_timeout = 30min, autovacuum = on")"
	echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1), $(nproc) cores; load average at the end: $(cut -d ' ' -f 1-3 /proc/loadavg)"
	echo "- PostgreSQL: $(q -c 'SELECT version()')"
	echo
	echo "## Result"
	echo
	echo "$count workloads (one tenant and application, one grant) per variant and round, each"
	echo "variant one transaction: **single** = $count \`workload_create\` calls, **many** ="
	echo "$((count / batch)) \`workload_create_many\` calls of $batch specs. Specs are built before the clock"
	echo "starts; the time is one psql run (BEGIN, the creates, COMMIT). Rounds alternate the order."
	echo
	echo "| round | single s | many s | single µs/workload | many µs/workload | single / many |"
	echo "|---:|---:|---:|---:|---:|---:|"
	for r in $(seq 1 "$rounds"); do
		awk -v r="$r" -v s="${S[$r]}" -v m="${M[$r]}" -v n="$count" \
			'BEGIN { printf "| %d | %.3f | %.3f | %.0f | %.0f | %.2f |\n", r, s, m, s / n * 1e6, m / n * 1e6, s / m }'
	done
	awk -v s="$ms" -v m="$mm" -v n="$count" -v x="$ratio" \
		'BEGIN { printf "| median | %.3f | %.3f | %.0f | %.0f | **%s** |\n", s, m, s / n * 1e6, m / n * 1e6, x }'
	echo
	echo "Per workload, \`workload_create_many\` is **${ratio}×** as fast as single creates (median of $rounds rounds; the issue asks for at least 3×)."
} >"$OUT"
cat "$OUT"
