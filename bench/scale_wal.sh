#!/usr/bin/env bash
# bench/scale_wal.sh [ROWS] [SECONDS]: where (b) loses rate on a store of
# finished workloads (bench/run.sh scale's third scenario).  On a throwaway
# cluster with bench/run.sh's settings (as root; PG_CONFIG picks the
# PostgreSQL, the Debian server by default): a template of 10k READY
# workloads, and one of ROWS (1,000,000) workloads driven to SUCCEEDED plus
# 10k READY, as bench/run.sh builds them.  Then, alternating 10k, fin, 10k,
# fin: a fresh FILE_COPY clone (which checkpoints), bench.feed holding the
# READY depth, and (b) (bench/scripts/b_claim_start_complete.pgbench) at 16
# clients for SECONDS (30).  Prints pgbench's jobs a second by 2 s, the
# cluster's WAL records, full-page images and bytes in the run from
# pg_stat_wal (the workers' sessions only: the producer's one CALL reports its
# own when it ends, after the reading), the images by relation (pg_waldump
# over the run's WAL, the producer's too), and the blocks read from outside
# shared_buffers by index and table.  Then one more 10k and fin each with the
# result ids in time order ('r-' || the clock, to the microsecond, || the
# client) instead of 'r-' || workload_id, which is random, as a hashed id is.
# Not part of the test command (~14 min).
set -euo pipefail
ROWS=${1:-1000000}
SECS=${2:-30}
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
wl_install_deps
wl_build
wl_cluster_start "fsync = on" "synchronous_commit = on" "shared_buffers = 1GB" \
	"max_connections = 100" "max_wal_size = 8GB" "checkpoint_timeout = 30min" \
	"autovacuum = on" "shared_preload_libraries = 'workload'"
trap 'wl_cluster_stop' EXIT
q() { PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
mk() {
	q -c "CREATE DATABASE $1"
	q -d "$1" -c "CREATE EXTENSION workload CASCADE" -f "$WL_ROOT/bench/sql/setup.sql" >/dev/null
}
# pre DB FROM N: N READY workloads (keys from FROM), 10k a transaction, 2 sessions
pre() {
	local s c
	for s in 0 1; do
		(for ((c = s; c < ($3 + 9999) / 10000; c += 2)); do
			q -d "$1" -c "SELECT bench.create_range('acme', 'bench', $(($2 + c * 10000)), $(($2 + c * 10000 + 9999)))" >/dev/null
		done) &
	done
	wait
}
echo "== templates: 10k READY; $ROWS SUCCEEDED + 10k READY"
mk t10k; pre t10k 1 10000; q -d t10k -c "VACUUM ANALYZE"
mk tfin; pre tfin 1 "$ROWS"
for s in 0 1; do q -d tfin -c "CALL bench.drain('acme', 'bench', 'drain-$s', 1000)" & done
wait
pre tfin $((ROWS + 1)) 10000; q -d tfin -c "VACUUM ANALYZE"
log=$(mktemp)
ordered=$(mktemp --suffix .pgbench)
trap 'rm -f "$log" "$ordered"; wl_cluster_stop' EXIT
sed "s/'r-' || :wid::text/'r-' || to_char(clock_timestamp(), 'YYYYMMDDHH24MISSUS') || '-' || :client_id/" \
	"$WL_ROOT/bench/scripts/b_claim_start_complete.pgbench" >"$ordered"
grep -q clock_timestamp "$ordered" || { echo "scale_wal.sh: the result id of (b) is not 'r-' || :wid::text" >&2; exit 1; }
chmod 644 "$ordered"
for run in t10k:random tfin:random t10k:random tfin:random t10k:ordered tfin:ordered; do
	tpl=${run%:*} ids=${run#*:} script="$WL_ROOT/bench/scripts/b_claim_start_complete.pgbench"
	[ "$ids" = random ] || script=$ordered
	q -c "DROP DATABASE IF EXISTS run WITH (FORCE)" -c "CREATE DATABASE run TEMPLATE $tpl STRATEGY FILE_COPY"
	q -d run -c "CALL bench.feed('acme', 'bench', $((SECS + 5)), 2000000000)" >/dev/null 2>&1 &
	fpid=$!
	q -d run -c "SELECT pg_stat_reset()" >/dev/null
	read -r lsn0 r0 f0 b0 < <(q -F ' ' -c "SELECT pg_current_wal_insert_lsn(), wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")
	"$WL_PG_BIN/pgbench" -n -M prepared -c 16 -j 2 -T "$SECS" -P 2 \
		-f "$script" run >"$log" 2>&1
	read -r lsn1 r1 f1 b1 < <(q -F ' ' -c "SELECT pg_current_wal_insert_lsn(), wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")
	kill "$fpid" 2>/dev/null || true
	wait "$fpid" 2>/dev/null || true
	echo "== $tpl, result ids $ids: $(sed -n 's/^tps = \([0-9.]*\).*/\1 jobs a second/p' "$log"); WAL records $((r1 - r0)), full-page images $((f1 - f0)), bytes $((b1 - b0))"
	echo "   jobs a second by 2 s: $(awk '/^progress/ { printf "%s ", $4 }' "$log")"
	echo "   full-page images by relation (pg_waldump, $lsn0 to $lsn1):"
	runuser -u postgres -- "$WL_PG_BIN/pg_waldump" -p "$WL_DATA/pg_wal" -s "$lsn0" -e "$lsn1" 2>/dev/null |
		grep -o 'rel [0-9]*/[0-9]*/[0-9]* [a-z ]*blk [0-9]* FPW' | awk '{ print $2 }' | sort | uniq -c | sort -rn | head -n 6 |
		while read -r n rel; do
			echo "     $n $(q -d run -c "SELECT coalesce((SELECT relname FROM pg_class WHERE relfilenode = ${rel##*/}), 'relfilenode ${rel##*/}')")"
		done
	echo "   blocks read (index or table, read, hit):"
	q -d run -c "SELECT '     ' || relname || ' ' || blks_read || ' ' || blks_hit FROM (
	        SELECT indexrelname AS relname, idx_blks_read AS blks_read, idx_blks_hit AS blks_hit FROM pg_statio_all_indexes WHERE schemaname = 'workload'
	        UNION ALL SELECT relname, heap_blks_read, heap_blks_hit FROM pg_statio_all_tables WHERE schemaname = 'workload') s
	    WHERE blks_read > 0 ORDER BY blks_read DESC LIMIT 6"
done
