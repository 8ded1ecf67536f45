#!/usr/bin/env bash
# bench/create_many.sh: workload_create_many against single creates.
#
#   bench/create_many.sh [--rounds R] [--count N] [--batch B] [--name NAME] [--no-build] [--here]
#
# Each round, on a fresh database, three ways of making N workloads, each in
# one transaction (BEGIN ... COMMIT), each with its own keys:
#   calls  N statements "SELECT workload_create('<spec>')", as a client sends
#          them (the comparison that matters to a client: N workload_create calls in one
#          transaction);
#   loop   one statement calling workload_create N times over a table of
#          specs (no client round trips: the cheapest way to call it N times);
#   many   N/B statements "SELECT ... FROM workload_create_many('<B specs>')".
# The specs are made and written to SQL files before the clock starts; a
# measurement is the wall time of one psql run of its file.  The order of the
# three rotates between rounds.  Defaults: R = 3, N = 10000, B = 1000.
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

# db DB: a fresh database with the extension, the bench helpers, the specs of
# each variant (bench.calls, bench.loop, bench.many) and the SQL files that
# send them ($WORK/calls.sql, $WORK/loop.sql, $WORK/many.sql)
WORK=$(mktemp -d /tmp/wl-create-many.XXXXXX)
db() {
	q -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"
	q -c "CREATE DATABASE $1"
	q -d "$1" -c "CREATE EXTENSION workload CASCADE"
	q -d "$1" -f "$BENCH/sql/setup.sql" >/dev/null
	for v in calls loop many; do
		q -d "$1" -c "CREATE TABLE bench.$v AS SELECT g, bench.spec('$v-' || g, 'acme', 'bench') AS spec
			FROM generate_series(1, $count) g"
	done
	{ echo "BEGIN;"
	  q -d "$1" -c "SELECT 'SELECT workload_create(' || quote_literal(spec::text) || ') IS NOT NULL;'
		FROM bench.calls ORDER BY g"
	  echo "COMMIT;"; } >"$WORK/calls.sql"
	printf 'BEGIN;\nSELECT count(workload_create(spec)) FROM bench.loop;\nCOMMIT;\n' >"$WORK/loop.sql"
	{ echo "BEGIN;"
	  q -d "$1" -c "SELECT 'SELECT count(*) FROM workload_create_many(' || quote_literal(jsonb_agg(spec ORDER BY g)::text) || ');'
		FROM bench.many GROUP BY (g - 1) / $batch ORDER BY (g - 1) / $batch"
	  echo "COMMIT;"; } >"$WORK/many.sql"
	q -d "$1" -c "VACUUM ANALYZE"
	q -d "$1" -c "CHECKPOINT"
}

# run DB VARIANT: seconds of one psql run of its file; checks all N were created
run() {
	local t0 t1 made
	t0=$(epoch)
	psql -X -q -v ON_ERROR_STOP=1 -d "$1" -f "$WORK/$2.sql" >/dev/null
	t1=$(epoch)
	made=$(q -d "$1" -c "SELECT count(*) FROM workload.specs WHERE idempotency_key LIKE '$2-%'")
	[ "$made" = "$count" ] || { say "$2: created $made of $count"; exit 1; }
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

declare -A T
variants=(calls loop many)
for r in $(seq 1 "$rounds"); do
	say "== round $r of $rounds"
	db bench_cm >/dev/null
	for i in 0 1 2; do
		v=${variants[$(( (i + r - 1) % 3 ))]}
		T[$v,$r]=$(run bench_cm "$v")
	done
	say "   calls ${T[calls,$r]} s, loop ${T[loop,$r]} s, many ${T[many,$r]} s"
done
q -c "DROP DATABASE IF EXISTS bench_cm WITH (FORCE)"
rm -rf "$WORK"

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { for r in $(seq 1 "$rounds"); do echo "${T[$1,$r]}"; done; }
mc=$(median $(col calls)); ml=$(median $(col loop)); mm=$(median $(col many))
ratio=$(awk -v s="$mc" -v m="$mm" 'BEGIN { printf "%.2f", s / m }')
ratio_loop=$(awk -v s="$ml" -v m="$mm" 'BEGIN { printf "%.2f", s / m }')
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
	echo "variant one transaction on the same database: **calls** = $count statements"
	echo "\`SELECT workload_create('<spec>')\` sent by psql; **loop** = one statement calling"
	echo "\`workload_create\` $count times over a table of specs; **many** = $((count / batch)) statements"
	echo "\`workload_create_many('<$batch specs>')\`. Specs are built and written out before the clock"
	echo "starts; a time is one psql run (BEGIN, the creates, COMMIT). Rounds rotate the order."
	echo
	echo "| round | calls s | loop s | many s | calls µs/workload | loop µs/workload | many µs/workload | calls / many | loop / many |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for r in $(seq 1 "$rounds"); do
		awk -v r="$r" -v c="${T[calls,$r]}" -v l="${T[loop,$r]}" -v m="${T[many,$r]}" -v n="$count" \
			'BEGIN { printf "| %d | %.3f | %.3f | %.3f | %.0f | %.0f | %.0f | %.2f | %.2f |\n", r, c, l, m, c / n * 1e6, l / n * 1e6, m / n * 1e6, c / m, l / m }'
	done
	awk -v c="$mc" -v l="$ml" -v m="$mm" -v n="$count" -v x="$ratio" -v y="$ratio_loop" \
		'BEGIN { printf "| median | %.3f | %.3f | %.3f | %.0f | %.0f | %.0f | **%s** | **%s** |\n", c, l, m, c / n * 1e6, l / n * 1e6, m / n * 1e6, x, y }'
	echo
	echo "Per workload (medians of $rounds rounds), \`workload_create_many\` is **${ratio}×** as fast as"
	echo "$count \`workload_create\` calls in one transaction, and **${ratio_loop}×** as fast as one"
	echo "statement that calls \`workload_create\` $count times."
} >"$OUT"
bash "$BENCH/results_index.sh"
cat "$OUT"
