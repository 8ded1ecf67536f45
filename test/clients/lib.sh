# test/clients/lib.sh: sourced by test/clients/python.sh and node.sh; not a
# test itself.  Makes a database of its own on the cluster in PGHOST/PGPORT
# (test/run-all.sh starts one), or starts a throwaway cluster (as root), loads
# setup.sql, and exports the connection strings the tests read:
# WL_ADMIN_DSN (the superuser: signs grants, adds memberships, recovers
# leases), WL_APP_DSN (wlc_app, a workload_client) and WL_WORKER_DSN
# (wlc_worker, a workload_worker); WL_*_URL are the same as URLs.
set -uo pipefail
WL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
C_OWN_CLUSTER=0
c_setup() {
	local db=$1
	if [ -z "${PGHOST:-}" ] || ! psql -X -qAt -d postgres -c 'SELECT 1' >/dev/null 2>&1; then
		. "$WL_ROOT/scripts/cluster.sh"
		wl_need_root
		wl_install_deps
		wl_build >/dev/null
		wl_cluster_start "max_connections = 200" >/dev/null
		C_OWN_CLUSTER=1
	fi
	C_DB=$db
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
	psql -X -qAt -d postgres -c "CREATE DATABASE $db" >/dev/null || { echo "Bail out! no database"; exit 1; }
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$WL_ROOT/test/clients/setup.sql" >/dev/null \
		|| { echo "Bail out! setup failed"; exit 1; }
	local where="host=$PGHOST port=$PGPORT dbname=$db"
	export WL_ADMIN_DSN="$where user=${PGUSER:-postgres}"
	export WL_APP_DSN="$where user=wlc_app"
	export WL_WORKER_DSN="$where user=wlc_worker"
	# the same as URLs (node-postgres reads no key=value strings)
	local q="?host=$PGHOST&port=$PGPORT"
	WL_ADMIN_URL="postgresql://${PGUSER:-postgres}@/$db$q"
	WL_APP_URL="postgresql://wlc_app@/$db$q"
	WL_WORKER_URL="postgresql://wlc_worker@/$db$q"
	trap c_cleanup EXIT
}
c_cleanup() {
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $C_DB WITH (FORCE)" >/dev/null 2>&1
	[ "$C_OWN_CLUSTER" = 1 ] && wl_cluster_stop
	return 0
}
