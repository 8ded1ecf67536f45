# test/t/citus_lib.sh: sourced by the Citus cluster tests (test/t/025, 026, 030, 031);
# not a test itself.  Builds and installs the extension, makes Citus
# available (scripts/citus.sh, wl_citus_build: the server's own Citus, else
# one built from CITUS_SRC or ../shared/citus), and gives the helpers below
# beside test/tap.sh's.  Without Citus and without a source to build it
# from, the test reports itself skipped, with the reason.  Output is TAP.
#   on NODE [psql args]         psql on one node, quiet, tuples only
#   eq GOT WANT                 true when equal, else both on stderr (for check)
#   wait_on SECONDS NODE SQL WANT   wait_for on one node
#   workload_cluster            a cluster with the extension made and distributed
set -u
WL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$WL_ROOT/scripts/citus.sh"
. "$WL_ROOT/test/tap.sh"
wl_need_root
wl_install_deps
wl_build >/dev/null
citus_log="${TMPDIR:-/tmp}/workload-citus-build.$$.log"
wl_citus_build >"$citus_log" 2>&1
case $? in
0) rm -f "$citus_log" ;;
2)
	reason=$(tail -n 1 "$citus_log")
	rm -f "$citus_log"
	skip_all "$reason"
	;;
*)
	not_ok "Citus builds for $PG_CONFIG"
	note "$(tail -n 20 "$citus_log")"
	rm -f "$citus_log"
	done_testing
	exit 1
	;;
esac

on() {
	local node=$1
	shift
	PGOPTIONS='-c client_min_messages=warning' wl_citus_psql "$node" -qAt "$@"
}
eq() { [ "$1" = "$2" ] || { echo "#   got '$1', expected '$2'" >&2; return 1; }; }
wait_on() {
	wait_for "$1" "$3" "$4" -h "$WL_CITUS_TMP" -p "$(wl_citus_port "$2")" -U postgres -d "${WL_CITUS_DB:-postgres}"
}

# workload_cluster: a cluster with citus and workload preloaded on every
# node, database wl, each node's tick every 200 ms, the extension made and
# distributed through the coordinator; T is the cluster's directory
workload_cluster() {
	export WL_CITUS_LIBS='citus,workload' WL_CITUS_DB=wl
	wl_citus_start "workload.database = 'wl'" "workload.tick_interval = '200ms'" >/dev/null
	T=$WL_CITUS_TMP
	on coord -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' >/dev/null
	on coord -c 'SELECT workload_citus_distribute()' >/dev/null
}
