#!/usr/bin/env bash
# bench/spec_width.sh [ROUNDS] [PRELOAD]: what the width of workload.specs costs
# the batched claim when the queue is larger than shared_buffers.  As root, on
# a throwaway cluster with anchors' settings (bench/run.sh: shared_buffers =
# 1GB, huge pages, fsync and synchronous_commit on): one template with PRELOAD
# (600000) READY workloads made by bench.create_range, as anchors' template;
# a second, its copy with each spec's two authority documents
# (authorization_snapshot, run_authority: 1,400 of a spec row's 1,945 bytes)
# replaced by '{}' and the table rewritten (VACUUM FULL; the raw-write trigger
# is disabled for that statement only).  The claim reads a spec's definition and
# input, never those two documents, so the copy shows what a narrower spec row
# would buy.  Each round runs (c100) (bench/scripts/c_claim100_complete_many.pgbench,
# 16 clients, 10 s, pgbench -M prepared -j 2) on a fresh FILE_COPY clone of each
# template, in alternating order; prints pgbench's jobs a second (transactions a
# second × 100: every claim of the run takes 100) and the blocks the run read
# from outside shared_buffers a job (pg_stat_database.blks_read).  Not part of
# the test command; experiments only (it rewrites a table under the trigger).
set -euo pipefail
ROUNDS=${1:-3}
PRELOAD=${2:-600000}
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
cd "$WL_ROOT"
wl_install_deps
wl_build
HUGE_WAS=$(cat /proc/sys/vm/nr_hugepages)
sysctl -q -w vm.nr_hugepages=$((HUGE_WAS + 640))
stop_all() { wl_cluster_stop; sysctl -q -w vm.nr_hugepages="$HUGE_WAS" || true; }
trap stop_all EXIT
wl_cluster_start "synchronous_commit = on" "shared_buffers = 1GB" "max_connections = 100" \
	"max_wal_size = 8GB" "checkpoint_timeout = 30min" "autovacuum = on" \
	"shared_preload_libraries = 'workload'" "huge_pages = on"
trap stop_all EXIT
q() { PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

q -c "CREATE DATABASE spec_full"
q -d spec_full -c "CREATE EXTENSION workload CASCADE"
q -d spec_full -f bench/sql/setup.sql >/dev/null
for s in 0 1; do
	(
		for ((c = s; c < PRELOAD / 10000; c += 2)); do
			q -d spec_full -c "SELECT bench.create_range('acme', 'bench', $((c * 10000 + 1)), $((c * 10000 + 10000)))" >/dev/null
		done
	) &
done
wait
q -d spec_full -c "VACUUM ANALYZE"
q -c "CREATE DATABASE spec_narrow TEMPLATE spec_full STRATEGY FILE_COPY"
q -d spec_narrow -c "BEGIN" \
	-c "ALTER TABLE workload.specs DISABLE TRIGGER specs_raw_write_trg" \
	-c "UPDATE workload.specs SET authorization_snapshot = '{}', run_authority = '{}'" \
	-c "ALTER TABLE workload.specs ENABLE ALWAYS TRIGGER specs_raw_write_trg" \
	-c "COMMIT" -c "VACUUM FULL workload.specs" -c "VACUUM ANALYZE"
for t in spec_full spec_narrow; do
	echo "$t: workload.specs $(q -d "$t" -c "SELECT pg_size_pretty(pg_relation_size('workload.specs'))"), the database $(q -d "$t" -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"
done

one() {	# one TEMPLATE
	local log r0 r1 tps
	log=$(mktemp)
	q -c "DROP DATABASE IF EXISTS spec_run WITH (FORCE)" -c "CREATE DATABASE spec_run TEMPLATE $1 STRATEGY FILE_COPY"
	q -c "CHECKPOINT"
	r0=$(q -c "SELECT blks_read FROM pg_stat_database WHERE datname = 'spec_run'")
	"$WL_PG_BIN/pgbench" -n -M prepared -c 16 -j 2 -T 10 -f bench/scripts/c_claim100_complete_many.pgbench spec_run >"$log" 2>&1
	sleep 1	# the backends' statistics flushed as they exit
	r1=$(q -c "SELECT blks_read FROM pg_stat_database WHERE datname = 'spec_run'")
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$log")
	grep -qE 'aborted|ERROR' "$log" && { cat "$log"; exit 1; }
	awk -v t="$1" -v tps="$tps" -v r="$((r1 - r0))" -v n="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$log")" \
		'BEGIN { printf "  %-12s %8.0f jobs/s  %5.2f blocks read a job\n", t, tps * 100, r / (n * 100) }'
	rm -f "$log"
}
for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r"
	if [ $((r % 2)) = 1 ]; then one spec_full; one spec_narrow; else one spec_narrow; one spec_full; fi
done
