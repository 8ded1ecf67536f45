# test/reliability/lib.sh: sourced by the reliability scenarios (not a test
# itself).  The TAP helpers (test/tap.sh), throwaway PostgreSQL nodes that a
# scenario can kill and restart (each in its own temporary directory, run as
# the postgres OS user, node-specific settings on the command line so that
# pg_basebackup and pg_rewind can copy configuration files between nodes),
# the C drivers (rlworker, rlfuzz) compiled into the scenario's directory,
# the invariant check, and a cleanup trap that stops everything the scenario
# started.
set -uo pipefail
RL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WL_ROOT=$(cd "$RL_DIR/../.." && pwd)
# RL_PG_BIN: the server to test (default the installed PostgreSQL 15; point it
# at a relocated copy to test another build of the extension, e.g. under ASan)
RL_PG_BIN=${RL_PG_BIN:-$(dirname "${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}")}
# RL_PG_ENV: extra environment for the server processes, e.g.
# "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libasan.so.8 ASAN_OPTIONS=..." (README.md)
RL_PG_ENV=${RL_PG_ENV:-}
RL_NAME=$(basename "$0" .sh)
RL_LONG=0
RL_PIDS=()           # background drivers we started
RL_NODES=()          # node names we started
declare -A RL_NODE_DIR=() RL_NODE_PORT=() RL_NODE_OPTS=()

for a in "$@"; do
	case "$a" in
		--long) RL_LONG=1 ;;
	esac
done

. "$WL_ROOT/test/tap.sh"

# rl_setup [DRIVER...]: checks, the scenario's directory, the cleanup trap
rl_setup() {
	[ "$(id -u)" = 0 ] || bail "run as root (clusters run as the postgres OS user)"
	[ -x "$RL_PG_BIN/postgres" ] || bail "PostgreSQL 15 is not installed (run test/run-all.sh or scripts/cluster.sh's wl_install_deps)"
	[ -f "$("$RL_PG_BIN/pg_config" --sharedir)/extension/workload.control" ] \
		|| bail "the extension is not installed (make install, or test/run-all.sh)"
	RL_TMP=$(mktemp -d "/tmp/wl-rel-$RL_NAME.XXXXXX")
	chmod 755 "$RL_TMP"
	trap rl_cleanup EXIT
	trap 'exit 130' INT TERM
	rl_build_drivers "$@"
	# a scenario never talks to a cluster it did not start
	unset PGHOST PGPORT PGDATABASE PGSERVICE PGOPTIONS
	export PGUSER=postgres
}

# rl_build_drivers NAME...: compile test/reliability/NAME.c into $RL_TMP
rl_build_drivers() {
	local inc libdir d
	inc=$("$RL_PG_BIN/pg_config" --includedir)
	libdir=$("$RL_PG_BIN/pg_config" --libdir)
	for d in "$@"; do
		gcc -O1 -g -Wall -Wextra -Werror -Wno-unused-parameter -I"$inc" \
			"$RL_DIR/$d.c" -o "$RL_TMP/$d" -L"$libdir" -lpq >"$RL_TMP/build-$d.log" 2>&1 \
			|| { cat "$RL_TMP/build-$d.log"; bail "could not build $d"; }
	done
}

# rl_free_port: a TCP port nobody listens on (a random start, so that two
# test runs on one machine rarely race for the same port)
rl_free_port() {
	local i port
	for i in $(seq 1 200); do
		port=$((56000 + (RANDOM % 2000)))
		if ! (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null \
			&& ! printf '%s\n' "${RL_NODE_PORT[@]:-}" | grep -qx "$port"; then
			echo "$port"; return
		fi
	done
	bail "no free port"
}

# rl_node_init NAME [postgresql.conf lines...]: initdb a new node (not started)
rl_node_init() {
	local name=$1; shift
	local dir="$RL_TMP/$name"
	mkdir -p "$dir"; chown postgres: "$dir"
	runuser -u postgres -- "$RL_PG_BIN/initdb" -D "$dir/data" -A trust -E UTF8 --locale=C.UTF-8 \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; bail "initdb $name failed"; }
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "fsync = on"
		echo "log_min_messages = warning"
		echo "log_line_prefix = '%m [%p] %a '"
		for line in "$@"; do echo "$line"; done
	} >>"$dir/data/postgresql.conf"
	rl_node_register "$name"
}

# rl_node_register NAME: a data directory made by other means (pg_basebackup)
rl_node_register() {
	local name=$1
	RL_NODE_DIR[$name]="$RL_TMP/$name"
	RL_NODE_PORT[$name]=$(rl_free_port)
	RL_NODE_OPTS[$name]="-p ${RL_NODE_PORT[$name]} -c unix_socket_directories=$RL_TMP/$name -c cluster_name=$name"
	RL_NODES+=("$name")
}

# rl_node_start NAME: starts the node.  At its first start, a port another
# process took between rl_free_port and the start ("could not create any
# TCP/IP sockets") is given up for another, up to five times; later starts
# keep the port (a standby's or a driver's connection string names it).
declare -A RL_NODE_STARTED=()
rl_node_start() {
	local name=$1 dir=${RL_NODE_DIR[$1]} try
	for try in 1 2 3 4 5; do
		# shellcheck disable=SC2086
		if runuser -u postgres -- env $RL_PG_ENV "$RL_PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
			-o "${RL_NODE_OPTS[$name]}" -t 120 -w start >/dev/null 2>&1; then
			RL_NODE_STARTED[$name]=1
			return 0
		fi
		[ -z "${RL_NODE_STARTED[$name]:-}" ] && tail -n 5 "$dir/server.log" | grep -q 'could not create any TCP/IP sockets' \
			|| break
		echo "#   $name: port ${RL_NODE_PORT[$name]} was taken, trying another" >&2
		RL_NODE_PORT[$name]=$(rl_free_port)
		RL_NODE_OPTS[$name]="-p ${RL_NODE_PORT[$name]} -c unix_socket_directories=$RL_TMP/$name -c cluster_name=$name"
	done
	tail -n 30 "$dir/server.log" | sed 's/^/#   /'
	return 1
}

# rl_node_stop NAME: a fast shutdown, or an immediate one when a backend
# does not go away (one waiting for a synchronous standby that is gone)
rl_node_stop() {
	local dir=${RL_NODE_DIR[$1]}
	[ -f "$dir/data/postmaster.pid" ] || return 0
	runuser -u postgres -- "$RL_PG_BIN/pg_ctl" -D "$dir/data" -m fast -t 30 -w stop >/dev/null 2>&1 \
		|| runuser -u postgres -- "$RL_PG_BIN/pg_ctl" -D "$dir/data" -m immediate -t 30 -w stop >/dev/null 2>&1
}

rl_node_pid() {
	local f="${RL_NODE_DIR[$1]}/data/postmaster.pid"
	[ -f "$f" ] && head -n 1 "$f"
}

# rl_node_kill NAME [all]: SIGKILL the postmaster (with "all", its children in
# the same instant, as when the machine dies), then wait until every process
# of the old server is gone, so that it can be restarted
rl_node_kill() {
	local name=$1 mode=${2:-postmaster} pm kids p end
	pm=$(rl_node_pid "$name") || return 1
	kids=$(ps -o pid= --ppid "$pm" | tr -d ' ' | tr '\n' ' ')
	if [ "$mode" = all ]; then
		# shellcheck disable=SC2086
		kill -KILL "$pm" $kids 2>/dev/null
	else
		kill -KILL "$pm" 2>/dev/null
	fi
	end=$((SECONDS + 20))
	for p in $pm $kids; do
		while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.05; done
		# a backend that has not noticed its postmaster's death yet
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	for p in $pm $kids; do
		while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
	done
	return 0
}

# rl_node_conninfo NAME [dbname]: a libpq connection string
rl_node_conninfo() {
	echo "host=$RL_TMP/$1 port=${RL_NODE_PORT[$1]} user=postgres dbname=${2:-postgres}"
}

# rl_psql NAME DB SQL: one query, unaligned, no headers (at most 10 minutes)
rl_psql() {
	timeout 600 psql -X -qAt -v ON_ERROR_STOP=1 -h "$RL_TMP/$1" -p "${RL_NODE_PORT[$1]}" -U postgres -d "$2" -c "$3"
}

# rl_setup_db NAME DB: the extension, a signed grant in $RL_TMP/grant.json,
# a login role for workers and clients (rl_worker) that is a member of tenant
# t1 / application app, and rl.spec(key) for the tests' own SQL
rl_setup_db() {
	local node=$1 db=$2
	rl_psql "$node" postgres "CREATE DATABASE $db" >/dev/null || return 1
	psql -X -q -v ON_ERROR_STOP=1 -h "$RL_TMP/$node" -p "${RL_NODE_PORT[$node]}" -U postgres -d "$db" \
		-f "$RL_DIR/setup.sql" >"$RL_TMP/setup-$db.log" 2>&1 \
		|| { sed 's/^/#   /' "$RL_TMP/setup-$db.log"; return 1; }
	rl_psql "$node" "$db" "SELECT rl.grant()" >"$RL_TMP/grant.json"
}

# rl_invariants NAME DB [psql -v assignments...]: runs invariants.sql and
# turns its "ok - ..." / "not ok - ..." lines into numbered TAP lines; with
# RL_INV_LABEL set, into one TAP line with that label (failures as notes)
rl_invariants() {
	local node=$1 db=$2 out line bad=0 a; shift 2
	out="$RL_TMP/invariants.$TAP_N.out"
	local args=()
	for a in "$@"; do args+=(-v "$a"); done
	timeout 300 psql -X -qAt -h "$RL_TMP/$node" -p "${RL_NODE_PORT[$node]}" -U postgres -d "$db" \
		"${args[@]}" -f "$RL_DIR/invariants.sql" >"$out" 2>&1
	if ! grep -q '^ok - ' "$out" || grep -q 'ERROR' "$out"; then
		not_ok "${RL_INV_LABEL:-invariants.sql runs}"; sed 's/^/#   /' "$out" | head -n 30; return 1
	fi
	if [ -n "${RL_INV_LABEL:-}" ]; then
		if grep -q '^not ok - ' "$out"; then
			not_ok "$RL_INV_LABEL"; grep -v '^ok - ' "$out" | sed 's/^/#   /'; return 1
		fi
		ok "$RL_INV_LABEL ($(grep -c '^ok - ' "$out") invariants)"
		return 0
	fi
	while IFS= read -r line; do
		case "$line" in
			"ok - "*) ok "${line#ok - }" ;;
			"not ok - "*) not_ok "${line#not ok - }"; bad=1 ;;
			"#"*) echo "$line" ;;
			*) note "  $line" ;;
		esac
	done <"$out"
	return $bad
}

# rl_driver_files DIR: the drivers' records in DIR/*.log as the files
# invariants.sql reads (DIR/creates, acks, claims) and the psql assignments
# for them in RL_FILES
rl_driver_files() {
	local d=$1
	cat "$d"/*.log 2>/dev/null | awk -F'\t' -v d="$d" '
		$1 == "CREATED" { print $2 > (d "/creates") }
		$1 == "ACK"     { print $2 "\t" $3 "\t" $4 "\t" $5 > (d "/acks") }
		$1 == "CLAIM"   { print $2 "\t" $3 "\t" $4 > (d "/claims") }'
	touch "$d/creates" "$d/acks" "$d/claims"
	RL_FILES=("creates=$d/creates" "acks=$d/acks" "claims=$d/claims")
}

# rl_count DIR TYPE: how many records of TYPE the drivers wrote
rl_count() { cat "$1"/*.log 2>/dev/null | grep -c "^$2	" || true; }

# rl_summary DIR KEY: the sum of KEY=n over the drivers' SUMMARY lines
rl_summary() {
	cat "$1"/*.log 2>/dev/null | grep '^SUMMARY' | tr '\t' '\n' | awk -F= -v k="$2" '$1 == k { s += $2 } END { print s + 0 }'
}

# rl_bg COMMAND...: start a driver in the background and remember its pid
rl_bg() {
	"$@" &
	RL_PIDS+=($!)
}

# rl_stop_drivers: SIGTERM each driver we started (and SIGCONT, in case it is
# stopped), wait up to 30 s, then SIGKILL what is left
rl_stop_drivers() {
	local p end
	for p in "${RL_PIDS[@]:-}"; do
		[ -n "$p" ] || continue
		kill -TERM "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null
	done
	end=$((SECONDS + 30))
	for p in "${RL_PIDS[@]:-}"; do
		[ -n "$p" ] || continue
		while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	RL_PIDS=()
}

rl_signal_drivers() {
	local p
	for p in "${RL_PIDS[@]:-}"; do [ -n "$p" ] && kill "-$1" "$p" 2>/dev/null; done
}

rl_cleanup() {
	local n
	trap - EXIT
	rl_stop_drivers
	rl_library_restore
	for n in "${RL_NODES[@]:-}"; do
		[ -n "$n" ] || continue
		rl_node_stop "$n" || rl_node_kill "$n" all
	done
	if [ "$TAP_FAILED" != 0 ] || [ "${RL_KEEP:-0}" = 1 ]; then
		for n in "${RL_NODES[@]:-}"; do
			[ -n "$n" ] && [ -f "$RL_TMP/$n/server.log" ] || continue
			note "--- $n/server.log (last 25 lines)"
			tail -n 25 "$RL_TMP/$n/server.log" | sed 's/^/#   /'
		done
	fi
	if [ "${RL_KEEP:-0}" = 1 ]; then
		note "kept $RL_TMP"
	else
		rm -rf "$RL_TMP"
	fi
}

# ---- the library of each released version (the upgrade walk) ----

RL_LIBDIR=""
RL_LIB_SAVED=""

# rl_library_build VERSION: builds, from git, the library that VERSION
# shipped with (test/reliability/versions.txt), into $RL_TMP/lib/VERSION
rl_library_build() {
	local v=$1 commit src
	commit=$(awk -v v="$v" '$1 == v { print $2 }' "$RL_DIR/versions.txt")
	[ -n "$commit" ] || bail "test/reliability/versions.txt names no commit for version $v"
	src="$RL_TMP/src-$v"
	mkdir -p "$src" "$RL_TMP/lib/$v"
	git -C "$WL_ROOT" cat-file -e "$commit^{commit}" 2>/dev/null \
		|| git -C "$WL_ROOT" fetch -q origin "$commit" 2>/dev/null \
		|| bail "the source of version $v (commit $commit) is not in this clone's history"
	git -C "$WL_ROOT" archive "$commit" | tar -x -C "$src" || bail "could not unpack version $v"
	make -s -C "$src" with_llvm=no PG_CONFIG="$RL_PG_BIN/pg_config" workload.so >"$RL_TMP/build-lib-$v.log" 2>&1 \
		|| { cat "$RL_TMP/build-lib-$v.log"; bail "could not build the library of version $v"; }
	cp "$src/workload.so" "$RL_TMP/lib/$v/workload.so"
}

# rl_library_use VERSION|current: installs that library as the server's
# workload.so (new connections load it); the tested one comes back at exit
rl_library_use() {
	RL_LIBDIR=${RL_LIBDIR:-$("$RL_PG_BIN/pg_config" --pkglibdir)}
	if [ -z "$RL_LIB_SAVED" ]; then
		mkdir -p "$RL_TMP/lib/current"
		cp "$RL_LIBDIR/workload.so" "$RL_TMP/lib/current/workload.so"
		RL_LIB_SAVED=1
	fi
	[ -f "$RL_TMP/lib/$1/workload.so" ] || rl_library_build "$1"
	install -m 755 "$RL_TMP/lib/$1/workload.so" "$RL_LIBDIR/workload.so"
}

rl_library_restore() {
	if [ -n "$RL_LIB_SAVED" ]; then
		install -m 755 "$RL_TMP/lib/current/workload.so" "$RL_LIBDIR/workload.so"
		RL_LIB_SAVED=""
	fi
}

# rl_wait_until SECONDS NODE DB SQL: until the query answers t (wait_for on that node)
rl_wait_until() {
	wait_for "$1" "$4" t -h "$RL_TMP/$2" -p "${RL_NODE_PORT[$2]}" -U postgres -d "$3"
}

# rl_rand LO HI: a number in [LO, HI] from bash's RANDOM (seeded by RL_SEED)
rl_rand() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }

# rl_summary_max DIR KEY: the largest KEY=n over the drivers' SUMMARY lines
rl_summary_max() {
	cat "$1"/*.log 2>/dev/null | grep '^SUMMARY' | tr '\t' '\n' | awk -F= -v k="$2" '$1 == k && $2 > m { m = $2 } END { print m + 0 }'
}
