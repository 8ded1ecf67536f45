#!/usr/bin/env bash
# A workload-worker killed with SIGKILL takes its running command and everything the command started with it within two seconds (its process group, and a descendant that left the group with setsid), so the retry never runs beside it; a command that exits leaves nothing behind either (SPEC 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

# leftovers a run of this test on a broken worker would leave are killed at the end
record() { t_kill_later "$@"; }

# gone_within SECONDS PID...: every one has ended (or is a zombie) in time
gone_within() {
	local end pid left
	end=$(($(date +%s%N) + $1 * 1000000000))
	shift
	while :; do
		left=""
		for pid in "$@"; do alive "$pid" && left="$left $pid"; done
		[ -z "$left" ] && return 0
		[ "$(date +%s%N)" -ge "$end" ] && { note "still alive:$left"; return 1; }
		sleep 0.05
	done
}

policy='{"retry_policy": {"max_attempts": 3, "initial_delay_ms": 100, "backoff": "fixed"}}'

# 1. SIGKILL while the command runs
a=$(q "SELECT wt.create('tree', '{\"do\": \"tree\", \"ms\": 60000}', '$policy')")
start_worker w1 --lease 3 --poll 1
if wait_file 60 "$T_DIR/$a.pgid"; then ok "the command runs with its descendants"; else not_ok "the command runs with its descendants"; fi
pgid=$(cat "$T_DIR/$a.pgid")
child=$(cat "$T_DIR/$a.child")
escaped=$(cat "$T_DIR/$a.escaped")
members=$(group_alive "$pgid" | tr '\n' ' ')
record $members $child $escaped
note "process group $pgid: $members; grandchild $child; escaped (setsid) $escaped"
check "the grandchild is in the command's process group" sh -c "echo ' $members ' | grep -q ' $child '"
check "the escaped descendant is not" sh -c "! echo ' $members ' | grep -q ' $escaped '"

t0=$(date +%s%N)
kill -KILL "${WPID[w1]}"
wait "${WPID[w1]}" 2>/dev/null
unset 'WPID[w1]'
check "2 s after the SIGKILL no process of the command's group is left" gone_within 2 $members
check "  nor the descendant that left the group" gone_within 1 "$escaped"
note "checked $(( ($(date +%s%N) - t0) / 1000000 )) ms after the SIGKILL"
is "$(group_alive "$pgid" | wc -l)" 0 "the process group is empty"

# the lease runs out, another worker runs the retry, alone
start_recovery
start_worker w2 --lease 3 --poll 1
check "the workload is retried by another worker and succeeds" wait_for 60 \
	"SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$a'"
is "$(q "SELECT string_agg(outcome, ',' ORDER BY attempt_number) FROM workload.attempt_log WHERE workload_id = '$a'")" \
	"WORKER_LOST,SUCCEEDED" "attempt 1 was lost with w1, attempt 2 succeeded"

# 2. a command that exits at once leaves nothing behind
b=$(q "SELECT wt.create('leaves', '{\"do\": \"leaves\"}', '$policy')")
check "a command that leaves descendants behind completes" wait_for 60 \
	"SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$b'"
child=$(cat "$T_DIR/$b.child")
escaped=$(cat "$T_DIR/$b.escaped")
record $child $escaped
check "its grandchild is gone" gone_within 2 "$child"
check "and the descendant that left the group" gone_within 2 "$escaped"
check "w2 is still running" kill -0 "${WPID[w2]}"
done_testing
