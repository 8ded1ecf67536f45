#!/usr/bin/env bash
# bench/citus_cycle.sh [N]: the cost of a claim/start/complete cycle, and of
# the batched cycle (claim 10 with start, workload_complete_many), on a
# Citus cluster (a coordinator and two workers on this machine) against the
# same cycles on a single node.
# One session makes N cycles, each three autocommitted calls (workload_claim
# of one workload, workload_start, workload_complete), after N workloads were
# created (one statement of N creates, through the coordinator on Citus),
# then N/10 batched cycles after N more; it prints, for the creates and for
# each cycle, the wall time per job and the server CPU per job of each node: the user and
# system time of the server's processes (the postmaster, its children, and
# the children it reaped: /proc/<pid>/stat), from just before the cycles to
# just after.  On Citus it also prints the calls routed to each worker and
# the statements each ran on our shards during the 3-call cycles
# (pg_stat_statements); the cycles are made through the coordinator, then
# on the node that holds the tenant (as the reference worker makes them).
# Wall time on a shared machine: compare the lines of one run, not runs.
# Run as root.
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/citus.sh"
wl_need_root
wl_install_deps
wl_build >/dev/null
wl_citus_build >/dev/null
N=${1:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the cycle script: N times claim one, start it, complete it
{
	echo "\\set ON_ERROR_STOP 1"
	for i in $(seq 1 "$N"); do
		echo "SELECT workload_id AS id, claim_id AS cl, fencing_token AS tok FROM workload_claim('wk', '{*}', 'bench', 'billing', '1 minute') \\gset"
		echo "SELECT workload_start(:'id', :'cl', 'wk', :tok) \\g /dev/null"
		echo "SELECT workload_complete(:'id', :'cl', 'wk', :tok, 'r-' || :'id', '{\"ok\": true}') \\g /dev/null"
	done
} >"$work/cycle.sql"
# the batched cycle: N/10 times claim 10 (started) and complete them in one call
{
	echo "\\set ON_ERROR_STOP 1"
	for i in $(seq 1 $((N / 10))); do
		echo "SELECT count(*) FROM workload_complete_many('wk', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,"
		echo "  'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '{\"ok\": true}'::jsonb))"
		echo "  FROM workload_claim('wk', '{*}', 'bench', 'billing', '1 minute', 10, true))) \\g /dev/null"
	done
} >"$work/batched.sql"
chmod -R a+rX "$work"
HZ=$(getconf CLK_TCK)

# cpu_ticks DATADIR: the CPU clock ticks (user + system) the server of
# DATADIR used so far: its postmaster, the children alive now, and the
# children it has reaped (a session's backend that ended)
cpu_ticks() {
	local pm p t f
	pm=$(head -n 1 "$1/postmaster.pid")
	read -r -a f < <(sed 's/^.*) //' "/proc/$pm/stat")
	t=$((f[11] + f[12] + f[13] + f[14]))
	for p in $(pgrep -P "$pm"); do
		if read -r -a f < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null); then
			t=$((t + f[11] + f[12]))
		fi
	done
	echo "$t"
}
# cpu_all: "dir=ticks ..." for every server in CPU_DIRS ("label=datadir ...")
cpu_all() {
	local d
	for d in $CPU_DIRS; do echo -n "${d%%=*}=$(cpu_ticks "${d#*=}") "; done
}
# cpu_per_job BEFORE AFTER JOBS: "label X.XX ms, ..." of CPU per job
cpu_per_job() {
	local b a out="" l
	for b in $1; do
		l=${b%%=*}
		for a in $2; do
			[ "${a%%=*}" = "$l" ] || continue
			out="$out${out:+, }$l $(echo "(${a#*=} - ${b#*=}) * 1000 / $HZ / $3" | bc -l | xargs printf '%.2f') ms"
		done
	done
	echo "$out"
}

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# run_on LABEL KEY [fresh]: create N workloads (keys KEY1..KEYN), then the N
# cycles, then N more and the N/10 batched cycles, on the server in
# PGHOST/PGPORT; fresh: make the extension again first
run_on() {
	local t0 create_ms cycle_ms batch_ms c0 c1 b0 b1 k0 k1 done_n
	[ "${3:-}" = fresh ] && psql -X -q -v ON_ERROR_STOP=1 -f "$WL_ROOT/test/include/helpers.sql" >/dev/null
	k0=$(cpu_all)
	t0=$(date +%s%N)
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT t.create('$2' || i, '{}', 'bench') FROM generate_series(1, $N) i" >/dev/null
	create_ms=$(ms_since "$t0")
	k1=$(cpu_all)
	if [ -n "${WL_CITUS_TMP:-}" ]; then
		for w in w1 w2; do wl_citus_psql "$w" -qAt -c 'SELECT pg_stat_statements_reset()' >/dev/null; done
	fi
	c0=$(cpu_all)
	t0=$(date +%s%N)
	psql -X -q -f "$work/cycle.sql" >/dev/null
	cycle_ms=$(ms_since "$t0")
	c1=$(cpu_all)
	[ -n "${WL_CITUS_TMP:-}" ] && CALLS_SEEN="$(calls w1) on w1, $(calls w2) on w2"
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT t.create('$2b' || i, '{}', 'bench') FROM generate_series(1, $N) i" >/dev/null
	b0=$(cpu_all)
	t0=$(date +%s%N)
	psql -X -q -f "$work/batched.sql" >/dev/null
	batch_ms=$(ms_since "$t0")
	b1=$(cpu_all)
	done_n=$(psql -X -qAt -c "SELECT count(*) FROM workload.workloads w JOIN workload.specs s
		ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
		WHERE w.tenant_id = 'bench' AND s.tenant_id = 'bench' AND s.idempotency_key LIKE '$2%' AND w.state = 'SUCCEEDED'")
	printf '| %s | %d | %.2f | %s | %.2f | %s | %.2f | %s |\n' "$1" "$done_n" \
		"$(echo "$create_ms / $N" | bc -l)" "$(cpu_per_job "$k0" "$k1" "$N")" \
		"$(echo "$cycle_ms / $N" | bc -l)" "$(cpu_per_job "$c0" "$c1" "$N")" \
		"$(echo "$batch_ms / ($N / 10 * 10)" | bc -l)" "$(cpu_per_job "$b0" "$b1" $((N / 10 * 10)))"
}

echo "| where | succeeded of $((2 * N)) | ms per create | server CPU per create | 3-call cycle: ms per job | server CPU per job | batched cycle: ms per job | server CPU per job |"
echo "|---|---|---|---|---|---|---|---|"
wl_cluster_start >/dev/null
CPU_DIRS="node=$WL_DATA"
psql -X -q -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload'
run_on "single node" k fresh
wl_cluster_stop

export WL_CITUS_LIBS='citus,workload,pg_stat_statements' WL_CITUS_DB=wl
# the background tick (every second by default) scans every worker; kept out of the count
wl_citus_start "workload.tick_interval = '1h'" >/dev/null
trap 'wl_citus_stop; rm -rf "$work"' EXIT
psql -X -q -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' -c 'CREATE EXTENSION pg_stat_statements'
CPU_DIRS="coord=$WL_CITUS_TMP/coord w1=$WL_CITUS_TMP/w1 w2=$WL_CITUS_TMP/w2"
# calls NODE: the routed calls (workload.route_*) and statements on our shards NODE ran
calls() {
	wl_citus_psql "$1" -qAt -c "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query ~ 'workload\.(route_|(workload_rows|queue|leases|specs|events|attempts|results)_[0-9]+)'"
}
run_on "Citus, calls made on the coordinator" k fresh
through=$CALLS_SEEN
node=$(psql -X -qAt -c "SELECT CASE port WHEN $WL_CITUS_W1_PORT THEN 'w1' ELSE 'w2' END FROM workload_tenant_node('bench')")
PGPORT=$(wl_citus_port "$node") run_on "Citus, calls made on the tenant's node" n
echo
echo "Tenant bench is on $node. Routed calls and statements on our shards during the 3-call cycles"
echo "through the coordinator: $through; made on $node: $CALLS_SEEN."
