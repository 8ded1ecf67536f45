#!/usr/bin/env bash
# bench/held_scan.sh TEMPLATE [ROUNDS]: what the claims' scans from the start of
# the queue cost while a snapshot is held, with workload.claim_full_scan_interval
# at 0 (each session scans from the start on one claim in 64) and as installed
# (100 ms: one session of the server at a time).  On the running server
# (PGHOST, PGPORT, PGUSER set; the bench settings of bench/run.sh; the library
# in shared_preload_libraries, without which the setting does nothing, and
# workload.database = 'held_scan_run', so the background tick serves the run
# and not the template), each round clones TEMPLATE (a database with the
# extension, bench/sql/setup.sql and READY workloads of acme/bench, made with
# bench.create_range and analyzed, as bench/run.sh's templates are) once for
# each setting and runs (b) (bench/scripts/b_claim_start_complete.pgbench, 16
# clients, 70 s); another session holds a REPEATABLE READ snapshot from 15 s
# to 55 s.  Prints, for each run, pgbench's jobs a second every 5 s, and the
# entries of queue_ready_idx the scans read (pg_stat_user_indexes.idx_tup_read:
# an entry whose row may still be seen by a snapshot cannot be marked dead and
# is read again by each scan that passes it) per job completed while the
# snapshot was held.  Interleaved, so the machine's drift falls on both.  Not
# part of the test command.
set -euo pipefail
TEMPLATE=${1:?usage: bench/held_scan.sh TEMPLATE [ROUNDS]}
ROUNDS=${2:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
DB=held_scan_run
STATS="SELECT (SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelname = 'queue_ready_idx'),
              (SELECT count(*) FROM workload.runs WHERE finished_at IS NOT NULL)"

one() {	# one INTERVAL_MS
	local log i0 j0 i1 j1 pid
	log=$(mktemp)
	psql -X -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
		-c "CREATE DATABASE $DB TEMPLATE $TEMPLATE STRATEGY FILE_COPY"
	PGOPTIONS="-c workload.claim_full_scan_interval=$1" pgbench -n -M prepared -c 16 -j 2 -T 70 -P 5 \
		-f "$HERE/scripts/b_claim_start_complete.pgbench" "$DB" >"$log" 2>&1 &
	pid=$!
	sleep 15
	read -r i0 j0 < <(psql -X -qAt -F ' ' -d "$DB" -c "$STATS")
	psql -X -qAt -d "$DB" -c "BEGIN ISOLATION LEVEL REPEATABLE READ" \
		-c "SELECT count(*) FROM workload.workloads" -c "SELECT pg_sleep(40)" -c "COMMIT" >/dev/null
	read -r i1 j1 < <(psql -X -qAt -F ' ' -d "$DB" -c "$STATS")
	wait "$pid" || true
	echo "claim_full_scan_interval=$1 ms"
	echo "  jobs/s each 5 s (snapshot held 15-55 s): $(awk '/^progress:/ { printf "%s ", int($4) }' "$log")"
	awk -v i="$((i1 - i0))" -v j="$((j1 - j0))" \
		'BEGIN { printf "  while held: %d jobs, %d queue_ready_idx entries read, %.1f a job\n", j, i, i / j }'
	rm -f "$log"
}

for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r"
	if [ $((r % 2)) = 1 ]; then one 0; one 100; else one 100; one 0; fi
done
psql -X -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
