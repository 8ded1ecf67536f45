# scripts/citus.sh: a real local Citus cluster (a coordinator and two workers)
# for the test, demo and bench commands.  Sourced after setting WL_ROOT, like
# scripts/cluster.sh (which it sources for PG_CONFIG, wl_need_root, wl_build,
# wl_free_port):
#
#   WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
#   . "$WL_ROOT/scripts/citus.sh"
#   wl_need_root; wl_install_deps; wl_build; wl_citus_build
#   wl_citus_start                  # coordinator in PGHOST/PGPORT, workers beside it
#   psql -c 'CREATE EXTENSION workload CASCADE'
#   ...
#   wl_citus_stop                   # also run on exit
#
# Each node is its own PostgreSQL server of the PG_CONFIG installation, run as
# the postgres OS user in one temporary directory, on its own free port, with
# shared_preload_libraries = $WL_CITUS_LIBS (default 'citus'; 'citus,workload'
# preloads our library too), wal_level = logical and
# max_prepared_transactions = 100.  The nodes reach each other over TCP on
# localhost with trust authentication and no SSL.
#
# Exports: WL_CITUS_COORD_PORT, WL_CITUS_W1_PORT, WL_CITUS_W2_PORT (the three
# ports), WL_CITUS_TMP (the directory: sockets, data in coord/ w1/ w2/, logs
# *.log), WL_CITUS_DB (the database made distributed, default postgres), and
# PGHOST, PGPORT, PGUSER, PGDATABASE pointing at the coordinator.

WL_ROOT=${WL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
. "$WL_ROOT/scripts/cluster.sh"

WL_CITUS_NODES="coord w1 w2"

# wl_citus_src: the folder holding Citus's source and build.sh.  CI puts
# shared/ beside the clone; a worktree under wt/ has it one level further up.
wl_citus_src() {
	local d
	for d in ${WL_CITUS_SRC:-} "$WL_ROOT/../shared/citus" "$WL_ROOT/../../shared/citus"; do
		if [ -x "$d/build.sh" ]; then
			(cd "$d" && pwd)
			return
		fi
	done
	echo "no Citus source: set WL_CITUS_SRC or put shared/citus beside the clone" >&2
	return 1
}

# wl_citus_build: build and install Citus into the PostgreSQL of PG_CONFIG
# (build.sh runs the pg_config found first in PATH).  A no-op when the same
# Citus is already installed there.
wl_citus_build() {
	local src t0
	src=$(wl_citus_src) || exit 1
	t0=$(date +%s%N)
	echo "== building Citus from $src for $PG_CONFIG"
	PATH="$WL_PG_BIN:$PATH" bash "$src/build.sh"
	echo "== Citus build: $(wl_citus_elapsed "$t0") s"
}

# wl_citus_elapsed T0: seconds since T0 (date +%s%N), one decimal.
wl_citus_elapsed() {
	local ms=$((($(date +%s%N) - $1) / 1000000))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

# wl_citus_port NODE: the port of coord, w1 or w2.
wl_citus_port() {
	case $1 in
	coord) echo "$WL_CITUS_COORD_PORT" ;;
	w1) echo "$WL_CITUS_W1_PORT" ;;
	w2) echo "$WL_CITUS_W2_PORT" ;;
	*) echo "unknown node $1" >&2; return 1 ;;
	esac
}

# wl_citus_psql NODE [psql args...]: psql as postgres on one node's database.
wl_citus_psql() {
	local node=$1
	shift
	psql -X -v ON_ERROR_STOP=1 -h "$WL_CITUS_TMP" -p "$(wl_citus_port "$node")" -U postgres \
		-d "${WL_CITUS_DB:-postgres}" "$@"
}

# wl_citus_start [extra postgresql.conf lines...]: initdb and start the three
# nodes, CREATE EXTENSION citus in $WL_CITUS_DB on each, register the
# coordinator and add both workers.
wl_citus_start() {
	local t0 node port pids="" db=${WL_CITUS_DB:-postgres}
	t0=$(date +%s%N)
	WL_CITUS_TMP=$(mktemp -d /tmp/workload-citus.XXXXXX)
	chown postgres: "$WL_CITUS_TMP"
	export WL_CITUS_TMP WL_CITUS_DB=$db
	WL_CITUS_COORD_PORT=$(wl_free_port)
	WL_CITUS_W1_PORT=$(wl_free_port)
	while [ "$WL_CITUS_W1_PORT" = "$WL_CITUS_COORD_PORT" ]; do WL_CITUS_W1_PORT=$(wl_free_port); done
	WL_CITUS_W2_PORT=$(wl_free_port)
	while [ "$WL_CITUS_W2_PORT" = "$WL_CITUS_COORD_PORT" ] || [ "$WL_CITUS_W2_PORT" = "$WL_CITUS_W1_PORT" ]; do
		WL_CITUS_W2_PORT=$(wl_free_port)
	done
	export WL_CITUS_COORD_PORT WL_CITUS_W1_PORT WL_CITUS_W2_PORT
	trap 'wl_citus_stop; wl_cluster_stop' EXIT
	for node in $WL_CITUS_NODES; do
		runuser -u postgres -- "$WL_PG_BIN/initdb" -D "$WL_CITUS_TMP/$node" -A trust -E UTF8 \
			--locale=C.UTF-8 >"$WL_CITUS_TMP/$node-initdb.log" 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do
		wait "$p" || { cat "$WL_CITUS_TMP"/*-initdb.log; exit 1; }
	done
	for node in $WL_CITUS_NODES; do
		port=$(wl_citus_port "$node")
		{
			echo "port = $port"
			echo "unix_socket_directories = '$WL_CITUS_TMP'"
			echo "listen_addresses = 'localhost'"
			echo "shared_preload_libraries = '${WL_CITUS_LIBS:-citus}'"
			echo "wal_level = logical"
			echo "max_prepared_transactions = 100"
			echo "max_connections = 200"
			echo "fsync = on"
			echo "log_min_messages = warning"
			echo "citus.node_conninfo = 'sslmode=disable'"
			echo "citus.enable_statistics_collection = off"
			local line
			for line in "$@"; do echo "$line"; done
		} >>"$WL_CITUS_TMP/$node/postgresql.conf"
		runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_CITUS_TMP/$node" \
			-l "$WL_CITUS_TMP/$node.log" -w start >/dev/null \
			|| { cat "$WL_CITUS_TMP/$node.log"; exit 1; }
	done
	for node in $WL_CITUS_NODES; do
		if [ "$db" != postgres ]; then
			wl_citus_psql "$node" -d postgres -qc "CREATE DATABASE \"$db\"" >/dev/null
		fi
		wl_citus_psql "$node" -qc "CREATE EXTENSION citus" >/dev/null
	done
	wl_citus_psql coord -qAt >/dev/null <<-SQL
		SELECT citus_set_coordinator_host('localhost', $WL_CITUS_COORD_PORT);
		SELECT citus_add_node('localhost', $WL_CITUS_W1_PORT);
		SELECT citus_add_node('localhost', $WL_CITUS_W2_PORT);
	SQL
	export PGHOST=$WL_CITUS_TMP PGPORT=$WL_CITUS_COORD_PORT PGUSER=postgres PGDATABASE=$db
	echo "== Citus cluster: coordinator $WL_CITUS_COORD_PORT, workers $WL_CITUS_W1_PORT $WL_CITUS_W2_PORT" \
		"($WL_CITUS_TMP, up in $(wl_citus_elapsed "$t0") s)"
}

# wl_citus_stop: stop the nodes (fast) and remove the directory.
wl_citus_stop() {
	local node
	if [ -n "${WL_CITUS_TMP:-}" ]; then
		for node in $WL_CITUS_NODES; do
			if [ -f "$WL_CITUS_TMP/$node/postmaster.pid" ]; then
				runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_CITUS_TMP/$node" -m fast -w stop \
					>/dev/null 2>&1 || true
			fi
		done
		rm -rf "$WL_CITUS_TMP"
		WL_CITUS_TMP=""
	fi
}
