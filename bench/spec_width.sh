# bench/spec_width.sh: `bench/run.sh specwidth`, sourced by bench/run.sh (its
# settings, cluster and helpers).  Not part of the test command; an experiment.
#
# What the width of workload.specs costs the batched claim when the queue is
# larger than shared_buffers (stop 38).  One template with --preload READY
# workloads (bench.create_range, as anchors' template); a second, its copy
# with each spec's two authority documents (authorization_snapshot,
# run_authority: 1,400 of a spec row's 1,945 bytes) replaced by '{}' and the
# table rewritten (VACUUM FULL; the raw-write trigger disabled for that
# statement only).  The claim reads a spec's definition and input, never those
# two documents, so the copy shows what a narrower spec row would buy.  Each
# round runs (c100) (bench/scripts/c_claim100_complete_many.pgbench, N clients,
# --seconds, pgbench -M prepared) on a fresh clone of each template, in
# alternating order, and reports jobs a second (the results the run stored,
# over pgbench's time for its script runs: their number over its rate, the
# connecting left out) and the blocks the run read from outside shared_buffers
# a job (pg_stat_database.blks_read).  A round that emptied the queue is
# flagged DRY: raise --preload.

spec_width_one() {	# spec_width_one TEMPLATE N SECONDS: "jobs/s blocks-read-a-job flags"
	local log r0 r1 tps runs jobs left
	log="$LOGDIR/specwidth-$1-$(date +%s%N).log"
	clone "$1" spec_run
	r0=$(q -c "SELECT blks_read FROM pg_stat_database WHERE datname = 'spec_run'")
	"$PGBENCH" -n -M prepared -c "$2" -j "$(( $2 < NPROC ? $2 : NPROC ))" -T "$3" \
		-f "$BENCH/scripts/c_claim100_complete_many.pgbench" spec_run >"$log" 2>&1
	wait_no_backends spec_run	# their statistics flushed as they exit
	r1=$(q -c "SELECT blks_read FROM pg_stat_database WHERE datname = 'spec_run'")
	jobs=$(q -d spec_run -c "SELECT count(*) FROM workload.runs WHERE result_application_id IS NOT NULL")
	left=$(q -d spec_run -c "SELECT count(*) FROM workload.queue")
	drop_db spec_run
	if grep -qE 'aborted|ERROR' "$log"; then cat "$log" >&2; exit 1; fi
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$log")
	runs=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$log")
	# the run's time is pgbench's (its script runs over its rate, connecting left out)
	awk -v tps="$tps" -v r="$((r1 - r0))" -v n="$runs" -v j="$jobs" -v f="$([ "$left" -gt 0 ] || echo DRY)" \
		'BEGIN { printf "%.0f %.2f %s\n", j * tps / n, r / j, (f == "" ? "-" : f) }'
}

run_spec_width() {
	local n r t rate reads flags t_pre
	case "$clients" in *" "*) n=16 ;; *) n=$clients ;; esac
	show "## The width of workload.specs: (c100) at $n clients, full spec rows and narrow ones"
	show ""
	say "== specwidth: template with $preload READY workloads"
	new_db spec_full >/dev/null
	t_pre=$(preload spec_full "$APP" 1 "$preload")
	q -d spec_full -c "VACUUM ANALYZE"
	clone spec_full spec_narrow
	q -d spec_narrow -c "BEGIN" \
		-c "ALTER TABLE workload.specs DISABLE TRIGGER specs_raw_write_trg" \
		-c "UPDATE workload.specs SET authorization_snapshot = '{}', run_authority = '{}'" \
		-c "ALTER TABLE workload.specs ENABLE ALWAYS TRIGGER specs_raw_write_trg" \
		-c "COMMIT" -c "VACUUM FULL workload.specs" -c "VACUUM ANALYZE" >/dev/null
	md "Preloaded $preload READY workloads in ${t_pre} s. Each round runs (c100) for $seconds s on a fresh FILE_COPY clone of each template, alternating which goes first."
	md ""
	for t in spec_full spec_narrow; do
		show "- $t: workload.specs $(q -d "$t" -c "SELECT pg_size_pretty(pg_relation_size('workload.specs'))"), the database $(q -d "$t" -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"
	done
	show ""
	show "| round | template | jobs/s | blocks read a job | flags |"
	show "|---:|---|---:|---:|---|"
	for ((r = 1; r <= rounds; r++)); do
		if [ $((r % 2)) = 1 ]; then set -- spec_full spec_narrow; else set -- spec_narrow spec_full; fi
		for t in "$@"; do
			read -r rate reads flags < <(spec_width_one "$t" "$n" "$seconds")
			show "| $r | $t | $rate | $reads | $flags |"
		done
	done
	show ""
	drop_db spec_full
	drop_db spec_narrow
}
