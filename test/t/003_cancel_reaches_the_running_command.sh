#!/usr/bin/env bash
# Cancelling a workload reaches its running command within one heartbeat interval (a third of the lease): the worker kills the command and confirms, and a workload waiting in the worker's batch is confirmed without running (SPEC 4 workload_cancel, workload_heartbeat, workload_confirm_cancel; 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

LEASE=9                       # heartbeats every 3 s
HB=3
SLACK=4                       # scheduling on a busy machine

policy='{"retry_policy": {"max_attempts": 3, "initial_delay_ms": 200}}'
a=$(q "SELECT wt.create('long-a', '{\"do\": \"sleep\", \"ms\": 120000}', '{\"priority\": 2}'::jsonb || '$policy')")
b=$(q "SELECT wt.create('long-b', '{\"do\": \"sleep\", \"ms\": 120000}', '{\"priority\": 1}'::jsonb || '$policy')")
start_worker w1 --lease $LEASE --poll 1 --batch 2

if wait_file 60 "$T_DIR/$a.pid"; then ok "the command for A is running"; else not_ok "the command for A is running"; fi
is "$(q "SELECT string_agg(state::text, ',' ORDER BY priority DESC) FROM workload.workloads WHERE worker_id = 'w1'")" \
	"RUNNING,RUNNING" "w1 holds both, A running and B waiting its turn"
pid=$(cat "$T_DIR/$a.pid")

t0=$(date +%s.%N)
is "$(q "SELECT workload_cancel('$a', 'tester')")" CANCELLATION_REQUESTED "cancel moves A to CANCELLATION_REQUESTED"
if wait_file 60 "$T_DIR/$a.term"; then
	took=$(awk -v a="$t0" -v b="$(cat "$T_DIR/$a.term")" 'BEGIN { printf "%.2f", b - a }')
	note "the command got SIGTERM ${took}s after the cancel (heartbeat interval ${HB}s)"
	check "the command is told within one heartbeat interval (${HB}s, +${SLACK}s slack)" \
		awk -v t="$took" -v lim=$((HB + SLACK)) 'BEGIN { exit !(t <= lim) }'
else
	not_ok "the command is told within one heartbeat interval"
fi
check "A reaches CANCELLED" wait_for 30 "SELECT state = 'CANCELLED' FROM workload.workloads WHERE workload_id = '$a'"
is "$(q "SELECT actor FROM workload_history('$a') WHERE to_state = 'CANCELLED'")" w1 "the worker confirmed A's cancellation"
is "$(q "SELECT outcome FROM workload.attempt_log WHERE workload_id = '$a'")" CANCELLED "A's attempt ended CANCELLED"
check "A's command process is gone" wait_exit 10 "$pid"
is "$(q "SELECT count(*) FROM workload.results WHERE workload_id = '$a'")" 0 "A has no result"

# B is now running; cancel it too, then check a waiting one is confirmed unrun
if wait_file 30 "$T_DIR/$b.pid"; then ok "then B's command runs"; else not_ok "then B's command runs"; fi
c=$(q "SELECT wt.create('long-c', '{\"do\": \"sleep\", \"ms\": 120000}')")
q "SELECT workload_cancel('$b', 'tester')" >/dev/null
check "B reaches CANCELLED" wait_for 30 "SELECT state = 'CANCELLED' FROM workload.workloads WHERE workload_id = '$b'"
if wait_file 30 "$T_DIR/$c.pid"; then ok "the worker goes on to C"; else not_ok "the worker goes on to C"; fi
q "SELECT workload_cancel('$c', 'tester')" >/dev/null
check "C reaches CANCELLED" wait_for 30 "SELECT state = 'CANCELLED' FROM workload.workloads WHERE workload_id = '$c'"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"

# a queued workload (claimed in a batch, not yet started) is confirmed without running
# (both created in one transaction, so one claim takes both)
read -r d e < <(q "SELECT wt.create('long-d', '{\"do\": \"sleep\", \"ms\": 120000}', '{\"priority\": 2}')
                      || ' ' || wt.create('long-e', '{\"do\": \"sleep\", \"ms\": 120000}', '{\"priority\": 1}')")
wait_file 30 "$T_DIR/$d.pid" >/dev/null
q "SELECT workload_cancel('$e', 'tester')" >/dev/null
check "a cancelled workload waiting in the batch reaches CANCELLED" \
	wait_for 30 "SELECT state = 'CANCELLED' FROM workload.workloads WHERE workload_id = '$e'"
check "it never ran" [ ! -e "$T_DIR/$e.pid" ]
is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$d'")" RUNNING "the running one is untouched"

kill -TERM "${WPID[w1]}"
q "SELECT workload_cancel('$d', 'tester')" >/dev/null
check "w1 exits after SIGTERM" wait_exit 30 "${WPID[w1]}"
done_testing
