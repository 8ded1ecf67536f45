#!/usr/bin/env bash
# bench/tick_cost.sh TEMPLATE [ROUNDS [SECONDS]]: what a maintenance pass a
# second costs the hot path.  On the running server (PGHOST, PGPORT, PGUSER
# set; the bench settings of bench/run.sh; the extension NOT preloaded, so no
# background tick runs), each round clones TEMPLATE (a database with the
# extension, bench/sql/setup.sql and READY workloads of acme/bench, made with
# bench.create_range and analyzed: as bench/run.sh's templates are) twice and
# runs (c100) (bench/scripts/c_claim100_complete_many.pgbench, 16 clients)
# on each: once with `SELECT workload_tick()` called every second from another
# session (as the background worker would, but each call a new session, so
# its plans are made each time), once without.  Prints, for each run, the
# jobs a second counted from the run rows between 2 s and 2 s + SECONDS - 4,
# and each tick's duration.  Interleaved, so the machine's drift falls on
# both.  Not part of the test command.
set -euo pipefail
TEMPLATE=${1:?usage: bench/tick_cost.sh TEMPLATE [ROUNDS [SECONDS]]}
ROUNDS=${2:-2}
SECONDS_RUN=${3:-14}
HERE=$(cd "$(dirname "$0")" && pwd)
DB=tick_cost_run

one() {	# one WITH_TICK(0|1)
	local c0 c1 t0 t1 s e ticks="" pid
	psql -X -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
		-c "CREATE DATABASE $DB TEMPLATE $TEMPLATE STRATEGY FILE_COPY"
	pgbench -n -M prepared -c 16 -j 2 -T "$SECONDS_RUN" \
		-f "$HERE/scripts/c_claim100_complete_many.pgbench" "$DB" >/dev/null 2>&1 &
	pid=$!
	sleep 2
	c0=$(psql -X -Atd "$DB" -c "SELECT count(*) FROM workload.runs WHERE result_application_id IS NOT NULL")
	t0=$(date +%s.%N)
	if [ "$1" = 1 ]; then
		for ((i = 0; i < SECONDS_RUN - 4; i++)); do
			s=$(date +%s%N)
			psql -X -qAtd "$DB" -c "SELECT workload_tick()->>'more'" >/dev/null
			e=$(date +%s%N)
			ticks="$ticks $(((e - s) / 1000000))"
			sleep 0.9
		done
	else
		sleep $((SECONDS_RUN - 4))
	fi
	c1=$(psql -X -Atd "$DB" -c "SELECT count(*) FROM workload.runs WHERE result_application_id IS NOT NULL")
	t1=$(date +%s.%N)
	wait "$pid" || true
	awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v w="$1" -v k="$ticks" \
		'BEGIN { printf "tick=%s jobs/s %.0f%s\n", w, (c1 - c0) / (t1 - t0), (k == "" ? "" : "  tick ms:" k) }'
}

for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r"
	one 1
	one 0
done
psql -X -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
