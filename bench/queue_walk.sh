#!/usr/bin/env bash
# bench/queue_walk.sh [SCRIPT] [SECONDS] [CLIENTS...]: how many queue entries a
# claim reads to take what it takes, per claimed job, at each number of
# clients: the entries queue_ready_idx returned (idx_tup_read: rows that
# others had taken or were taking, the ones passed over, and the ones taken)
# and the queue rows fetched from the heap (idx_tup_fetch).  What a claim
# steps over costs a heap fetch and a lock of a page every claimer writes,
# and it grows with the sessions claiming at once.
# Runs SCRIPT (default bench/scripts/c_claim10_complete_many.pgbench) with
# pgbench for SECONDS (default 10) on a fresh copy of a store of 200,000 READY
# workloads, on a throwaway cluster with the library preloaded (the shared
# fronts of claim_resume.c need it).  Run as root.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
script=${1:-$WL_ROOT/bench/scripts/c_claim10_complete_many.pgbench}
seconds=${2:-10}
shift $(($# < 2 ? $# : 2))
clients=${*:-16 64}
wl_install_deps
wl_build
wl_cluster_start "shared_preload_libraries = 'workload'" "shared_buffers = '1GB'" \
	"max_connections = 100" "max_wal_size = '8GB'" "checkpoint_timeout = '30min'"
export PGOPTIONS="-c client_min_messages=warning"
psql=(psql -qXAt -v ON_ERROR_STOP=1)
"${psql[@]}" -c "CREATE DATABASE walk_tpl"
"${psql[@]}" -d walk_tpl -c "SET client_min_messages = warning" -c "CREATE EXTENSION workload CASCADE" \
	-f "$WL_ROOT/bench/sql/setup.sql" \
	-c "SELECT bench.create_range('acme', 'bench', 1, 100000)" \
	-c "SELECT bench.create_range('acme', 'bench', 100001, 200000)" >/dev/null
echo "$(basename "$script"), $seconds s a run, commit $(git -C "$WL_ROOT" rev-parse --short HEAD)"
echo
echo "| clients | jobs/s | queue entries read a job | queue rows fetched a job | index scans a job |"
echo "|---:|---:|---:|---:|---:|"
for n in $clients; do
	"${psql[@]}" -c "DROP DATABASE IF EXISTS walk_run" -c "CREATE DATABASE walk_run TEMPLATE walk_tpl STRATEGY file_copy"
	"${psql[@]}" -d walk_run -c "VACUUM ANALYZE" -c "SELECT pg_stat_reset()" >/dev/null
	"$WL_PG_BIN/pgbench" -n -M prepared -c "$n" -j 2 -T "$seconds" -f "$script" walk_run >/dev/null 2>&1
	sleep 1	# the backends' statistics are flushed when they exit
	"${psql[@]}" -d walk_run -F ' ' -c "
		SELECT round(j / $seconds.0), round(i.idx_tup_read / j::numeric, 1), round(i.idx_tup_fetch / j::numeric, 1),
		       round(i.idx_scan / j::numeric, 2)
		FROM (SELECT count(*) AS j FROM workload.results) r, pg_stat_user_indexes i
		WHERE i.schemaname = 'workload' AND i.indexrelname = 'queue_ready_idx'" |
		while read -r rate read fetched scans; do echo "| $n | $rate | $read | $fetched | $scans |"; done
done
