# scripts/citus-probe/lib.sh: sourced by every probe.  Restores the running probe
# cluster's environment (written by run.sh) and defines c, w1, w2 (psql on a node).
P=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WL_ROOT=$(cd "$P/../.." && pwd)
. "${CITUS_PROBE_ENV:-/tmp/citus-probe.env}"
. "$WL_ROOT/scripts/citus.sh"
c() { wl_citus_psql coord "$@"; }
w1() { wl_citus_psql w1 "$@"; }
w2() { wl_citus_psql w2 "$@"; }
mkdir -p "$OUT/bench"
cd "$OUT"
# port_of TENANT: the port of the node holding the tenant's shard of m.workloads.
port_of() {
	c -qAt -c "SELECT nodeport FROM pg_dist_placement JOIN pg_dist_node USING (groupid) WHERE shardid = get_shard_id_for_distribution_column('m.workloads', '$1')"
}
# other_worker PORT: the port of the other one of w1 and w2.
other_worker() {
	if [ "$1" = "$WL_CITUS_W1_PORT" ]; then echo "$WL_CITUS_W2_PORT"; else echo "$WL_CITUS_W1_PORT"; fi
}
# node_of TENANT: w1 or w2, whichever holds the tenant.
node_of() {
	if [ "$(port_of "$1")" = "$WL_CITUS_W1_PORT" ]; then echo w1; else echo w2; fi
}
