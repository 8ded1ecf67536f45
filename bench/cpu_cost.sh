#!/usr/bin/env bash
# bench/cpu_cost.sh [JOBS]: the CPU cost of the hot path, in instructions per
# job, counted by valgrind's callgrind in a single-user backend (the same count
# whatever else the machine is doing).  One job = workload_claim +
# workload_start + workload_complete; a batch job = one tenth of
# workload_claim(max_items => 10, start => true), committed, then
# workload_complete_many (two transactions, as a worker runs them); a batch of
# 100 alike (JOBS a multiple of 100 counts them all); a bare
# job = the baseline (a) of bench/run.sh: claim, start and complete of a bare
# SKIP LOCKED queue row.
# Prints instructions per job for each, each as the difference between a run
# that does JOBS jobs more and one that does one of its kind only (so start-up
# and the first use of each statement, prepared once a session, are not
# counted), then
# the WAL each kind writes per job on the running server.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
JOBS=${1:-300}
command -v valgrind >/dev/null || { apt-get install -y -qq valgrind >/dev/null; }
wl_install_deps
wl_build
wl_cluster_start
psql -X -q -c "CREATE EXTENSION workload CASCADE" -f "$WL_ROOT/test/include/helpers.sql" \
	-c "SELECT count(t.create('p' || g)) FROM generate_series(1, $((JOBS * 7 + 100))) g" \
	-f "$WL_ROOT/bench/sql/cpu_cost_jobs.sql" \
	-c "INSERT INTO bench.q (id, priority, state, payload) SELECT i, i % 4, 'ready', jsonb_build_object('n', i) FROM generate_series(1, $((JOBS * 3 + 100))) i" \
	-c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -m fast -w stop >/dev/null

count() {	# count SQL-file: total instructions of a single-user backend running it
	local out="$WL_TMP/cg.$RANDOM"
	runuser -u postgres -- valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$WL_PG_BIN/postgres" --single -D "$WL_DATA" -c search_path=public postgres <"$1" >"$out.log" 2>&1
	grep -m3 "ERROR" "$out.log" >&2 || true
	[ -n "${CG_KEEP:-}" ] && cp "$out" "$CG_KEEP.$(basename "$1" .sql)"
	callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
# One transaction per job, as real workers run: a single DO block would keep
# every claimed row's old version alive and make each claim step over all of
# them in the index.
# Each kind is counted against a run that did one unit of that kind already,
# so preparing its statements (once per session) is not counted per job.
lines() {	# lines KIND N: N units of KIND, one transaction a line (a batch: two)
	for i in $(seq 1 "$2"); do
		if [ "$1" = batch ]; then echo "SELECT bench.batch_claim()"; echo "SELECT bench.batch_complete()"
		elif [ "$1" = batch100 ]; then echo "SELECT bench.batch_claim(100)"; echo "SELECT bench.batch_complete()"
		else echo "SELECT bench.$1()"; fi
	done
}
{ lines job 1; } >"$WL_TMP/warm.sql"
{ lines job 1; lines job "$JOBS"; } >"$WL_TMP/single.sql"
{ lines job 1; lines batch 1; } >"$WL_TMP/warm-batch.sql"
{ lines job 1; lines batch 1; lines batch $((JOBS / 10)); } >"$WL_TMP/batch.sql"
{ lines job 1; lines batch100 1; } >"$WL_TMP/warm-batch100.sql"
{ lines job 1; lines batch100 1; lines batch100 $((JOBS / 100)); } >"$WL_TMP/batch100.sql"
{ lines job 1; lines bare_job 1; } >"$WL_TMP/warm-bare.sql"
{ lines job 1; lines bare_job 1; lines bare_job "$JOBS"; } >"$WL_TMP/bare.sql"
base=$(count "$WL_TMP/warm.sql")
single=$(count "$WL_TMP/single.sql")
base_batch=$(count "$WL_TMP/warm-batch.sql")
batched=$(count "$WL_TMP/batch.sql")
base_batch100=$(count "$WL_TMP/warm-batch100.sql")
batched100=$(count "$WL_TMP/batch100.sql")
base_bare=$(count "$WL_TMP/warm-bare.sql")
bare=$(count "$WL_TMP/bare.sql")
echo "instructions per job, claim + start + complete:       $(( (single - base) / JOBS ))"
echo "instructions per job, batches of 10 (claim+complete_many): $(( (batched - base_batch) / (JOBS / 10 * 10) ))"
echo "instructions per job, batches of 100 (claim+complete_many): $(( (batched100 - base_batch100) / (JOBS / 100 * 100) ))"
echo "instructions per job, bare SKIP LOCKED queue (baseline a):  $(( (bare - base_bare) / JOBS ))"

# WAL per job, on the running server: each kind after a CHECKPOINT, so the
# full-page images of the first change to each page are counted, as they are
# after every checkpoint in production.
runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -l "$WL_TMP/server.log" -w start >/dev/null
wal() {	# wal SQL-file jobs: WAL bytes per job
	local lsn
	psql -X -q -c "CHECKPOINT"
	lsn=$(psql -X -Atc "SELECT pg_current_wal_insert_lsn()")
	psql -X -q -v ON_ERROR_STOP=1 -f "$1" >/dev/null
	psql -X -Atc "SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn') / $2)"
}
lines job "$JOBS" | sed 's/$/;/' >"$WL_TMP/single-wal.sql"
lines batch $((JOBS / 10)) | sed 's/$/;/' >"$WL_TMP/batch-wal.sql"
lines bare_job "$JOBS" | sed 's/$/;/' >"$WL_TMP/bare-wal.sql"
echo "WAL bytes per job (after a CHECKPOINT), claim + start + complete: $(wal "$WL_TMP/single-wal.sql" "$JOBS")"
echo "WAL bytes per job (after a CHECKPOINT), batches of 10:           $(wal "$WL_TMP/batch-wal.sql" $((JOBS / 10 * 10)))"
echo "WAL bytes per job (after a CHECKPOINT), bare queue:              $(wal "$WL_TMP/bare-wal.sql" "$JOBS")"
