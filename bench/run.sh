#!/usr/bin/env bash
# bench/run.sh: the workload benchmark on a throwaway cluster (as root on Debian 12).
#
#   bench/run.sh [compare|scale|snapshot|latency|memory|profile|anchors|all] [--quick] [options]
#
# compare (default)  (a) bare SKIP LOCKED queue, (b) workload claim/start/complete,
#                    (c) workload claim x10 + start, complete_many, (x) (c) with each
#                    item's execution context (context => true); N clients each,
#                    interleaved rounds; jobs/s medians, min-max, ratios to (a).
# scale              (b) at 16 clients: 10k vs 1M READY, 1M finished workloads left
#                    in the tables, and a REPEATABLE READ snapshot held for 60 s.
# snapshot           only the held snapshot of scale: each claim from the session's
#                    point in the queue (the default), and from the queue's start.
# latency            create-commit -> claim latency of an idle LISTENing worker.
# memory             backend memory over 200k hot-path calls in one session.
# profile            (a), (b), (c) at 16 clients once each, with pg_stat_statements
#                    (track = all), sampled wait events and WAL per job.
# all                compare, scale, latency and memory, one results file.
# anchors            (a), (c), claim x100 + complete_many, pg-boss (batch of 10) and
#                    Graphile Worker (local queue, batched completion) at 16 and 64;
#                    installs both from npm into bench/npm (bench/anchors.sh).
#                    Optional: not part of `all` nor of the test command.
#
# Options: --quick, --rounds R, --seconds T (scale's default is 30, compare's 10),
# --clients "1 4 16 64", --preload P,
# --rows N (scale), --hold S, --before S and --after S (scale snapshot), --control (snapshot:
# each round runs the same clients with no snapshot held instead of the queue-start claim), --samples K (latency),
# --calls C (memory), --name NAME, --no-build, --set 'NAME = VALUE' (a server
# setting added to the ones below, for every system; repeatable), --huge-pages
# (reserves 2 MB pages for shared memory, vm.nr_hugepages, for the run, and runs
# the server with huge_pages = on; the default of anchors and compare, where
# --no-huge-pages turns it off).  See bench/README.md.
# Writes bench/results/<date>-<name>.md and prints the same tables.
set -euo pipefail
shopt -s inherit_errexit
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH="$WL_ROOT/bench"
. "$WL_ROOT/scripts/cluster.sh"
COMMAND_LINE="bench/run.sh $*"

# ---------------------------------------------------------------- options
cmd=compare
case "${1:-}" in
	compare|scale|snapshot|latency|memory|profile|anchors|all) cmd=$1; shift ;;
esac
quick=0 build=1 name="" control=0 huge=
rounds="" seconds="" clients="" preload="" rows="" hold="" before="" after="" samples="" calls=""
extra_settings=()
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) quick=1 ;;
		--rounds) rounds=$2; shift ;;
		--seconds) seconds=$2; shift ;;
		--clients) clients=$2; shift ;;
		--preload) preload=$2; shift ;;
		--rows) rows=$2; shift ;;
		--hold) hold=$2; shift ;;
		--before) before=$2; shift ;;
		--after) after=$2; shift ;;
		--samples) samples=$2; shift ;;
		--calls) calls=$2; shift ;;
		--name) name=$2; shift ;;
		--set) extra_settings+=("$2"); shift ;;
		--no-build) build=0 ;;
		--control) control=1 ;;
		--huge-pages) huge=1 ;;
		--no-huge-pages) huge=0 ;;
		-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
		*) echo "unknown option: $1 (see bench/README.md)" >&2; exit 2 ;;
	esac
	shift
done
# anchors and compare: every system on the server as its operator would run it
# (huge pages).  With 4 kB pages at 64 clients on 2 cores every system, the bare
# queue too, lost 8-36% of its 16-client rate to the kernel's page faults and
# page tables (bench/README.md, "bench/run.sh").
[ -n "$huge" ] || { case "$cmd" in anchors|compare) huge=1 ;; *) huge=0 ;; esac; }
if [ "$cmd" = anchors ]; then	# every system gets the same preload; the fastest must not run dry
	if [ "$quick" = 1 ]; then : "${clients:=16}" "${preload:=120000}"; else : "${clients:=16 64}" "${preload:=600000}"; fi
fi
# scale's window: 30 s unless --seconds says otherwise.  A fresh clone's rate
# climbs over its first ~10 s on every store (bench/scale_wal.sh shows it), so a
# 10 s window measures that climb more than the store's size.
scale_seconds=${seconds:-30}
if [ "$quick" = 1 ]; then
	scale_seconds=${seconds:-5}
	: "${rounds:=1}" "${seconds:=5}" "${clients:=1 16}" "${preload:=60000}"
	: "${rows:=50000}" "${hold:=15}" "${samples:=50}" "${calls:=60000}"
else
	: "${rounds:=3}" "${seconds:=10}" "${clients:=1 4 16 64}" "${preload:=200000}"
	: "${rows:=1000000}" "${hold:=60}" "${samples:=200}" "${calls:=200000}"
fi
[ -n "$name" ] || { name=$cmd; [ "$quick" = 1 ] && name="$name-quick"; }

max_clients=0
for n in $clients; do [ "$n" -gt "$max_clients" ] && max_clients=$n; done
[ "$max_clients" -ge 64 ] || max_clients=64

# Only the profile run adds these (statement statistics cost a little).
PROFILE_SETTINGS=(
	"shared_preload_libraries = 'workload, pg_stat_statements'"
	"pg_stat_statements.track = all"
)
# The benchmark's server settings, written here, and nowhere else.
SETTINGS=(
	"fsync = on"
	"synchronous_commit = on"
	"shared_buffers = 1GB"
	"max_connections = $((max_clients + 36))"
	"max_wal_size = 8GB"
	"checkpoint_timeout = 30min"
	"autovacuum = on"
	# as a server that runs the tick would: the claims of its sessions share
	# their points (claim_resume.c)
	"shared_preload_libraries = 'workload'"
	${extra_settings[@]+"${extra_settings[@]}"}
)
# --huge-pages: the shared memory in 2 MB pages, as PostgreSQL's documentation
# advises for a large shared_buffers.  Each backend maps shared memory page by
# page as it first touches it; with 4 kB pages that is a page fault per page,
# and on a virtual machine whose faults are dear (AMD EPYC under a
# paravirtualised kernel, 28% of all samples in the kernel) the batched
# variants ran a third as fast.  The reservation
# is the machine's (vm.nr_hugepages): put back as it was when the run ends.
HUGE_WAS=""
huge_restore() { [ -z "$HUGE_WAS" ] || sysctl -q -w vm.nr_hugepages="$HUGE_WAS" || true; }
if [ "$huge" = 1 ]; then
	HUGE_WAS=$(cat /proc/sys/vm/nr_hugepages)
	trap huge_restore EXIT	# until the cluster's own trap (main) names it too
	# 1 GB of buffers and the rest of shared memory, with room; a machine that
	# cannot give them runs without (the results' settings line says which)
	if sysctl -q -w vm.nr_hugepages=$((HUGE_WAS + 640)) 2>/dev/null &&
		[ "$(cat /proc/sys/vm/nr_hugepages)" -ge $((HUGE_WAS + 640)) ]; then
		SETTINGS+=("huge_pages = on")
	else
		echo "warning: could not reserve huge pages (vm.nr_hugepages): running without" >&2
		huge_restore
	fi
fi

PGBENCH="$WL_PG_BIN/pgbench"
NPROC=$(nproc)
PAR=$(( NPROC < 2 ? 2 : (NPROC > 4 ? 4 : NPROC) ))	# preloading sessions
TENANT=acme
APP=bench

# ---------------------------------------------------------------- helpers
q() { PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
epoch() { date +%s.%N; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
sleep_until() {
	local d
	d=$(awk -v a="$1" -v b="$(epoch)" 'BEGIN { d = a - b; if (d < 0) d = 0; printf "%.3f", d }')
	sleep "$d"
}
say() { echo "$*" >&2; }

OUT=""		# the markdown being written (a temp file until the end)
md() { printf '%s\n' "$*" >>"$OUT"; }
# show: print to the terminal and write to the results file
show() { printf '%s\n' "$*" | tee -a "$OUT"; }

has_complete_many() {
	[ "$(q -d "$1" -c "SELECT to_regprocedure('workload_complete_many(text, jsonb)') IS NOT NULL")" = t ]
}
has_claim_context() {
	[ "$(q -d "$1" -c "SELECT to_regprocedure('workload_claim(text, text[], text, text, interval, integer, boolean, boolean)') IS NOT NULL")" = t ]
}

# new_db DB: an empty database with the extension and the bench helpers.
new_db() {
	q -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"
	q -c "CREATE DATABASE $1"
	q -d "$1" -c "CREATE EXTENSION workload CASCADE"
	q -d "$1" -f "$BENCH/sql/setup.sql"
}

# clone TEMPLATE DB: a fresh copy (FILE_COPY checkpoints, so every measurement
# starts from a clean checkpoint and with no dirty buffers of the last one).
clone() {
	q -c "DROP DATABASE IF EXISTS $2 WITH (FORCE)"
	q -c "CREATE DATABASE $2 TEMPLATE $1 STRATEGY FILE_COPY"
}
drop_db() { q -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"; }

# preload DB APP FROM COUNT: COUNT READY workloads (keys APP-FROM..), 10k per
# transaction, PAR sessions in parallel.  Prints the seconds it took.
preload() {
	local db=$1 app=$2 from=$3 count=$4 chunk=10000 t0 s pids=() c lo hi nchunks
	t0=$(epoch)
	nchunks=$(( (count + chunk - 1) / chunk ))
	for ((s = 0; s < PAR; s++)); do
		(
			for ((c = s; c < nchunks; c += PAR)); do
				lo=$((from + c * chunk)); hi=$((lo + chunk - 1))
				[ "$hi" -lt $((from + count - 1)) ] || hi=$((from + count - 1))
				q -d "$db" -c "SELECT bench.create_range('$TENANT', '$app', $lo, $hi)" >/dev/null
			done
		) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	fsub "$(epoch)" "$t0"
}

# drain DB APP: every READY workload of APP claimed, started and completed
# (1000 per transaction, PAR sessions).  Prints the seconds it took.
drain() {
	local db=$1 app=$2 t0 s pids=()
	t0=$(epoch)
	for ((s = 0; s < PAR; s++)); do
		q -d "$db" -c "CALL bench.drain('$TENANT', '$app', 'bench-drain-$s', 1000)" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	fsub "$(epoch)" "$t0"
}

# wait_clients DB N: until N pgbench connections are in DB (at most 20 s).
wait_clients() {
	local i
	for ((i = 0; i < 400; i++)); do
		[ "$(q -d postgres -c "SELECT count(*) >= $2 FROM pg_stat_activity
			WHERE datname = '$1' AND application_name = 'pgbench'")" = t ] && return 0
		sleep 0.05
	done
	say "warning: not all $2 pgbench clients connected to $1"
}

# The completed-jobs counters, one per variant.
count_sql() {
	case "$1" in
		a) echo "SELECT count(*), extract(epoch FROM statement_timestamp()) FROM bench.q WHERE state = 'done'" ;;
		# a result is on its run row: counted there, not through the
		# view workload.results, whose join with workload_rows, sampled every
		# second, took a core from the workers as the results grew
		*) echo "SELECT count(*), extract(epoch FROM statement_timestamp()) FROM workload.runs WHERE result_application_id IS NOT NULL" ;;
	esac
}
ready_sql() {
	case "$1" in
		a) echo "SELECT count(*) FROM bench.q WHERE state = 'ready'" ;;
		*) echo "SELECT count(*) FROM workload.workloads WHERE tenant_id = '$TENANT' AND application_id = '$APP' AND state = 'READY'" ;;
	esac
}
script_of() {
	case "$1" in
		a) echo "$BENCH/scripts/a_claim_start_complete.pgbench" ;;
		b) echo "$BENCH/scripts/b_claim_start_complete.pgbench" ;;
		c) echo "$BENCH/scripts/c_claim10_complete_many.pgbench" ;;
		x) echo "$BENCH/scripts/x_claim10_context_complete_many.pgbench" ;;
	esac
}

wait_no_backends() {
	local i
	for ((i = 0; i < 200; i++)); do
		# the clients' backends; the background tick stays connected to the database
		[ "$(q -d postgres -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$1'
			AND backend_type = 'client backend'")" = 0 ] && return 0
		sleep 0.05
	done
	say "warning: backends still connected to $1"
}

# stop_client PID: ends a pgbench after its window.  SIGTERM ends it at once
# (its open transactions are rolled back by their backends; SIGINT would not:
# a background job of a script ignores it); its exit status from that signal
# is not a failure, any other status is.
stop_client() {
	local rc=0
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 143 ] || return "$rc"
}

# measure VARIANT N SECONDS DB TAG: runs pgbench and prints
# "jobs window_seconds jobs_per_s ready_left flags".  jobs/s is the change
# in the completed-jobs count between two samples taken by another session,
# 1 s after all clients connected and SECONDS - 0.5 s after they connected,
# divided by the server time between them.  pgbench's tps (script runs) is
# not used.  pgbench counts -T from before it connects (64 connections can
# take seconds), so it runs longer and is stopped after the second sample
# (stop_client): with -T SECONDS it could end inside the window.
measure() {
	local v=$1 n=$2 secs=$3 db=$4 tag=$5 log pid rc=0 j t_conn c0 e0 c1 e1 left flags="" warm=1
	log="$LOGDIR/$tag.log"
	j=$(( n < NPROC ? n : NPROC ))
	"$PGBENCH" -n -M prepared -c "$n" -j "$j" -T "$((secs + 30))" -f "$(script_of "$v")" "$db" >"$log" 2>&1 &
	pid=$!
	wait_clients "$db" "$n"
	t_conn=$(epoch)
	sleep_until "$(awk -v a="$t_conn" -v w="$warm" 'BEGIN { printf "%.3f", a + w }')"
	read -r c0 e0 < <(q -F ' ' -d "$db" -c "$(count_sql "$v")")
	sleep_until "$(awk -v a="$t_conn" -v s="$secs" 'BEGIN { printf "%.3f", a + s - 0.5 }')"
	kill -0 "$pid" 2>/dev/null || flags="${flags}client-ended-before-window-end,"
	read -r c1 e1 < <(q -F ' ' -d "$db" -c "$(count_sql "$v")")
	stop_client "$pid" || rc=$?
	left=$(q -d "$db" -c "$(ready_sql "$v")")
	[ "$left" -gt 0 ] || flags="${flags}DRY,"
	[ "$rc" = 0 ] || flags="${flags}pgbench-exit-$rc,"
	grep -qE 'aborted|ERROR' "$log" && flags="${flags}errors,"
	awk -v c0="$c0" -v c1="$c1" -v e0="$e0" -v e1="$e1" -v l="$left" -v f="${flags%,}" \
		'BEGIN { printf "%d %.3f %.1f %d %s\n", c1 - c0, e1 - e0, (c1 - c0) / (e1 - e0), l, (f == "" ? "-" : f) }'
}

# ---------------------------------------------------------------- environment
environment() {
	local commit dirty
	commit=$(git -C "$WL_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
	dirty=$(git -C "$WL_ROOT" status --porcelain 2>/dev/null | wc -l)
	md "## Environment"
	md ""
	md "- command: \`$COMMAND_LINE\` (as root, from the repository root)"
	md "- git commit: \`$commit\`$([ "$dirty" -gt 0 ] && echo " plus $dirty uncommitted paths in the working tree")"
	md "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	if [ "$build" = 1 ]; then
		md "- extension: built from this working tree and installed by this run"
	else
		md "- extension: as installed before the run (\`--no-build\`; workload.so of $(date -u -r "$("$WL_PG_BIN/pg_config" --pkglibdir)/workload.so" '+%Y-%m-%d %H:%M:%S UTC'))"
	fi
	md "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1), $NPROC cores; RAM $(free -g | awk '/^Mem:/ { print $2 }') GB; kernel $(uname -r)"
	md "- load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg)"
	md "- PostgreSQL: $(q -c 'SELECT version()')"
	md "- pgbench: $("$PGBENCH" --version)"
	md "- settings (bench/run.sh): $(printf '%s; ' "${SETTINGS[@]}" | sed 's/; $//')"
	md "- server reports: $(q -c "SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ', ' ORDER BY name) FROM pg_settings
		WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'huge_pages', 'max_connections', 'wal_level', 'max_wal_size', 'checkpoint_timeout', 'autovacuum', 'full_page_writes', 'wal_sync_method')")"
	md ""
}

# compare_template WHAT: the template database (a), (b) and (c) are cloned
# from: $preload READY workloads and $preload queue rows.  Prints the seconds
# the workloads took to preload.
compare_template() {
	say "== $1: preloading $preload workloads and $preload queue rows into the template"
	new_db bench_tpl >/dev/null
	preload bench_tpl "$APP" 1 "$preload"
	q -d bench_tpl -c "SELECT bench.q_fill(1, $preload)" >/dev/null
}

# ---------------------------------------------------------------- profile
# profile: where one job's time goes, for (a), (b) and (c) at one N (16, or
# the one --clients names): statements from pg_stat_statements with
# track = all (so the statements our C runs through SPI are there too), wait
# events sampled from pg_stat_activity every 50 ms, and WAL per job from
# pg_stat_wal.  One measurement each; the extra settings are only this run's.
run_profile() {
	local n=16 v db=bench_run samples jobs0 jobs1 jobs t_pre pid
	case "$clients" in *" "*) ;; *) n=$clients ;; esac
	show "## Profile: where a job's time goes, N=$n"
	show ""
	t_pre=$(compare_template profile)
	q -d bench_tpl -c "CREATE EXTENSION pg_stat_statements" -c "VACUUM ANALYZE"
	md "Preloaded $preload READY workloads in ${t_pre} s and $preload queue rows. Each variant runs $seconds s on a fresh clone, pgbench -M prepared -c $n. Extra settings of this run: $(printf '%s; ' "${PROFILE_SETTINGS[@]}" | sed 's/; $//'). WAL is the whole server's (\`pg_stat_wal\`), divided by the jobs completed in the run."
	md ""
	for v in a b c; do
		clone bench_tpl "$db"
		jobs0=$(q -d "$db" -c "$(count_sql "$v")" | cut -d '|' -f 1)
		q -d "$db" -c "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
		samples="$LOGDIR/profile-$v.waits"
		: >"$samples"
		"$PGBENCH" -n -M prepared -c "$n" -j "$(( n < NPROC ? n : NPROC ))" -T "$seconds" \
			-f "$(script_of "$v")" "$db" >"$LOGDIR/profile-$v.log" 2>&1 &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			q -d postgres -c "SELECT coalesce(wait_event_type || ':' || wait_event, 'on CPU') FROM pg_stat_activity
				WHERE datname = '$db' AND application_name = 'pgbench' AND state = 'active'" >>"$samples"
			sleep 0.05
		done
		wait "$pid" || say "warning: pgbench exited with $? (see $LOGDIR/profile-$v.log)"
		jobs1=$(q -d "$db" -c "$(count_sql "$v")" | cut -d '|' -f 1)
		jobs=$((jobs1 - jobs0))
		say "   profile ($v): $jobs jobs"
		show "### ($v) $(case $v in a) echo 'bare SKIP LOCKED queue' ;; b) echo 'workload claim / start / complete' ;; c) echo 'workload claim x10 + start, complete_many' ;; esac): $jobs jobs in $seconds s"
		show ""
		show "WAL per job: $(q -c "SELECT round(wal_bytes / $jobs) || ' bytes in ' || round(wal_records::numeric / $jobs, 1)
			|| ' records (' || round(wal_fpi::numeric / $jobs, 2) || ' full-page images)' FROM pg_stat_wal")."
		show ""
		show "Where the pgbench backends were, $(wc -l <"$samples") samples of the active ones:"
		show ""
		show "| wait event | share |"
		show "|---|---:|"
		sort "$samples" | uniq -c | sort -rn | head -n 8 \
			| awk -v t="$(wc -l <"$samples")" '{ c = $1; $1 = ""; sub(/^ /, ""); printf "| %s | %.0f%% |\n", $0, 100 * c / t }' \
			| tee -a "$OUT"
		show ""
		show "The statements that took the most time (top level: what pgbench sent; nested: what it ran inside):"
		show ""
		show "| statement | level | calls per job | mean ms | share of top-level time | WAL bytes per call |"
		show "|---|---|---:|---:|---:|---:|"
		q -d "$db" -F ' | ' -c "WITH s AS (SELECT * FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND query !~* 'pg_stat_statements'),
			t AS (SELECT sum(total_exec_time) AS top FROM s WHERE toplevel)
			SELECT '| \`' || left(regexp_replace(query, '[[:space:]|]+', ' ', 'g'), 90) || '\`', CASE WHEN toplevel THEN 'top' ELSE 'nested' END,
				round(calls::numeric / $jobs, 2), round(mean_exec_time::numeric, 3),
				round(100 * total_exec_time::numeric / nullif(t.top, 0)::numeric, 1) || '%', round(wal_bytes / nullif(calls, 0)) || ' |'
			FROM s, t ORDER BY total_exec_time DESC LIMIT 12" | tee -a "$OUT"
		show ""
		drop_db "$db"
	done
	drop_db bench_tpl
}

# ---------------------------------------------------------------- compare
run_compare() {
	local variants="a b c x" r n v tag res t_pre
	show "## Throughput: (a) bare queue vs (b) workload 3 calls vs (c) workload batch of 10 vs (x) (c) with each execution context"
	show ""
	t_pre=$(compare_template compare)
	q -d bench_tpl -c "VACUUM ANALYZE"
	md "Preloaded $preload READY workloads in ${t_pre} s ($PAR sessions, 10k per transaction) and $preload queue rows into a template database; every measurement runs on a fresh FILE_COPY clone of it."
	if ! has_complete_many bench_tpl; then
		variants="a b"
		show ""
		show "**(c) not run: workload_complete_many() does not exist in this build.**"
	elif ! has_claim_context bench_tpl; then
		variants="a b c"
		show ""
		show "**(x) not run: workload_claim() has no context argument in this build.**"
	fi
	md ""
	md "Parameters: rounds=$rounds, seconds=$seconds per measurement, clients=\"$clients\", pgbench -M prepared -j min(N, $NPROC)."
	md ""
	: >"$LOGDIR/compare.tsv"
	for ((r = 1; r <= rounds; r++)); do
		for n in $clients; do
			for v in $variants; do
				tag="compare-r$r-n$n-$v"
				clone bench_tpl bench_run
				res=$(measure "$v" "$n" "$seconds" bench_run "$tag")
				drop_db bench_run
				say "   round $r  N=$n  ($v)  jobs window_s jobs/s ready_left flags: $res"
				echo "$r $n $v $res" | tr ' ' '\t' >>"$LOGDIR/compare.tsv"
			done
		done
	done
	drop_db bench_tpl
	summarize_compare "$LOGDIR/compare.tsv"
}

summarize_compare() {
	show "| clients | variant | jobs/s median | min–max | ratio to (a) | runs | flags |"
	show "|---:|---|---:|---:|---:|---:|---|"
	q -d postgres <<-SQL | tee -a "$OUT"
	CREATE TEMP TABLE m (round int, clients int, variant text, jobs bigint, secs numeric,
	                     rate numeric, ready_left bigint, flags text);
	\copy m FROM '$1'
	WITH s AS (
	    SELECT clients, variant, percentile_cont(0.5) WITHIN GROUP (ORDER BY rate) AS med,
	           min(rate) AS lo, max(rate) AS hi, count(*) AS runs,
	           string_agg(DISTINCT nullif(flags, '-'), ',') AS flags
	    FROM m GROUP BY clients, variant)
	SELECT format('| %s | %s | %s | %s–%s | %s | %s | %s |', s.clients,
	              CASE s.variant WHEN 'a' THEN '(a) bare SKIP LOCKED, 3 txn/job'
	                             WHEN 'b' THEN '(b) workload claim/start/complete, 3 txn/job'
	                             WHEN 'x' THEN '(x) (c) with context => true, 2 txn/10 jobs'
	                             ELSE '(c) workload claim×10+start, complete_many, 2 txn/10 jobs' END,
	              round(s.med::numeric), round(s.lo), round(s.hi),
	              coalesce(to_char(s.med / nullif(a.med, 0), 'FM990.00'), '–'), s.runs,
	              coalesce(s.flags, ''))
	FROM s LEFT JOIN s a ON a.clients = s.clients AND a.variant = 'a'
	ORDER BY s.clients, s.variant;
	SQL
	md ""
	md "<details><summary>every measurement</summary>"
	md ""
	md "| round | clients | variant | jobs in window | window s | jobs/s | READY left | flags |"
	md "|---:|---:|---|---:|---:|---:|---:|---|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$1" >>"$OUT"
	md ""
	md "</details>"
	md ""
}

# ---------------------------------------------------------------- scale
# feed DB SECONDS KEYBASE: a producer holding the READY depth (background).
feed() {
	q -d "$1" -c "CALL bench.feed('$TENANT', '$APP', $2, $3)" >/dev/null 2>&1 &
	FEED_PID=$!
}

run_scale() {
	local t_10k t_big t_fin_create t_fin_drain r s tpl res n=16 feed_s
	show "## Scale: (b) at $n clients"
	show ""
	say "== scale: building templates (10k READY; $rows READY; $rows SUCCEEDED + 10k READY)"
	new_db scale_10k
	t_10k=$(preload scale_10k "$APP" 1 10000)
	q -d scale_10k -c "VACUUM ANALYZE"
	say "   10k READY: ${t_10k} s"
	new_db scale_big
	t_big=$(preload scale_big "$APP" 1 "$rows")
	q -d scale_big -c "VACUUM ANALYZE"
	say "   $rows READY: ${t_big} s"
	new_db scale_fin
	t_fin_create=$(preload scale_fin "$APP" 1 "$rows")
	say "   $rows created for finishing: ${t_fin_create} s"
	t_fin_drain=$(drain scale_fin "$APP")
	say "   $rows claimed+started+completed: ${t_fin_drain} s"
	preload scale_fin "$APP" $((rows + 1)) 10000 >/dev/null
	q -d scale_fin -c "VACUUM ANALYZE"
	md "Preloading: 10k READY workloads ${t_10k} s; $rows READY ${t_big} s; $rows more created ${t_fin_create} s and driven to SUCCEEDED (claim max_items 1000 with start, then workload_complete each; $PAR sessions) ${t_fin_drain} s. All with $PAR parallel sessions, 10k workloads per transaction."
	md ""
	md "Each measurement runs (b) with $n clients for $scale_seconds s on a fresh FILE_COPY clone of its template, while a producer (bench.feed) creates as many workloads as the workers take, so the READY depth stays where it started (it runs in every scenario, so its cost is the same in each). The default window is 30 s (\`--seconds\` sets it): a fresh clone's rate climbs over its first ~10 s on every store (\`bench/scale_wal.sh\`), and a 10 s window measures mostly that climb."
	md ""
	: >"$LOGDIR/scale.tsv"
	feed_s=$((scale_seconds + 25))
	for ((r = 1; r <= rounds; r++)); do
		for s in 10k big fin; do
			tpl=scale_$s
			clone "$tpl" scale_run
			feed scale_run "$feed_s" 2000000000
			res=$(measure b "$n" "$scale_seconds" scale_run "scale-r$r-$s")
			kill "$FEED_PID" 2>/dev/null || true
			wait "$FEED_PID" 2>/dev/null || true
			drop_db scale_run
			say "   round $r  $s  jobs window_s jobs/s ready_left flags: $res"
			echo "$r $s $res" | tr ' ' '\t' >>"$LOGDIR/scale.tsv"
		done
	done
	drop_db scale_big
	drop_db scale_fin
	show "| scenario | READY at start | other rows | jobs/s median | min–max | ratio to 10k READY | runs | flags |"
	show "|---|---:|---|---:|---:|---:|---:|---|"
	q -d postgres <<-SQL | tee -a "$OUT"
	CREATE TEMP TABLE m (round int, scenario text, jobs bigint, secs numeric, rate numeric,
	                     ready_left bigint, flags text);
	\copy m FROM '$LOGDIR/scale.tsv'
	WITH s AS (
	    SELECT scenario, percentile_cont(0.5) WITHIN GROUP (ORDER BY rate) AS med,
	           min(rate) AS lo, max(rate) AS hi, count(*) AS runs,
	           string_agg(DISTINCT nullif(flags, '-'), ',') AS flags
	    FROM m GROUP BY scenario)
	SELECT format('| %s | %s | %s | %s | %s–%s | %s | %s | %s |',
	              CASE s.scenario WHEN '10k' THEN '10k READY' WHEN 'big' THEN '$rows READY'
	                            ELSE '$rows finished + 10k READY' END,
	              CASE s.scenario WHEN 'big' THEN '$rows' ELSE '10000' END,
	              CASE s.scenario WHEN 'fin' THEN '$rows SUCCEEDED (events, attempts, results)' ELSE '–' END,
	              round(s.med::numeric), round(s.lo), round(s.hi),
	              to_char(s.med / nullif(b.med, 0), 'FM990.00'), s.runs, coalesce(s.flags, ''))
	FROM s LEFT JOIN s b ON b.scenario = '10k'
	ORDER BY array_position(ARRAY['10k', 'big', 'fin'], s.scenario);
	SQL
	md ""
	md "<details><summary>every measurement</summary>"
	md ""
	md "| round | scenario | jobs in window | window s | jobs/s | READY left | flags |"
	md "|---:|---|---:|---:|---:|---:|---|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$LOGDIR/scale.tsv" >>"$OUT"
	md ""
	md "</details>"
	md ""
	snap_template
	run_snapshots
	drop_db scale_snap
	drop_db scale_10k
}

# the held snapshot alone, on its own template (snap_template)
run_snapshot_only() {
	show "## Scale: a held snapshot"
	snap_template
	run_snapshots "$rounds"
	drop_db scale_snap
}

# snap_template: scale_snap, SNAP_ROWS READY workloads (5,000 a second of the
# run: 16 workers have taken up to 4,600 a second on 2 cores, and 3,500 a
# second ran dry), so no run needs a producer
snap_template() {
	local t
	SNAP_ROWS=$(( (${before:-10} + hold + ${after:-30} + 20) * 5000 ))
	new_db scale_snap
	t=$(preload scale_snap "$APP" 1 "$SNAP_ROWS")
	q -d scale_snap -c "VACUUM ANALYZE"
	md ""
	md "Preloading for the held snapshot: $SNAP_ROWS READY workloads ${t} s (no producer runs beside it)."
}

# run_snapshots: the held snapshot with the claim as it is (from each session's
# point in the queue) and, when this build has the setting, with every claim
# scanning from the start of the queue (workload.claim_full_scan_every = 1);
# in the snapshot command, --rounds R times, the order swapped each round.
SNAP_I=0
run_snapshots() {
	local r n=${1:-1} has=""
	[ -z "$(q -d scale_snap -c "LOAD 'workload'; SELECT current_setting('workload.claim_full_scan_every', true)")" ] || has=1
	for ((r = 1; r <= n; r++)); do
		if [ "$control" = 1 ]; then
			if [ $((r % 2)) = 0 ]; then snapshot_control "$r"; fi
			run_snapshot "round $r, each claim from the session's points in the queue (default)" ""
			if [ $((r % 2)) = 1 ]; then snapshot_control "$r"; fi
			continue
		fi
		if [ -n "$has" ] && [ $((r % 2)) = 0 ]; then snapshot_from_start "$r"; fi
		run_snapshot "round $r, each claim from the session's points in the queue (default)" ""
		if [ -n "$has" ] && [ $((r % 2)) = 1 ]; then snapshot_from_start "$r"; fi
	done
}
# the control (--control): the same clients on a clone of the same template, the
# same phases, and no snapshot held: what the rate does over the run without one
snapshot_control() {
	run_snapshot "round $1, control: no snapshot held (the phases are the same seconds of the run)" "" nohold
}
snapshot_from_start() {
	run_snapshot "round $1, every claim from the start of the queue (workload.claim_full_scan_every = 1)" \
		"-c workload.claim_full_scan_every=1"
}

# run_snapshot LABEL PGOPTIONS: (b) at 16 clients (their sessions started with
# PGOPTIONS), on a clone of scale_snap (snap_template: enough READY workloads
# for the whole run, no producer); after --before seconds (10) another
# session opens a REPEATABLE READ snapshot and holds it for --hold seconds; then
# --after seconds more (30).  Not on the 10k template with a producer
# (bench.feed): on 2 cores one producing session makes fewer workloads than
# 16 workers take, the queue runs dry about 10 s in, and from then on the
# rate measured would be the producer's (held snapshot or not).
run_snapshot() {
	local n=16 before=${before:-10} after=${after:-30} total pid rc=0 t_conn t_hold0 t_hold1 log i
	total=$((before + hold + after))
	SNAP_I=$((SNAP_I + 1))
	show ""
	if [ "${3:-}" = nohold ]; then show "### (b) at $n clients, no snapshot held: $1"
	else show "### (b) at $n clients while a REPEATABLE READ snapshot is held for $hold s: $1"; fi
	show ""
	say "== scale: snapshot held for $hold s"
	clone scale_snap scale_run
	log="$LOGDIR/snapshot-$SNAP_I.log"
	# The rate is pgbench's own (-P 1, each second's jobs by the clock of
	# this machine), not a session counting the results on the run rows
	# every second: that is a scan of every run row made since the last
	# VACUUM (100 ms and more a second at 250,000, in 3 processes) that grows
	# until autovacuum comes, and most while a snapshot keeps it away: it
	# makes the rate fall over each minute, snapshot or not.
	PGOPTIONS="$2" "$PGBENCH" -n -M prepared -c "$n" -j "$(( n < NPROC ? n : NPROC ))" -T "$total" \
		-P 1 --progress-timestamp -f "$(script_of b)" scale_run >"$log" 2>&1 &
	pid=$!
	wait_clients scale_run "$n"
	t_conn=$(epoch)
	sleep_until "$(awk -v a="$t_conn" -v b="$before" 'BEGIN { printf "%.3f", a + b }')"
	if [ "${3:-}" = nohold ]; then
		# the same seconds without a snapshot: the wait is the shell's, since
		# a statement that sleeps holds its snapshot as long
		t_hold0=$(epoch)
		sleep_until "$(awk -v a="$t_hold0" -v h="$hold" 'BEGIN { printf "%.3f", a + h }')"
		t_hold1=$(epoch)
	else
		read -r t_hold0 t_hold1 < <(q -F ' ' -d scale_run <<-SQL
			BEGIN ISOLATION LEVEL REPEATABLE READ;
			SELECT count(*) FROM workload.workloads \gset
			SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
			SELECT pg_sleep($hold) \gset
			SELECT :t0, extract(epoch FROM clock_timestamp());
			COMMIT;
		SQL
		)
	fi
	wait "$pid" || rc=$?
	# each progress line: the time it was written and the jobs a second since
	# the one before; summed into (jobs so far, time) from the first line on
	awk '/^progress: [0-9.]+ s, [0-9.]+ tps/ {
		t = $2 + 0; r = $4 + 0
		if (n++) jobs += r * (t - t0)
		t0 = t; printf "%.0f\t%.3f\n", jobs, t
	}' "$log" >"$LOGDIR/snapshot-$SNAP_I.tsv"
	local left
	left=$(q -d scale_run -c "$(ready_sql b)")
	drop_db scale_run
	[ "$rc" = 0 ] || show "pgbench exited with $rc (see the log); numbers below may be partial."
	show "READY workloads left at the end: $left of $SNAP_ROWS (0: the queue ran dry, the rate is not the claim's)."
	show ""
	show "| phase | window s | jobs/s |"
	show "|---|---:|---:|"
	q -d postgres <<-SQL | tee -a "$OUT"
	CREATE TEMP TABLE s (jobs bigint, at float8);
	\copy s FROM '$LOGDIR/snapshot-$SNAP_I.tsv'
	CREATE TEMP TABLE phase (ord int, name text, t0 float8, t1 float8);
	INSERT INTO phase VALUES
	    (1, 'before (no snapshot held)', (SELECT min(at) FROM s), $t_hold0),
	    (2, 'during: first half of the hold', $t_hold0, ($t_hold0 + $t_hold1) / 2),
	    (3, 'during: second half of the hold', ($t_hold0 + $t_hold1) / 2, $t_hold1),
	    (4, 'during: whole hold', $t_hold0, $t_hold1),
	    (5, 'after: first 10 s', $t_hold1, $t_hold1 + 10),
	    (6, 'after: the rest', $t_hold1 + 10, (SELECT max(at) FROM s)),
	    (7, 'after: from 60 s on', $t_hold1 + 60, (SELECT max(at) FROM s));
	SELECT format('| %s | %s | %s |', p.name, round((b.at - a.at)::numeric, 1),
	              round(((b.jobs - a.jobs) / nullif(b.at - a.at, 0))::numeric))
	FROM phase p
	CROSS JOIN LATERAL (SELECT jobs, at FROM s WHERE at >= p.t0 - 0.01 ORDER BY at LIMIT 1) a
	CROSS JOIN LATERAL (SELECT jobs, at FROM s WHERE at <= p.t1 + 0.01 ORDER BY at DESC LIMIT 1) b
	WHERE p.ord < 7 OR $after >= 70
	ORDER BY p.ord;
	SQL
	md ""
	md "Timeline (jobs/s per 5 s, from pgbench's first progress report; the snapshot is held from $(fsub "$t_hold0" "$(head -n 1 "$LOGDIR/snapshot-$SNAP_I.tsv" | cut -f 2)") s to $(fsub "$t_hold1" "$(head -n 1 "$LOGDIR/snapshot-$SNAP_I.tsv" | cut -f 2)") s):"
	md ""
	md '```'
	q -d postgres >>"$OUT" <<-SQL
	CREATE TEMP TABLE s (jobs bigint, at float8);
	\copy s FROM '$LOGDIR/snapshot-$SNAP_I.tsv'
	WITH f AS (SELECT DISTINCT ON (k) k, jobs, at
	           FROM (SELECT floor((at - (SELECT min(at) FROM s)) / 5)::int AS k, jobs, at FROM s) x
	           ORDER BY k, at),
	     b AS (SELECT k, jobs, at, lead(jobs) OVER w AS jobs1, lead(at) OVER w AS at1
	           FROM f WINDOW w AS (ORDER BY k))
	SELECT format('%3s-%3s s  %6s jobs/s', k * 5, k * 5 + 5,
	              round(((jobs1 - jobs) / (at1 - at))::numeric))
	FROM b WHERE jobs1 IS NOT NULL ORDER BY k;
	SQL
	md '```'
	md ""
}

# ---------------------------------------------------------------- latency
run_latency() {
	local probe="$LOGDIR/latency_probe" out1 out2 out3 n1 n3
	show "## Latency: create commit -> claim by an idle worker"
	show ""
	gcc -O2 -I"$("$WL_PG_BIN/pg_config" --includedir)" "$BENCH/latency_probe.c" \
		-L"$("$WL_PG_BIN/pg_config" --libdir)" -lpq -o "$probe"
	chmod 755 "$probe"
	new_db bench_lat
	say "== latency: $samples workloads, LISTEN with 1 s poll fallback"
	out1=$("$probe" bench_lat "$TENANT" latency "$samples" 1000 40 1 | tail -n 2) || true
	say "== latency: $samples rows of a bare queue, LISTEN with 1 s poll fallback"
	out3=$("$probe" bench_lat "$TENANT" latency "$samples" 1000 40 1 bare | tail -n 2) || true
	say "== latency: $samples workloads, polling every 1 ms"
	out2=$("$probe" bench_lat "$TENANT" latency-poll "$samples" 1 40 0 | tail -n 2) || true
	drop_db bench_lat
	n1=$(echo "$out1" | sed -n 's/^notifications //p')
	n3=$(echo "$out3" | sed -n 's/^notifications //p')
	show "| worker | p50 ms | p90 ms | max ms | samples | woken by NOTIFY / poll timeout / busy |"
	show "|---|---:|---:|---:|---:|---|"
	latency_row "LISTEN workload_channel, poll fallback every 1 s" "$out1" "$n1"
	latency_row "bare queue (insert + pg_notify; UPDATE ... SKIP LOCKED claim), LISTEN, poll fallback every 1 s" "$out3" "$n3"
	latency_row "no LISTEN, poll every 1 ms (the fallback where a pooler drops LISTEN)" "$out2" ""
	show ""
	show "LISTEN p50, workload / bare queue: $(latency_ratio "$out1" "$out3")"
	md ""
	md "One producer creates a workload every 20–60 ms (jittered); the idle worker (a separate connection, bench/latency_probe.c) claims, starts and completes it. Latency is from the moment the create's commit returned to the moment the claim returned, on one monotonic clock. The bare queue row runs the same two processes on a plain table (\`latency_probe ... bare\`): the floor of this machine for the same path (a commit, a notification, a claim and its commit), measured in the same run."
	md ""
}

latency_row() {
	local label=$1 out=$2 notes=$3 sum
	sum=$(echo "$out" | grep '^summary')
	val() { echo "$sum" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	if [ -n "$notes" ] && [ "$notes" = 0 ]; then
		show "| $label | pending NOTIFY | – | – | $(val n) | no notification arrived, so there is no NOTIFY latency to report |"
	else
		show "| $label | $(val p50_ms) | $(val p90_ms) | $(val max_ms) | $(val n) | $(val woke_notify) / $(val woke_poll) / $(val woke_busy) |"
	fi
}

# latency_ratio OUT_A OUT_B: p50 of A / p50 of B, two decimals ("–" without both)
latency_ratio() {
	local a b
	a=$(echo "$1" | grep '^summary' | tr ' ' '\n' | sed -n 's/^p50_ms=//p')
	b=$(echo "$2" | grep '^summary' | tr ' ' '\n' | sed -n 's/^p50_ms=//p')
	if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f\n", a / b }'
	else echo "–"; fi
}

# ---------------------------------------------------------------- memory
run_memory() {
	local cycles every=10000 pre rc kind script per verdict
	cycles=$(( (calls + 2) / 3 + 1 ))
	show "## Memory: $calls hot-path calls in one session"
	show ""
	for kind in single batch; do
		case $kind in
			single) script=memory_cycle.pgbench; per=1
				show "### claim / start / complete, one workload a cycle" ;;
			batch) script=memory_batch_cycle.pgbench; per=10
				show "### claim x10 with start / heartbeat_many / complete_many, ten workloads a cycle" ;;
		esac
		show ""
		say "== memory ($kind): preloading $((cycles * per + 100)) workloads, then $cycles cycles of 3 calls in one session"
		new_db bench_mem
		pre=$(preload bench_mem "$APP" 1 $((cycles * per + 100)))
		q -d bench_mem -c "VACUUM ANALYZE"
		rc=0
		"$PGBENCH" -n -M prepared -c 1 -j 1 -t "$cycles" -D cycle=0 -D every=$every \
			-f "$BENCH/scripts/$script" bench_mem >"$LOGDIR/memory-$kind.log" 2>&1 || rc=$?
		[ "$rc" = 0 ] || { show "pgbench exited with $rc:"; show "$(tail -n 5 "$LOGDIR/memory-$kind.log")"; }
		show "| calls | sum(total_bytes) | vs 20k |"
		show "|---:|---:|---:|"
		q -d bench_mem -c "SELECT format('| %s | %s | %s |', calls, bytes,
		        to_char(100.0 * bytes / (SELECT bytes FROM bench.mem_samples WHERE calls = 20000) - 100, 'FMS990.0') || ' %')
		    FROM bench.mem_samples ORDER BY calls" | tee -a "$OUT"
		verdict=$(q -d bench_mem -c "SELECT CASE WHEN w.bytes IS NULL OR l.calls < 30000 THEN 'NO VERDICT (fewer than 30k calls sampled)'
		        WHEN abs(l.bytes - w.bytes) <= 0.10 * w.bytes THEN 'PASS'
		        ELSE 'FAIL' END || format(': last sample (%s calls) %s bytes, at 20k %s bytes, %s%%',
		        l.calls, l.bytes, w.bytes, to_char(100.0 * l.bytes / nullif(w.bytes, 0) - 100, 'FMS990.0'))
		    FROM (SELECT * FROM bench.mem_samples ORDER BY calls DESC LIMIT 1) l
		    LEFT JOIN bench.mem_samples w ON w.calls = 20000")
		show ""
		show "**$verdict** (passes when the last sample is within 10% of the sample at 20k calls)."
		md ""
		md "One pgbench client (one backend) runs the cycles, each call its own transaction; $((cycles * per + 100)) READY workloads preloaded (${pre} s). Samples are taken by that backend itself, before the first cycle and whenever the call count crosses a multiple of 10k."
		md ""
		drop_db bench_mem
	done
}

# ---------------------------------------------------------------- main
wl_need_root
wl_install_deps
[ "$build" = 0 ] || wl_build
if [ "$cmd" = profile ]; then
	wl_cluster_start "${SETTINGS[@]}" "${PROFILE_SETTINGS[@]}"
else
	wl_cluster_start "${SETTINGS[@]}"
fi
LOGDIR="$WL_TMP/bench"
mkdir -p "$LOGDIR"
# keep the pgbench logs and raw numbers (bench/results/tmp/ is not committed)
save_logs() {
	mkdir -p "$BENCH/results/tmp/$name"
	cp -r "$LOGDIR"/. "$BENCH/results/tmp/$name/" 2>/dev/null || true
}
trap 'save_logs; wl_cluster_stop; huge_restore' EXIT
chmod 755 "$WL_TMP" "$LOGDIR"
OUT="$LOGDIR/result.md"
started=$(epoch)
{
	echo "# workload benchmark: $name ($(date -u +%Y-%m-%d))"
	echo ""
	if [ "$quick" = 1 ]; then
		echo "> **Smoke run (\`--quick\`).** One short round on a shared machine that other jobs were using at the same time. The numbers show the harness works; they are not measurements to compare or quote."
		echo ""
	fi
} >"$OUT"
environment
case "$cmd" in
	compare) run_compare ;;
	profile) run_profile ;;
	scale) run_scale ;;
	snapshot) run_snapshot_only ;;
	latency) run_latency ;;
	memory) run_memory ;;
	all) run_compare; run_scale; run_latency; run_memory ;;
	anchors) . "$BENCH/anchors.sh"; run_anchors ;;
esac
md "Finished in $(awk -v a="$(epoch)" -v b="$started" 'BEGIN { printf "%.0f", a - b }') s; load average at the end: $(cut -d ' ' -f 1-3 /proc/loadavg)."

mkdir -p "$BENCH/results"
dest="$BENCH/results/$(date +%Y-%m-%d)-$name.md"
i=2
while [ -e "$dest" ]; do dest="$BENCH/results/$(date +%Y-%m-%d)-$name-$i.md"; i=$((i + 1)); done
cp "$OUT" "$dest"
echo "== wrote ${dest#"$WL_ROOT"/}"
bash "$BENCH/results_index.sh" && echo "== updated bench/results/README.md"
