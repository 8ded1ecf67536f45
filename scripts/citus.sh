# scripts/citus.sh: a real local Citus cluster (a coordinator and two workers)
# for the test, demo and bench commands.  Sourced after setting WL_ROOT, like
# scripts/cluster.sh (which it sources for PG_CONFIG, wl_need_root, wl_build,
# wl_free_port):
#
#   WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
#   . "$WL_ROOT/scripts/citus.sh"
#   wl_need_root; wl_install_deps; wl_build
#   wl_citus_build || exit        # installed, or built from CITUS_SRC or ../shared/citus
#   wl_citus_start                  # coordinator in PGHOST/PGPORT, workers beside it
#   psql -c 'CREATE EXTENSION workload CASCADE'
#   ...
#   wl_citus_stop                   # also run on exit
#
# Each node is its own PostgreSQL server of the PG_CONFIG installation, run as
# the postgres OS user, all in one temporary directory, each on its own free
# port, with shared_preload_libraries = $WL_CITUS_LIBS (default 'citus';
# 'citus,workload' preloads our library too; citus must come first),
# wal_level = logical (shard moves) and max_prepared_transactions = 100 (two-
# phase commit).  The nodes reach each other over TCP on localhost with trust
# authentication and without SSL.
#
# Exports: WL_CITUS_COORD_PORT, WL_CITUS_W1_PORT, WL_CITUS_W2_PORT (the ports;
# WL_CITUS_<NAME>_PORT for a worker added later), WL_CITUS_NODES (the node
# names), WL_CITUS_TMP (the directory: sockets, data in <node>/, logs
# <node>.log), WL_CITUS_DB (the database made distributed, default postgres),
# and PGHOST, PGPORT, PGUSER, PGDATABASE pointing at the coordinator.

WL_ROOT=${WL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
. "$WL_ROOT/scripts/cluster.sh"

# wl_citus_installed: whether the PostgreSQL of PG_CONFIG has Citus (its
# library and control file), from the Citus packages or built before.
wl_citus_installed() {
	[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] &&
		[ -f "$("$PG_CONFIG" --sharedir)/extension/citus.control" ]
}

# wl_citus_source: the Citus source to build when none is installed: the
# tarball (or unpacked tree) CITUS_SRC names, else the folder ../shared/citus
# beside the clone (one level further up from a worktree), which the
# project's own machines keep with Citus 13.2.2 and its build.sh.  Prints
# the path; false, saying so on stderr, when there is none.
wl_citus_source() {
	local d
	if [ -n "${CITUS_SRC:-}" ]; then
		if [ -e "$CITUS_SRC" ]; then
			(cd "$(dirname "$CITUS_SRC")" && echo "$(pwd)/$(basename "$CITUS_SRC")")
			return
		fi
		echo "CITUS_SRC names $CITUS_SRC, which does not exist" >&2
		return 1
	fi
	for d in "$WL_ROOT/../shared/citus" "$WL_ROOT/../../shared/citus"; do
		if [ -x "$d/build.sh" ]; then
			(cd "$d" && pwd)
			return
		fi
	done
	echo "Citus is not installed in the PostgreSQL of $PG_CONFIG, and no source was given:" \
		"install Citus 13.2 for PostgreSQL 15 (docs/install.md, \"Citus\")," \
		"or set CITUS_SRC to a Citus source tarball" >&2
	return 1
}

# wl_citus_elapsed T0: seconds since T0 (date +%s%N), one decimal.
wl_citus_elapsed() {
	local ms=$((($(date +%s%N) - $1) / 1000000))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

# wl_citus_build_from SRC: build and install Citus from a source tarball or
# tree into the PostgreSQL of PG_CONFIG (the build packages from apt first).
# Where the server's headers declare have_createdb_privilege() (15.20 does),
# Citus 13.2's own static copy of it for PostgreSQL 15 no longer compiles:
# the copy is dropped for the server's.
wl_citus_build_from() {
	local src=$1 work dir missing="" p compat
	for p in liblz4-dev libzstd-dev libcurl4-openssl-dev libkrb5-dev; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	fi
	work=$(mktemp -d /tmp/citus-build.XXXXXX)
	if [ -d "$src" ]; then
		cp -a "$src/." "$work/"
		dir=$work
	else
		tar -xzf "$src" -C "$work" || { rm -rf "$work"; return 1; }
		dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	fi
	compat="$dir/src/include/pg_version_compat.h"
	if grep -q have_createdb_privilege "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h" &&
		grep -q '^have_createdb_privilege(void)' "$compat" 2>/dev/null; then
		perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n/#include "commands\/dbcommands.h"\n/s' "$compat"
	fi
	(
		cd "$dir" &&
			PATH="$WL_PG_BIN:$PATH" ./configure --quiet >/dev/null &&
			make -s -j"$(nproc)" with_llvm=no >/dev/null &&
			make -s install with_llvm=no >/dev/null
	)
	local rc=$?
	rm -rf "$work"
	return $rc
}

# wl_citus_build: make Citus available to the PostgreSQL of PG_CONFIG: use
# it when installed, else build it from wl_citus_source (through the
# folder's build.sh when it has one).  Returns 0 when Citus is there, 2 (the
# reason on stderr) when it is not installed and there is no source, 1 when
# a build failed.
wl_citus_build() {
	local src t0
	if wl_citus_installed; then
		echo "== Citus is installed in the PostgreSQL of $PG_CONFIG"
		return 0
	fi
	src=$(wl_citus_source) || return 2
	t0=$(date +%s%N)
	echo "== building Citus from $src for $PG_CONFIG"
	if [ -x "$src/build.sh" ]; then
		PATH="$WL_PG_BIN:$PATH" bash "$src/build.sh" || return 1
	else
		wl_citus_build_from "$src" || return 1
	fi
	echo "== Citus build: $(wl_citus_elapsed "$t0") s"
}

# wl_citus_port NODE: the port of a node (coord, w1, w2, or a worker added later).
wl_citus_port() {
	local var="WL_CITUS_${1^^}_PORT"
	if [ -z "${!var:-}" ]; then
		echo "unknown node $1" >&2
		return 1
	fi
	echo "${!var}"
}

# wl_citus_psql NODE [psql args...]: psql as postgres on one node's database.
wl_citus_psql() {
	local node=$1
	shift
	psql -X -v ON_ERROR_STOP=1 -h "$WL_CITUS_TMP" -p "$(wl_citus_port "$node")" -U postgres \
		-d "${WL_CITUS_DB:-postgres}" "$@"
}

# wl_citus_new_port: a free port no node of this cluster uses yet.
wl_citus_new_port() {
	local port node taken
	while :; do
		port=$(wl_free_port)
		taken=""
		for node in ${WL_CITUS_NODES:-}; do
			[ "$(wl_citus_port "$node")" = "$port" ] && taken=1
		done
		[ -z "$taken" ] && break
	done
	echo "$port"
}

# wl_citus_init NODE: initdb, configure and start one node, then CREATE
# EXTENSION citus in $WL_CITUS_DB there.  The node starts on the port in
# WL_CITUS_<NODE>_PORT, or on another free one when a server of someone else
# took that port meanwhile; the port it runs on is left in $WL_CITUS_TMP/NODE.port.
wl_citus_init() {
	local node=$1 port try
	port=$(wl_citus_port "$node")
	runuser -u postgres -- "$WL_PG_BIN/initdb" -D "$WL_CITUS_TMP/$node" -A trust -E UTF8 \
		--locale=C.UTF-8 >"$WL_CITUS_TMP/$node-initdb.log" 2>&1 \
		|| { cat "$WL_CITUS_TMP/$node-initdb.log"; return 1; }
	{
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
		cat "$WL_CITUS_TMP/extra.conf"
	} >>"$WL_CITUS_TMP/$node/postgresql.conf"
	for try in 1 2 3 4 5; do
		echo "port = $port" >>"$WL_CITUS_TMP/$node/postgresql.conf"
		export "WL_CITUS_${node^^}_PORT=$port"
		wl_citus_node "$node" start >/dev/null && break
		grep -q "already in use" "$WL_CITUS_TMP/$node.log" && [ "$try" != 5 ] \
			|| { tail -n 20 "$WL_CITUS_TMP/$node.log"; return 1; }
		port=$(wl_citus_new_port)
	done
	echo "$port" >"$WL_CITUS_TMP/$node.port"
	if [ "$WL_CITUS_DB" != postgres ]; then
		wl_citus_psql "$node" -d postgres -qc "CREATE DATABASE \"$WL_CITUS_DB\"" >/dev/null 2>&1
	fi
	wl_citus_psql "$node" -qc "CREATE EXTENSION citus" >/dev/null
}

# wl_citus_start [extra postgresql.conf lines...]: start the coordinator and
# two workers (the extra lines go to every node, also to workers added later),
# register the coordinator and add both workers.
wl_citus_start() {
	local t0 node line pids=""
	t0=$(date +%s%N)
	WL_CITUS_TMP=$(mktemp -d /tmp/workload-citus.XXXXXX)
	chown postgres: "$WL_CITUS_TMP"
	WL_CITUS_DB=${WL_CITUS_DB:-postgres}
	WL_CITUS_NODES=""
	export WL_CITUS_TMP WL_CITUS_DB WL_CITUS_NODES
	for line in "$@"; do echo "$line"; done >"$WL_CITUS_TMP/extra.conf"
	trap 'wl_citus_stop; wl_cluster_stop' EXIT
	for node in coord w1 w2; do
		export "WL_CITUS_${node^^}_PORT=$(wl_citus_new_port)"
		WL_CITUS_NODES="$WL_CITUS_NODES $node"
	done
	# the three initdb runs are the slow part; run them side by side
	for node in $WL_CITUS_NODES; do
		(wl_citus_init "$node") &
		pids="$pids $!"
	done
	for p in $pids; do
		wait "$p" || exit 1
	done
	for node in $WL_CITUS_NODES; do
		export "WL_CITUS_${node^^}_PORT=$(cat "$WL_CITUS_TMP/$node.port")"
	done
	wl_citus_psql coord -qAt >/dev/null <<-SQL
		SELECT citus_set_coordinator_host('localhost', $WL_CITUS_COORD_PORT);
		SELECT citus_add_node('localhost', $WL_CITUS_W1_PORT);
		SELECT citus_add_node('localhost', $WL_CITUS_W2_PORT);
	SQL
	export PGHOST=$WL_CITUS_TMP PGPORT=$WL_CITUS_COORD_PORT PGUSER=postgres PGDATABASE=$WL_CITUS_DB
	echo "== Citus cluster: coordinator $WL_CITUS_COORD_PORT, workers $WL_CITUS_W1_PORT $WL_CITUS_W2_PORT" \
		"($WL_CITUS_TMP, up in $(wl_citus_elapsed "$t0") s)"
}

# wl_citus_add_worker NAME: start one more worker like the others and add it
# to the cluster (citus_add_node); its port goes to WL_CITUS_<NAME>_PORT.
wl_citus_add_worker() {
	local node=$1
	export "WL_CITUS_${node^^}_PORT=$(wl_citus_new_port)"
	WL_CITUS_NODES="$WL_CITUS_NODES $node"
	wl_citus_init "$node" || return 1
	wl_citus_psql coord -qAt -c "SELECT citus_add_node('localhost', $(wl_citus_port "$node"))" >/dev/null
}

# wl_citus_node NODE start|stop|restart|kill: one node's server.  kill sends
# SIGKILL to its postmaster and waits until it is gone (a crash; start brings
# it back through crash recovery).
wl_citus_node() {
	local node=$1 action=$2 dir="$WL_CITUS_TMP/$1" pid
	case $action in
	start | restart)
		runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$dir" -l "$WL_CITUS_TMP/$node.log" -w "$action" \
			>/dev/null 2>&1 || { tail -n 20 "$WL_CITUS_TMP/$node.log"; return 1; }
		;;
	stop)
		runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
		;;
	kill)
		pid=$(head -n 1 "$dir/postmaster.pid")
		kill -KILL "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
		;;
	*)
		echo "wl_citus_node: unknown action $action" >&2
		return 1
		;;
	esac
}

# wl_citus_stop: stop every node (fast) and remove the directory.
wl_citus_stop() {
	local node
	if [ -n "${WL_CITUS_TMP:-}" ]; then
		for node in ${WL_CITUS_NODES:-}; do
			if [ -f "$WL_CITUS_TMP/$node/postmaster.pid" ]; then
				runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_CITUS_TMP/$node" -m fast -w stop \
					>/dev/null 2>&1 || true
			fi
		done
		rm -rf "$WL_CITUS_TMP"
		WL_CITUS_TMP=""
	fi
}
