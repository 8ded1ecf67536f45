# test/t/citus_lib.sh: sourced by the Citus cluster tests (test/t/025, 026);
# not a test itself.  Builds and installs the extension and Citus (from
# ../shared/citus, scripts/citus.sh), then gives the TAP helpers: check,
# on NODE [psql args], eq GOT WANT.  Output is TAP.
set -u
WL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$WL_ROOT/scripts/citus.sh"
wl_need_root
wl_install_deps
wl_build >/dev/null
if ! wl_citus_build >"${TMPDIR:-/tmp}/workload-citus-build.log" 2>&1; then
	echo "not ok 1 - Citus builds from ../shared/citus"
	tail -n 20 "${TMPDIR:-/tmp}/workload-citus-build.log"
	exit 1
fi

. "$WL_ROOT/test/t/tap.sh"
# on NODE [psql args]: one node, quiet, tuples only
on() {
	local node=$1
	shift
	PGOPTIONS='-c client_min_messages=warning' wl_citus_psql "$node" -qAt "$@"
}
eq() { [ "$1" = "$2" ] || { echo "#   got '$1', expected '$2'" >&2; return 1; }; }
