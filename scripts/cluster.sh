# scripts/cluster.sh: sourced by the test, demo and bench commands.
# Installs what a fresh Debian 12 machine lacks, builds and installs the
# extension, and runs a throwaway PostgreSQL 15 cluster as the postgres OS
# user in a temporary directory on a free port.  wl_cluster_stop (also run
# on exit) stops it and removes the directory.

# PG_CONFIG picks the PostgreSQL to build against, install into and run
# (default the Debian server).  A private copy of it (scripts/dev-pg.sh) lets
# several checkouts on one machine test side by side.
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
WL_PG_BIN=$(dirname "$PG_CONFIG")

wl_need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "run this as root (it installs packages and runs the cluster as the postgres user)" >&2
		exit 1
	fi
}

# wl_install_deps: the packages the build and tests need, each only if missing.
wl_install_deps() {
	local missing=""
	for p in postgresql-15 postgresql-server-dev-15 libpq-dev libipc-run-perl make gcc; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "== installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null
		apt-get install -y -qq $missing >/dev/null
	fi
}

# wl_build: build and install the extension (and the worker once it exists).
wl_build() {
	echo "== building and installing"
	make -s -j"$(nproc)" -C "$WL_ROOT" >/dev/null
	make -s -C "$WL_ROOT" install >/dev/null
}

wl_free_port() {
	local i port
	# a random start, so that two runs on one machine rarely race for a port
	for i in $(seq 1 200); do
		port=$((54329 + (RANDOM % 1500)))
		if ! (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
			echo "$port"
			return
		fi
	done
	echo "no free port" >&2
	exit 1
}

# wl_cluster_start [extra postgresql.conf lines...]: sets PGHOST, PGPORT, PGUSER, WL_DATA.
# A port another process takes between the check and the start is retried.
wl_cluster_start() {
	WL_TMP=$(mktemp -d /tmp/workload-cluster.XXXXXX)
	chown postgres: "$WL_TMP"
	WL_DATA="$WL_TMP/data"
	export PGHOST="$WL_TMP"
	export PGUSER=postgres
	export PGDATABASE=postgres
	runuser -u postgres -- "$WL_PG_BIN/initdb" -D "$WL_DATA" -A trust -E UTF8 --locale=C.UTF-8 >"$WL_TMP/initdb.log" 2>&1 \
		|| { cat "$WL_TMP/initdb.log"; exit 1; }
	{
		echo "unix_socket_directories = '$WL_TMP'"
		echo "listen_addresses = '127.0.0.1'"
		echo "fsync = on"
		echo "log_min_messages = warning"
		for line in "$@"; do echo "$line"; done
	} >>"$WL_DATA/postgresql.conf"
	trap wl_cluster_stop EXIT
	local try
	for try in 1 2 3 4 5; do
		export PGPORT=$(wl_free_port)
		echo "port = $PGPORT" >>"$WL_DATA/postgresql.conf"	# the last line wins
		if runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -l "$WL_TMP/server.log" \
			-w start >/dev/null; then
			echo "== throwaway cluster on port $PGPORT ($WL_DATA)"
			return 0
		fi
		grep -q 'could not create any TCP/IP sockets' "$WL_TMP/server.log" || break
	done
	cat "$WL_TMP/server.log"
	exit 1
}

wl_cluster_stop() {
	if [ -n "${WL_DATA:-}" ] && [ -f "$WL_DATA/postmaster.pid" ]; then
		runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [ -n "${WL_TMP:-}" ]; then
		rm -rf "$WL_TMP"
		WL_TMP=""
	fi
}
