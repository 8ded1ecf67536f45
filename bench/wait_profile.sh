#!/usr/bin/env bash
# bench/wait_profile.sh TEMPLATE [SECONDS] [CLIENTS...]: what the backends of
# (c100) wait for, at each client count.  On the running server (PGHOST,
# PGPORT, PGUSER set; the bench settings of bench/run.sh), for each client
# count in CLIENTS ("16 64" by default) clones TEMPLATE (a database with the
# extension, bench/sql/setup.sql and READY workloads of acme/bench, as
# bench/run.sh's templates are), runs (c100)
# (bench/scripts/c_claim100_complete_many.pgbench) for SECONDS (20 by
# default) and, from 4 s after its start, samples every 0.1 s (50 samples,
# one psql session) the wait event of each pgbench backend
# (pg_stat_activity) and the relation extension locks held and awaited
# (pg_locks, locktype 'extend').  Prints, per client count, the jobs
# completed a second over the sampling window, each wait event's share of
# the backends' samples, and the extension locks by relation: in how many
# samples one was held, and how many backends were waiting in all.  On 2
# cores most backends wait for something at any time; what this shows is
# which resource they queue for.  Not part of the test command.
set -euo pipefail
TEMPLATE=${1:?usage: bench/wait_profile.sh TEMPLATE [SECONDS] [CLIENTS...]}
SECONDS_RUN=${2:-20}
shift $(($# < 2 ? $# : 2))
CLIENTS=${*:-16 64}
HERE=$(cd "$(dirname "$0")" && pwd)
DB=wait_profile_run
SAMPLES=50

q() { PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
done_jobs() { q -d "$DB" -c "SELECT count(*) FROM workload.runs WHERE result_application_id IS NOT NULL"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$SAMPLES"); do
	echo "SELECT 'W|' || coalesce(wait_event_type || ':' || wait_event, 'on CPU or runnable')
	        FROM pg_stat_activity WHERE datname = '$DB' AND application_name = 'pgbench';"
	echo "SELECT 'L|' || l.relation::regclass || '|' || count(*) FILTER (WHERE l.granted) || '|' ||
	             count(*) FILTER (WHERE NOT l.granted)
	        FROM pg_locks l WHERE l.locktype = 'extend' AND l.database =
	             (SELECT oid FROM pg_database WHERE datname = current_database())
	       GROUP BY l.relation;"
	echo "\\! sleep 0.1"
done >"$work/sample.sql"

for n in $CLIENTS; do
	q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
		-c "CREATE DATABASE $DB TEMPLATE $TEMPLATE STRATEGY FILE_COPY" -c "CHECKPOINT"
	pgbench -n -M prepared -c "$n" -j 2 -T "$SECONDS_RUN" \
		-f "$HERE/scripts/c_claim100_complete_many.pgbench" "$DB" >"$work/pgbench.log" 2>&1 &
	pid=$!
	sleep 4
	j0=$(done_jobs)
	t0=$(date +%s.%N)
	q -d "$DB" -f "$work/sample.sql" >"$work/samples"
	j1=$(done_jobs)
	t1=$(date +%s.%N)
	wait "$pid" || { cat "$work/pgbench.log"; exit 1; }
	echo "## $n clients: $(awk -v j=$((j1 - j0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", j / (b - a) }') jobs/s while sampled ($SAMPLES samples)"
	echo
	echo "| wait event of a pgbench backend | share of samples |"
	echo "|---|---:|"
	awk -F '|' '$1 == "W" { c[$2]++; t++ } END { for (k in c) printf "| %s | %.1f%% |\n", k, 100 * c[k] / t }' \
		"$work/samples" | sort -t '|' -k3 -rn
	echo
	echo "| relation extended | samples with the lock held | backends waiting, summed over samples |"
	echo "|---|---:|---:|"
	awk -F '|' '$1 == "L" { h[$2] += ($3 > 0); w[$2] += $4 } END { for (k in h) printf "| %s | %d | %d |\n", k, h[k], w[k] }' \
		"$work/samples" | sort -t '|' -k4 -rn
	echo
done
q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
