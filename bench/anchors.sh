# bench/anchors.sh: `bench/run.sh anchors`, sourced by bench/run.sh (it uses
# its helpers, settings and cluster).  Not part of the test command.
#
# The batched `workload` paths next to the two Node.js queues users compare us
# with, in one run on one throwaway cluster: pg-boss (batch of 10) and Graphile
# Worker (local queue, batched completion), installed from npm into bench/npm/
# (package.json and package-lock.json pin exact versions; node_modules is not
# committed), with the bare SKIP LOCKED queue (a) as the baseline of every
# ratio.  See bench/README.md, "anchors".

ANPM="$BENCH/npm"
# WL_ANCHOR_VARIANTS narrows a run to some of them (for a quicker experiment;
# the ratios need (a) among them).
ANCHOR_VARIANTS=${WL_ANCHOR_VARIANTS:-"a c c100 pgboss graphile"}
CLK_TCK=$(getconf CLK_TCK)

# anchors_install: Node.js >= 20 and the pinned packages (npm ci, only when
# node_modules is missing or older than the lockfile).
anchors_install() {
	local major
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "anchors needs Node.js >= 20 and npm on the PATH (not installed by this script)" >&2
		exit 1
	fi
	major=$(node -p 'process.versions.node.split(".")[0]')
	if [ "$major" -lt 20 ]; then
		echo "anchors needs Node.js >= 20 (found $(node --version))" >&2
		exit 1
	fi
	if [ ! -d "$ANPM/node_modules" ] || [ "$ANPM/package-lock.json" -nt "$ANPM/node_modules/.package-lock.json" ]; then
		say "== anchors: npm ci in bench/npm (pg-boss, graphile-worker)"
		(cd "$ANPM" && npm ci --no-audit --no-fund --loglevel=error >&2)
	fi
}

pkg_version() { node -p "require('$ANPM/node_modules/$1/package.json').version"; }
pkg_engines() { node -p "require('$ANPM/node_modules/$1/package.json').engines?.node ?? 'any'"; }

# conn DB: a connection string for node-postgres over the cluster's Unix
# socket, the way pgbench connects.
conn() { echo "postgresql://$PGUSER@localhost/$1?host=$PGHOST&port=$PGPORT"; }

anchor_label() {
	case "$1" in
		a) echo "(a) bare SKIP LOCKED queue, 3 txn/job" ;;
		c) echo "(c) workload claim×10+start, complete_many" ;;
		c100) echo "(c100) workload claim×100+start, complete_many" ;;
		pgboss) echo "pg-boss $PGBOSS_V, batch of 10" ;;
		graphile) echo "Graphile Worker $GRAPHILE_V, local queue 500 + batched completion" ;;
	esac
}

# The completed jobs of a variant, counted from its own tables.  Graphile
# Worker deletes a job when it completes, so its count is the preload minus
# the rows left.
done_expr() {
	case "$1" in
		a) echo "(SELECT count(*) FROM bench.q WHERE state = 'done')" ;;
		c|c100) echo "(SELECT count(*) FROM workload.runs WHERE result_application_id IS NOT NULL)" ;;
		pgboss) echo "(SELECT count(*) FROM pgboss.job WHERE name = 'bench' AND state = 'completed')" ;;
		graphile) echo "($preload - (SELECT count(*) FROM graphile_worker._private_jobs))" ;;
	esac
}
left_expr() {
	case "$1" in
		a) echo "(SELECT count(*) FROM bench.q WHERE state = 'ready')" ;;
		c|c100) echo "(SELECT count(*) FROM workload.workloads WHERE tenant_id = '$TENANT' AND application_id = '$APP' AND state = 'READY')" ;;
		pgboss) echo "(SELECT count(*) FROM pgboss.job WHERE name = 'bench' AND state = 'created')" ;;
		graphile) echo "(SELECT count(*) FROM graphile_worker._private_jobs WHERE locked_at IS NULL)" ;;
	esac
}

# CPU time of the client (pgbench or node): nanoseconds on CPU of all its
# threads, from /proc/<pid>/task/*/schedstat (exact; the threads live through
# the window).  Of the server, in clock ticks: the postmaster with the
# children it has reaped (cutime + cstime, so autovacuum workers that exit
# inside the window still count) plus its live children (backends, walwriter,
# checkpointer, autovacuum).
client_ns() {
	{ cat /proc/"$1"/task/*/schedstat || true; } 2>/dev/null | awk '{ t += $1 } END { printf "%.0f\n", t }'
}
server_ticks() {
	local pm kids
	pm=$(head -n 1 "$WL_DATA/postmaster.pid")
	# a child may exit between pgrep and cat: neither may fail the run (pipefail)
	kids=$({ pgrep -P "$pm" || true; } | sed 's|.*|/proc/&/stat|')
	{ cat "/proc/$pm/stat" $kids || true; } 2>/dev/null | awk -v pm="$pm" '
		{ id = $1; sub(/^.*\) /, ""); t += $12 + $13; if (id == pm) t += $14 + $15 }
		END { print t + 0 }'
}
# busy ticks of the whole machine (all cores), from /proc/stat
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

# run_stats DB V: jobs done, commits of DB, and the server's WAL counters.
run_stats() {
	q -F ' ' -d "$1" -c "SELECT $(done_expr "$2"),
		(SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
		w.wal_fpi, w.wal_records, pg_current_wal_lsn() - '0/0'::pg_lsn
		FROM pg_stat_wal w"
}
# window_sample DB V: jobs done, server time, WAL position.
window_sample() {
	q -F ' ' -d "$1" -c "SELECT $(done_expr "$2"), extract(epoch FROM statement_timestamp()),
		pg_current_wal_lsn() - '0/0'::pg_lsn"
}
wait_ready() {	# LOG PID: until the driver printed "ready" (at most 60 s)
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q '^ready$' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# anchor_measure V N SECONDS DB TAG: one measurement; prints the fields of
# anchors.tsv after round/clients/variant (see summarize_anchors).
anchor_measure() {
	local v=$1 n=$2 secs=$3 db=$4 tag=$5 log pid rc=0 t_start t_conn flags="" warm=1
	local s0 s1 c0 e0 l0 c1 e1 l1 k0 k1 m0 m1 p0 p1 left j
	log="$LOGDIR/$tag.log"
	s0=$(run_stats "$db" "$v")
	t_start=$(epoch)
	case "$v" in
		a|c|c100)
			j=$(( n < NPROC ? n : NPROC ))
			# pgbench counts -T from before it connects, and connecting 64
			# clients can take seconds: with -T SECS + 1 it could end before
			# the window did, which then counted idle time.  It runs until
			# after the window, and is stopped there (stop_client, bench/run.sh).
			"$PGBENCH" -n -M prepared -c "$n" -j "$j" -T "$((secs + 30))" -f "$(anchor_script "$v")" "$db" >"$log" 2>&1 &
			pid=$!
			wait_clients "$db" "$n" ;;
		pgboss|graphile)
			node "$ANPM/driver.mjs" run "$v" "$(conn "$db")" "$n" "$secs" >"$log" 2>&1 &
			pid=$!
			wait_ready "$log" "$pid" || flags="${flags}not-ready," ;;
	esac
	t_conn=$(epoch)
	sleep_until "$(awk -v a="$t_conn" -v w="$warm" 'BEGIN { printf "%.3f", a + w }')"
	k0=$(client_ns "$pid"); p0=$(server_ticks); m0=$(machine_ticks)
	read -r c0 e0 l0 < <(window_sample "$db" "$v")
	sleep_until "$(awk -v a="$t_conn" -v s="$secs" 'BEGIN { printf "%.3f", a + s - 0.5 }')"
	kill -0 "$pid" 2>/dev/null || flags="${flags}client-ended-before-window-end,"
	k1=$(client_ns "$pid"); p1=$(server_ticks); m1=$(machine_ticks)
	read -r c1 e1 l1 < <(window_sample "$db" "$v")
	case "$v" in
		a|c|c100) stop_client "$pid" || rc=$? ;;
		*) wait "$pid" || rc=$? ;;
	esac
	wait_no_backends "$db"
	s1=$(run_stats "$db" "$v")
	left=$(q -d "$db" -c "SELECT $(left_expr "$v")")
	[ "$left" -gt 0 ] || flags="${flags}DRY,"
	[ "$rc" = 0 ] || flags="${flags}exit-$rc,"
	case "$v" in
		a|c|c100) grep -qE 'aborted|ERROR' "$log" && flags="${flags}errors," ;;
		*) grep -qE '^summary .*errors=0 ' "$log" || flags="${flags}errors," ;;
	esac
	awk -v c0="$c0" -v c1="$c1" -v e0="$e0" -v e1="$e1" -v l0="$l0" -v l1="$l1" \
		-v s0="$s0" -v s1="$s1" -v k="$((k1 - k0))" -v p="$((p1 - p0))" -v m="$((m1 - m0))" \
		-v hz="$CLK_TCK" -v left="$left" -v f="${flags%,}" -v ready="$(fsub "$t_conn" "$t_start")" 'BEGIN {
		split(s0, a, " "); split(s1, b, " ")
		# jobs, window s, jobs/s, WAL bytes in the window;
		# whole run: jobs, commits, FPIs, WAL records, WAL bytes;
		# CPU seconds in the window: client, server, whole machine; READY left; flags;
		# seconds from starting the client to seeing it ready
		printf "%d\t%.3f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%d\t%s\t%.2f\n",
			c1 - c0, e1 - e0, (c1 - c0) / (e1 - e0), l1 - l0,
			b[1] - a[1], b[2] - a[2], b[3] - a[3], b[4] - a[4], b[5] - a[5],
			k / 1e9, p / hz, m / hz, left, (f == "" ? "-" : f), ready }'
}

anchor_script() {
	case "$1" in
		a) echo "$BENCH/scripts/a_claim_start_complete.pgbench" ;;
		c) echo "$BENCH/scripts/c_claim10_complete_many.pgbench" ;;
		c100) echo "$BENCH/scripts/c_claim100_complete_many.pgbench" ;;
	esac
}

run_anchors() {
	local r n v tag res t_wl t_pb t_gw variants=$ANCHOR_VARIANTS
	anchors_install
	PGBOSS_V=$(pkg_version pg-boss)
	GRAPHILE_V=$(pkg_version graphile-worker)
	show "## Anchors: batched workload next to pg-boss and Graphile Worker"
	show ""
	md "- Node.js $(node --version), npm $(npm --version); from bench/npm/package-lock.json: pg-boss $PGBOSS_V (engines: node $(pkg_engines pg-boss)), graphile-worker $GRAPHILE_V (engines: node $(pkg_engines graphile-worker)), pg $(pkg_version pg)"
	md ""
	say "== anchors: template with $preload jobs for each system"
	new_db bench_tpl >/dev/null
	t_wl=$(preload bench_tpl "$APP" 1 "$preload")
	q -d bench_tpl -c "SELECT bench.q_fill(1, $preload)" >/dev/null
	t_pb=- t_gw=-
	case " $variants " in *" pgboss "*)
		t_pb=$(node "$ANPM/driver.mjs" setup pgboss "$(conn bench_tpl)" "$preload" | sed -n 's/^setup seconds=//p') ;;
	esac
	case " $variants " in *" graphile "*)
		t_gw=$(node "$ANPM/driver.mjs" setup graphile "$(conn bench_tpl)" "$preload" | sed -n 's/^setup seconds=//p') ;;
	esac
	q -d bench_tpl -c "VACUUM ANALYZE"
	say "   preloaded: workload ${t_wl} s, pg-boss ${t_pb} s, Graphile Worker ${t_gw} s"
	if ! has_complete_many bench_tpl; then
		variants="a pgboss graphile"
		show "**(c) and (c100) not run: workload_complete_many() does not exist in this build.**"
		show ""
	fi
	md "One template database holds all five queues, each preloaded with the same $preload jobs: $preload READY workloads (${t_wl} s, $PAR sessions), $preload \`bench.q\` rows, $preload pg-boss jobs in queue \`bench\` (\`insert\`, 10k per call, ${t_pb} s) and $preload Graphile Worker jobs (\`addJobs\`, 10k per call, ${t_gw} s); then \`VACUUM ANALYZE\`. Every measurement runs on a fresh FILE_COPY clone of it (a checkpoint before and after the copy), so every system starts from the same state, right after a checkpoint."
	md ""
	md "Parameters: rounds=$rounds, seconds=$seconds per measurement, clients=\"$clients\", variants interleaved within each round ($variants). (a), (c), (c100): pgbench -M prepared -j min(N, $NPROC), one connection per client. pg-boss and Graphile Worker: one Node.js process (bench/npm/driver.mjs) with N concurrent workers and a no-op handler."
	md ""
	: >"$LOGDIR/anchors.tsv"
	for ((r = 1; r <= rounds; r++)); do
		for n in $clients; do
			for v in $variants; do
				tag="anchors-r$r-n$n-$v"
				clone bench_tpl bench_run
				res=$(anchor_measure "$v" "$n" "$seconds" bench_run "$tag")
				drop_db bench_run
				say "   round $r  N=$n  ($v)  $(echo "$res" | cut -f 1-3,13-14 | tr '\t' ' ')  (jobs window_s jobs/s left flags)"
				printf '%s\t%s\t%s\t%s\n' "$r" "$n" "$v" "$res" >>"$LOGDIR/anchors.tsv"
			done
		done
	done
	drop_db bench_tpl
	summarize_anchors "$LOGDIR/anchors.tsv"
}

summarize_anchors() {
	show "| clients | variant | jobs/s median | min–max | × (a) | commits/job | WAL bytes/job | FPI/job | client CPU ms/job | client % of a core | server CPU ms/job | others' CPU, cores | flags |"
	show "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	q -d postgres <<-SQL | tee -a "$OUT"
	CREATE TEMP TABLE m (round int, clients int, variant text, jobs bigint, secs numeric, rate numeric,
	                     wal_window numeric, run_jobs numeric, run_commits numeric, run_fpi numeric,
	                     run_records numeric, run_wal numeric, cpu_client numeric, cpu_server numeric,
	                     cpu_machine numeric, ready_left bigint, flags text, ready_s numeric);
	\copy m FROM '$1'
	CREATE TEMP TABLE lab (variant text, ord int, label text);
	INSERT INTO lab VALUES ('a', 1, '$(anchor_label a)'), ('c', 2, '$(anchor_label c)'),
	    ('c100', 3, '$(anchor_label c100)'), ('pgboss', 4, '$(anchor_label pgboss)'),
	    ('graphile', 5, '$(anchor_label graphile)');
	WITH s AS (
	    SELECT clients, variant,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY rate) AS med, min(rate) AS lo, max(rate) AS hi,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY run_commits / nullif(run_jobs, 0)) AS commits,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY wal_window / nullif(jobs, 0)) AS wal,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY run_fpi / nullif(run_jobs, 0)) AS fpi,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY 1000 * cpu_client / nullif(jobs, 0)) AS ccpu,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY 100 * cpu_client / secs) AS cpct,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY 1000 * cpu_server / nullif(jobs, 0)) AS scpu,
	           percentile_cont(0.5) WITHIN GROUP (ORDER BY (cpu_machine - cpu_client - cpu_server) / secs) AS others,
	           string_agg(DISTINCT nullif(flags, '-'), ',') AS flags
	    FROM m GROUP BY clients, variant)
	SELECT format('| %s | %s | %s | %s–%s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', s.clients, l.label,
	              round(s.med::numeric), round(s.lo), round(s.hi),
	              coalesce(to_char(s.med / nullif(a.med, 0), 'FM990.00'), '–'),
	              to_char(s.commits, 'FM990.000'), round(s.wal::numeric), to_char(s.fpi, 'FM990.00'),
	              to_char(s.ccpu, 'FM990.000'), round(s.cpct::numeric), to_char(s.scpu, 'FM990.000'),
	              to_char(s.others, 'FM990.0'), coalesce(s.flags, ''))
	FROM s JOIN lab l USING (variant) LEFT JOIN s a ON a.clients = s.clients AND a.variant = 'a'
	ORDER BY s.clients, l.ord;
	SQL
	md ""
	md "<details><summary>every measurement</summary>"
	md ""
	md "Window = from 1 s to $seconds − 0.5 s after the clients were ready; run = from before the clients started to after their backends exited. CPU is in core-seconds over the window (2 cores give at most $(awk -v s="$seconds" 'BEGIN { printf "%.0f", 2 * (s - 1.5) }') per window); \"others\" is the machine's busy time that was neither the client nor the server; \"ready after\" is the time from starting the client to seeing all its connections (pgbench) or its \`ready\` line (driver)."
	md ""
	md "| round | clients | variant | jobs in window | window s | jobs/s | WAL bytes/job (window) | jobs (run) | commits (run) | FPI (run) | WAL bytes/job (run) | client CPU s | server CPU s | others CPU s | left | ready after s | flags |"
	md "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %.0f | %s | %s | %.2f | %s | %s | %s |\n",
		$1, $2, $3, $4, $5, $6, ($4 > 0 ? $7 / $4 : 0), $8, $9, $10, ($8 > 0 ? $12 / $8 : 0),
		$13, $14, $15 - $13 - $14, $16, $18, $17 }' "$1" >>"$OUT"
	md ""
	md "</details>"
	md ""
	md "Round by round (\`bench/paired.sh\` on this file): the batched variants against pg-boss and Graphile Worker, each ratio taken within one round."
	md ""
	"$BENCH/paired.sh" "$OUT" | tee -a "$OUT"
	md ""
}
