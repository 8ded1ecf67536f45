# test/t/worker_lib.sh: sourced by the workload-worker end-to-end tests
# (test/t/0NN_*.sh); not a test itself.  Each test gets its own database on
# the cluster in PGHOST/PGPORT when one answers (test/run-all.sh starts one),
# else on a throwaway cluster of its own (scripts/cluster.sh; needs root).
# Output is TAP, through test/tap.sh.
set -uo pipefail
WL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T_NAME=$(basename "$0" .sh)
T_DB="wlt_$(printf '%s' "$T_NAME" | tr -c 'a-z0-9_' '_')"
T_TASK="$WL_ROOT/test/t/worker_task.sh"
T_WORKER=${WL_WORKER:-$("${PG_CONFIG:-pg_config}" --bindir)/workload-worker}
T_OWN_CLUSTER=0
T_RECOVERY_PID=""
declare -A WPID=()
. "$WL_ROOT/test/tap.sh"

# wait_file SECONDS PATH
wait_file() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do [ -s "$2" ] && return 0; sleep 0.1; done
	return 1
}

# wait_exit SECONDS PID: true when the process has ended (it must be our child)
wait_exit() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do kill -0 "$2" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}

# alive PID: the process exists and is not a zombie (a zombie has ended;
# where PID 1 does not reap, orphans stay zombies)
alive() {
	local st
	read -r st 2>/dev/null <"/proc/$1/stat" || return 1
	set -- ${st##*) }
	[ "$1" != Z ]
}

# group_alive PGID: the pids of the live processes of that process group
group_alive() {
	local pgid=$1 f st pid
	for f in /proc/[0-9]*/stat; do
		read -r st 2>/dev/null <"$f" || continue
		pid=${st%% *}
		set -- ${st##*) }
		[ "$1" != Z ] && [ "$3" = "$pgid" ] && echo "$pid"
	done
	return 0
}

# t_kill_later PID...: killed (SIGKILL) when the test ends, whatever happened
T_LEFTOVERS=""
t_kill_later() { T_LEFTOVERS="$T_LEFTOVERS $*"; }

# start_worker ID [worker options...]: runs in the background, log in
# $T_DIR/ID.log; the task gets T_DIR (--env) to write its files in.
# T_AS_USER=name runs it as that OS user instead.
start_worker() {
	local id=$1; shift
	local as=()
	[ -n "${T_AS_USER:-}" ] && as=(setpriv --reuid="$T_AS_USER" --regid="$T_AS_USER" --init-groups --)
	"${as[@]}" "$T_WORKER" --dsn "dbname=$T_DB user=wl_test_worker" --tenant t1 --application app \
		--worker-id "$id" --exec "$T_TASK" --env T_DIR "$@" >>"$T_DIR/$id.log" 2>&1 &
	WPID[$id]=$!
}

# start_recovery: the stand-in for the background worker, every second
start_recovery() {
	(
		trap 'exit 0' TERM
		while :; do
			psql -X -qAt -c 'SELECT count(*) FROM workload_recover_expired()' >/dev/null 2>&1
			sleep 1
		done
	) &
	T_RECOVERY_PID=$!
}

t_setup() {
	if [ -z "${PGHOST:-}" ] || ! psql -X -qAt -d postgres -c 'SELECT 1' >/dev/null 2>&1; then
		. "$WL_ROOT/scripts/cluster.sh"
		wl_need_root
		wl_cluster_start >/dev/null
		T_OWN_CLUSTER=1
	fi
	if [ ! -x "$T_WORKER" ]; then
		bail "$T_WORKER is not installed (run make install, or test/run-all.sh)"
	fi
	T_DIR=$(mktemp -d /tmp/wlt.XXXXXX)
	export T_DIR
	trap t_cleanup EXIT
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $T_DB WITH (FORCE)" >/dev/null 2>&1
	psql -X -qAt -d postgres -c "CREATE DATABASE $T_DB" >/dev/null || bail "no database"
	export PGDATABASE=$T_DB
	psql -X -q -v ON_ERROR_STOP=1 -f "$WL_ROOT/test/t/worker_setup.sql" >"$T_DIR/setup.log" 2>&1 \
		|| { sed 's/^/# /' "$T_DIR/setup.log"; bail "setup failed"; }
}

t_cleanup() {
	local id
	for id in "${!WPID[@]}"; do kill -KILL "${WPID[$id]}" 2>/dev/null; done
	for id in $T_LEFTOVERS; do
		# only what the task starts, in case a pid was reused meanwhile
		case "$(cat "/proc/$id/comm" 2>/dev/null)" in sleep | sh | worker_task.sh) kill -KILL "$id" 2>/dev/null ;; esac
	done
	if [ -n "$T_RECOVERY_PID" ]; then kill "$T_RECOVERY_PID" 2>/dev/null; wait "$T_RECOVERY_PID" 2>/dev/null; fi
	wait 2>/dev/null
	if [ "$TAP_FAILED" != 0 ] || [ "${T_VERBOSE:-0}" = 1 ]; then
		for f in "$T_DIR"/*.log; do
			[ -f "$f" ] || continue
			note "--- $(basename "$f") (last 40 lines)"
			tail -n 40 "$f" | sed 's/^/#   /'
		done
	fi
	rm -rf "$T_DIR"
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $T_DB WITH (FORCE)" >/dev/null 2>&1
	[ "$T_OWN_CLUSTER" = 1 ] && wl_cluster_stop
}
