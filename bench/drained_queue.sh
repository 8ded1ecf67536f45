#!/usr/bin/env bash
# bench/drained_queue.sh TEMPLATE [SECONDS]: what a claim costs once a large
# queue has been drained and until vacuum.  A claim that finds fewer than
# max_items from its points scans the queue from its start (claim_resume.c);
# the entries of every row claimed since workload.queue was last vacuumed are
# still in queue_ready_idx (dead, not removed), so on an empty queue each such
# claim reads all of them.  On the running server (PGHOST, PGPORT, PGUSER set;
# the bench settings of bench/run.sh, autovacuum on), clones TEMPLATE (a
# database with the extension, bench/sql/setup.sql and READY workloads of
# acme/bench, as bench/run.sh's templates are) and runs (c100)
# (bench/scripts/c_claim100_complete_many.pgbench, 16 clients, SECONDS, 140 by
# default): the clients drain the queue and then go on claiming from it empty.
# Prints pgbench's transactions a second every 2 s (one transaction: a claim,
# and a completion when it claimed any) and, each second, the queue's rows, the
# dead rows statistics count and the time of the last autovacuum of
# workload.queue.  Not part of the test command.
set -euo pipefail
TEMPLATE=${1:?usage: bench/drained_queue.sh TEMPLATE [SECONDS]}
SECONDS_RUN=${2:-140}
HERE=$(cd "$(dirname "$0")" && pwd)
DB=drained_queue_run

psql -X -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
	-c "CREATE DATABASE $DB TEMPLATE $TEMPLATE STRATEGY FILE_COPY" -c "CHECKPOINT"
log=$(mktemp)
stats=$(mktemp)
trap 'rm -f "$log" "$stats"' EXIT
pgbench -n -M prepared -c 16 -j 2 -T "$SECONDS_RUN" -P 2 \
	-f "$HERE/scripts/c_claim100_complete_many.pgbench" "$DB" >"$log" 2>&1 &
pid=$!
t0=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
	psql -X -qAt -d "$DB" -c "SELECT $(date +%s) - $t0, (SELECT count(*) FROM workload.queue),
	       n_dead_tup, coalesce(to_char(last_autovacuum, 'HH24:MI:SS'), '-'), to_char(now(), 'HH24:MI:SS')
	    FROM pg_stat_user_tables WHERE relid = 'workload.queue'::regclass" >>"$stats" 2>/dev/null || true
	sleep 1
done
wait "$pid" || true
echo "pgbench, 16 clients, (c100), $SECONDS_RUN s: transactions a second, every 2 s (second: tps)"
awk '/^progress:/ { printf "%s: %d  ", $2, $4; if (++n % 8 == 0) print "" } END { print "" }' "$log"
echo
echo "workload.queue each second (second | rows | dead rows | last autovacuum | time)"
awk -F '|' 'NR == 1 || $2 != r || $4 != a { print; r = $2; a = $4 }' "$stats"
psql -X -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
