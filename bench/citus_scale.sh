#!/usr/bin/env bash
# bench/citus_scale.sh [CYCLES]: the check of docs/scaling.md's projection on
# this machine: jobs/s of two Citus worker nodes, a tenant on each, against
# one node given the same CPU.
#
# One node is limited to 1.0 CPU, and each of two Citus workers to 0.5 CPU
# (cgroup v1 cpu quotas, /sys/fs/cgroup/cpu); the coordinator is not in the
# jobs' path. 8 psql sessions drain the single node's tenant; on the cluster 4
# sessions drain the tenant on w1 and 4 the tenant on w2, each session
# connected to its tenant's node, as the clients and the reference worker are.
# Each session makes CYCLES claim/start/complete cycles (three autocommitted
# calls), then, after more workloads were created, CYCLES/10 batched cycles
# (claim 10 started, workload_complete_many). It prints jobs/s and the server
# CPU per job of each node (user + system time of its processes, /proc), and
# the projected cluster/single ratio from those per-job costs: the same CPU
# over the cluster's cost per job against one node's. synchronous_commit is
# off on every node, so that the drain is bound by CPU, not by the disk's
# flush. Run as root; without a cgroup v1 cpu controller it says so and stops.
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/citus.sh"
wl_need_root
CG=/sys/fs/cgroup/cpu
if [ ! -w "$CG/cgroup.procs" ] && [ ! -w "$CG/tasks" ]; then
	echo "skipped: no writable cgroup v1 cpu controller at $CG (the quotas this check needs)"
	exit 0
fi
wl_install_deps
wl_build >/dev/null
wl_citus_build >/dev/null
C=${1:-1000}
SESSIONS=8
work=$(mktemp -d)
chmod a+rx "$work"
HZ=$(getconf CLK_TCK)

# cycle_sql TENANT CYCLES: CYCLES claim/start/complete cycles of TENANT's workloads
cycle_sql() {
	echo "\\set ON_ERROR_STOP 1"
	for _ in $(seq 1 "$2"); do
		echo "SELECT workload_id AS id, claim_id AS cl, fencing_token AS tok FROM workload_claim('wk', '{*}', '$1', 'billing', '1 minute') \\gset"
		echo "SELECT workload_start('$1', :'id', :'cl', 'wk', :tok) \\g /dev/null"
		echo "SELECT workload_complete('$1', :'id', :'cl', 'wk', :tok, 'r-' || :'id', '{\"ok\": true}') \\g /dev/null"
	done
}
# batched_sql TENANT N: N batched cycles of 10
batched_sql() {
	echo "\\set ON_ERROR_STOP 1"
	for _ in $(seq 1 "$2"); do
		echo "SELECT count(*) FROM workload_complete_many('$1', 'wk', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,"
		echo "  'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '{\"ok\": true}'::jsonb))"
		echo "  FROM workload_claim('wk', '{*}', '$1', 'billing', '1 minute', 10, true))) \\g /dev/null"
	done
}

# cpu_ticks DATADIR: CPU clock ticks of the server of DATADIR so far (bench/citus_cycle.sh's)
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

# limit NAME DATADIR CPUS: the server of DATADIR, and what it starts, in cgroup NAME at CPUS CPUs
limit() {
	local g="$CG/workload-bench-$1" pm p
	mkdir -p "$g"
	echo 100000 >"$g/cpu.cfs_period_us"
	echo "$(echo "$3 * 100000 / 1" | bc)" >"$g/cpu.cfs_quota_us"
	pm=$(head -n 1 "$2/postmaster.pid")
	for p in "$pm" $(pgrep -P "$pm"); do echo "$p" >"$g/cgroup.procs" 2>/dev/null || echo "$p" >"$g/tasks"; done
}
unlimit() {
	local g
	for g in "$CG"/workload-bench-*; do
		[ -d "$g" ] || continue
		while read -r p; do echo "$p" >"$CG/cgroup.procs" 2>/dev/null || echo "$p" >"$CG/tasks" 2>/dev/null; done <"$g/cgroup.procs"
		rmdir "$g" 2>/dev/null
	done
}

# drain KIND "label=datadir=host=port=tenant ...": SESSIONS sessions spread over the
# targets, each running its KIND script; prints "jobs/s|label X.XX ms,..."
drain() {
	local kind=$1 targets=($2) per t0 ms i t l d h p tn x b="" a pids="" cpu="" jobs
	per=$((SESSIONS / ${#targets[@]}))
	for t in "${targets[@]}"; do
		IFS== read -r l d h p tn <<<"$t"
		b="$b $l=$(cpu_ticks "$d")"
	done
	t0=$(date +%s%N)
	for t in "${targets[@]}"; do
		IFS== read -r l d h p tn <<<"$t"
		for i in $(seq 1 "$per"); do
			runuser -u postgres -- psql -X -q -h "$h" -p "$p" -d "${DB:-postgres}" -f "$work/$kind-$tn.sql" >/dev/null &
			pids="$pids $!"
		done
	done
	for i in $pids; do wait "$i" || { echo "a session failed" >&2; exit 1; }; done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$kind" = cycle ]; then jobs=$((SESSIONS * C)); else jobs=$((SESSIONS * (C / 10) * 10)); fi
	for t in "${targets[@]}"; do
		IFS== read -r l d h p tn <<<"$t"
		a=$(cpu_ticks "$d")
		for x in $b; do
			[ "${x%%=*}" = "$l" ] || continue
			cpu="$cpu${cpu:+, }$l $(echo "($a - ${x#*=}) * 1000 / $HZ / ($jobs / ${#targets[@]})" | bc -l | xargs printf '%.3f') ms"
		done
	done
	echo "$(echo "$jobs * 1000 / $ms" | bc)|$cpu"
}

# create TENANT N HOST PORT: N READY workloads of TENANT, made on its node
create() {
	runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$3" -p "$4" -d "${DB:-postgres}" \
		-c "SELECT count(t.create('$1-' || g || '-' || i, '{}', '$1')) FROM generate_series(1, $2) i, (SELECT md5(random()::text) g) x" >/dev/null
}

for tn in one ta tb; do
	cycle_sql "$tn" "$C" >"$work/cycle-$tn.sql"
	batched_sql "$tn" $((C / 10)) >"$work/batched-$tn.sql"
done
chmod -R a+r "$work"

wl_cluster_start "synchronous_commit = off" "shared_preload_libraries = 'workload'" "max_connections = 100" >/dev/null
trap 'unlimit; wl_cluster_stop; wl_citus_stop; rm -rf "$work"' EXIT
psql -X -q -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' -f "$WL_ROOT/test/include/helpers.sql" >/dev/null
SINGLE="single=$WL_DATA=$WL_TMP=$PGPORT=one"
create one $((SESSIONS * C)) "$WL_TMP" "$PGPORT"
limit single "$WL_DATA" 1.0
single_cycle=$(drain cycle "$SINGLE")
create one $((SESSIONS * C)) "$WL_TMP" "$PGPORT"
single_batched=$(drain batched "$SINGLE")
unlimit
wl_cluster_stop

export WL_CITUS_LIBS='citus,workload' WL_CITUS_DB=wl
wl_citus_start "workload.tick_interval = '1h'" "synchronous_commit = off" >/dev/null
trap 'unlimit; wl_citus_stop; rm -rf "$work"' EXIT
DB=wl
psql -X -q -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' -f "$WL_ROOT/test/include/helpers.sql" >/dev/null
# ta on w1 and tb on w2: tenants named so, found from Citus's metadata
ta="" tb=""
for i in $(seq 1 64); do
	port=$(psql -X -qAt -c "SELECT port FROM workload_tenant_node('t$i')")
	[ -z "$ta" ] && [ "$port" = "$WL_CITUS_W1_PORT" ] && ta=t$i
	[ -z "$tb" ] && [ "$port" = "$WL_CITUS_W2_PORT" ] && tb=t$i
	[ -n "$ta" ] && [ -n "$tb" ] && break
done
for f in "$work"/*-ta.sql; do sed -i "s/'ta'/'$ta'/g" "$f"; done
for f in "$work"/*-tb.sql; do sed -i "s/'tb'/'$tb'/g" "$f"; done
CLUSTER="w1=$WL_CITUS_TMP/w1=$WL_CITUS_TMP=$WL_CITUS_W1_PORT=ta w2=$WL_CITUS_TMP/w2=$WL_CITUS_TMP=$WL_CITUS_W2_PORT=tb"
create "$ta" $((SESSIONS / 2 * C)) "$WL_CITUS_TMP" "$WL_CITUS_W1_PORT"
create "$tb" $((SESSIONS / 2 * C)) "$WL_CITUS_TMP" "$WL_CITUS_W2_PORT"
limit w1 "$WL_CITUS_TMP/w1" 0.5
limit w2 "$WL_CITUS_TMP/w2" 0.5
cluster_cycle=$(drain cycle "$CLUSTER")
unlimit
create "$ta" $((SESSIONS / 2 * C)) "$WL_CITUS_TMP" "$WL_CITUS_W1_PORT"
create "$tb" $((SESSIONS / 2 * C)) "$WL_CITUS_TMP" "$WL_CITUS_W2_PORT"
limit w1 "$WL_CITUS_TMP/w1" 0.5
limit w2 "$WL_CITUS_TMP/w2" 0.5
cluster_batched=$(drain batched "$CLUSTER")
left=$(psql -X -qAt -c "SELECT count(*) FROM workload.workloads WHERE tenant_id IN ('$ta', '$tb') AND state <> 'SUCCEEDED'")

# per_job "label X ms, ...": the mean of the nodes' CPU per job
per_job() { echo "$1" | grep -oE '[0-9]+\.[0-9]+ ms' | awk '{s += $1; n++} END {printf "%.3f", s / n}'; }
row() {
	local what=$1 s=$2 c=$3 sj cj
	sj=$(per_job "${s#*|}")
	cj=$(per_job "${c#*|}")
	printf '| %s | %s | %s | %s | %s | %.2f | %.2f |\n' "$what" "${s%%|*}" "${s#*|}" "${c%%|*}" "${c#*|}" \
		"$(echo "${c%%|*} / ${s%%|*}" | bc -l)" "$(echo "$sj / $cj" | bc -l)"
}
echo "| cycle | one node, 1.0 CPU: jobs/s | its CPU per job | two workers, 0.5 CPU each: jobs/s | their CPU per job | measured cluster / one node | projected (one node's CPU per job / the workers') |"
echo "|---|---|---|---|---|---|---|"
row "claim/start/complete" "$single_cycle" "$cluster_cycle"
row "batched (claim 10, complete_many)" "$single_batched" "$cluster_batched"
echo
echo "Tenant $ta on w1, $tb on w2; $SESSIONS sessions on one node, $((SESSIONS / 2)) on each worker, $C cycles each."
echo "Workloads of the two tenants not SUCCEEDED at the end: $left."
