#!/usr/bin/env bash
# bench/citus_cycle.sh [N]: the cost of a routed claim/start/complete cycle on
# a Citus cluster (a coordinator and two workers on this machine, calls made
# through the coordinator) against the same cycle on a single node.
# One session makes N cycles, each three autocommitted calls (workload_claim
# of one workload, workload_start, workload_complete), after N workloads were
# created; it prints the wall time per cycle and per create on each, and on
# Citus the calls routed to each worker and the statements it ran on our
# shards during the cycles (pg_stat_statements); and the same cycles with
# the calls made on the node that holds the tenant.
# Wall time on a shared machine: compare the two lines of one run, not runs.
# Run as root.
set -eu
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
chmod -R a+rX "$work"

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# run_on LABEL KEY [fresh]: create N workloads (keys KEY1..KEYN), then the N
# cycles, on the server in PGHOST/PGPORT; fresh: make the extension again first
run_on() {
	local t0 create_ms cycle_ms
	[ "${3:-}" = fresh ] && psql -X -q -v ON_ERROR_STOP=1 -f "$WL_ROOT/test/include/helpers.sql" >/dev/null
	t0=$(date +%s%N)
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT t.create('$2' || i, '{}', 'bench') FROM generate_series(1, $N) i" >/dev/null
	create_ms=$(ms_since "$t0")
	if [ -n "${WL_CITUS_TMP:-}" ]; then
		for w in w1 w2; do wl_citus_psql "$w" -qAt -c 'SELECT pg_stat_statements_reset()' >/dev/null; done
	fi
	t0=$(date +%s%N)
	psql -X -q -f "$work/cycle.sql" >/dev/null
	cycle_ms=$(ms_since "$t0")
	local done_n
	done_n=$(psql -X -qAt -c "SELECT count(*) FROM workload.workloads w JOIN workload.specs s
		ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
		WHERE w.tenant_id = 'bench' AND s.tenant_id = 'bench' AND s.idempotency_key LIKE '$2%' AND w.state = 'SUCCEEDED'")
	printf '| %s | %d | %d | %.2f | %.2f |\n' "$1" "$N" "$done_n" \
		"$(echo "$create_ms / $N" | bc -l)" "$(echo "$cycle_ms / $N" | bc -l)"
}

echo "| where | workloads | succeeded | ms per create | ms per claim+start+complete |"
echo "|---|---|---|---|---|"
wl_cluster_start >/dev/null
psql -X -q -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload'
run_on "single node" k fresh
wl_cluster_stop

export WL_CITUS_LIBS='citus,workload,pg_stat_statements' WL_CITUS_DB=wl
# the background tick (every second by default) scans every worker; kept out of the count
wl_citus_start "workload.tick_interval = '1h'" >/dev/null
trap 'wl_citus_stop; rm -rf "$work"' EXIT
psql -X -q -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' -c 'CREATE EXTENSION pg_stat_statements'
# calls NODE: the routed calls (workload.route_*) and statements on our shards NODE ran
calls() {
	wl_citus_psql "$1" -qAt -c "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query ~ 'workload\.(route_|(workload_rows|queue|leases|specs|events|attempts|results)_[0-9]+)'"
}
run_on "Citus, calls made on the coordinator" k fresh
node=$(psql -X -qAt -c "SELECT CASE port WHEN $WL_CITUS_W1_PORT THEN 'w1' ELSE 'w2' END FROM workload_tenant_node('bench')")
other=$([ "$node" = w1 ] && echo w2 || echo w1)
through="$(calls "$node") on $node, $(calls "$other") on $other"
# the same, with the calls made on the node that holds the tenant (as the
# reference worker makes them)
PGPORT=$(wl_citus_port "$node") run_on "Citus, calls made on the tenant's node" n
echo "# tenant bench is on $node; routed calls and shard statements during the cycles through the coordinator: $through"
echo "# ... and during the cycles on $node: $(calls "$node") on $node, $(calls "$other") on $other"
