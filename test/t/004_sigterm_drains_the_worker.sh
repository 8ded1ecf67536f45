#!/usr/bin/env bash
# SIGTERM drains a workload-worker: it stops claiming, lets the running command finish within the grace period (or kills it after and fails it as worker_failure), hands back claimed workloads it has not started, and exits 0 holding no claim (SPEC 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

policy='{"retry_policy": {"max_attempts": 3, "initial_delay_ms": 200, "backoff": "fixed"}}'

# 1. The command finishes within the grace period.  A batch of 3 is claimed
#    at once (one transaction creates them); two more wait unclaimed.
read -r a b c < <(q "SELECT wt.create('a', '{\"do\": \"sleep\", \"ms\": 2500}', '{\"priority\": 3}'::jsonb || '$policy')
    || ' ' || wt.create('b', '{\"do\": \"ok\", \"ms\": 10}', '{\"priority\": 2}'::jsonb || '$policy')
    || ' ' || wt.create('c', '{\"do\": \"ok\", \"ms\": 10}', '{\"priority\": 1}'::jsonb || '$policy')")
start_worker w1 --lease 6 --poll 1 --batch 3 --grace 30
if wait_file 60 "$T_DIR/$a.pid"; then ok "w1 runs A"; else not_ok "w1 runs A"; fi
is "$(q "SELECT count(*) FROM workload.workloads WHERE worker_id = 'w1'")" 3 "w1 holds A, B and C"
d=$(q "SELECT wt.create('d', '{\"do\": \"ok\", \"ms\": 10}')")
kill -TERM "${WPID[w1]}"
if wait_exit 60 "${WPID[w1]}"; then
	wait "${WPID[w1]}"; rc=$?
	is "$rc" 0 "w1 exits 0 after SIGTERM"
else
	not_ok "w1 exits 0 after SIGTERM"
fi
unset 'WPID[w1]'
is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$a'")" SUCCEEDED "the running command finished and A completed"
check "A's command was not signalled" [ ! -e "$T_DIR/$a.term" ]
is "$(q "SELECT string_agg(state || '/' || (last_failure ->> 'kind'), ',') FROM workload.workloads
         WHERE workload_id IN ('$b', '$c')")" "READY/worker_failure,READY/worker_failure" \
	"B and C, claimed but not started, are handed back for a retry"
is "$(q "SELECT state || '/' || attempt_count FROM workload.workloads WHERE workload_id = '$d'")" READY/0 \
	"D was never claimed after the SIGTERM"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
check "w1 said it stopped" grep -q ' stopped$' "$T_DIR/w1.log"

# 2. The command outlives the grace period: it is killed and failed as worker_failure.
q "SELECT workload_cancel(workload_id, 'tester') FROM workload.workloads WHERE state = 'READY'" >/dev/null
e=$(q "SELECT wt.create('e', '{\"do\": \"sleep\", \"ms\": 120000}', '$policy')")
start_worker w2 --lease 6 --poll 1 --grace 1
if wait_file 60 "$T_DIR/$e.pid"; then ok "w2 runs E"; else not_ok "w2 runs E"; fi
pid=$(cat "$T_DIR/$e.pid")
kill -TERM "${WPID[w2]}"
if wait_exit 30 "${WPID[w2]}"; then
	wait "${WPID[w2]}"; rc=$?
	is "$rc" 0 "w2 exits 0 after the grace period"
else
	not_ok "w2 exits 0 after the grace period"
fi
unset 'WPID[w2]'
check "E's command was killed" wait_exit 10 "$pid"
is "$(q "SELECT state || '/' || (last_failure ->> 'kind') || '/' || attempt_count FROM workload.workloads
         WHERE workload_id = '$e'")" READY/worker_failure/1 "E was failed as worker_failure and will be retried"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"

# 3. An idle worker exits at once.
q "SELECT workload_cancel('$e', 'tester')" >/dev/null
start_worker w3 --lease 6 --poll 1
wait_for 30 "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'workload-worker'
               AND datname = current_database()" >/dev/null
sleep 0.5
kill -TERM "${WPID[w3]}"
if wait_exit 10 "${WPID[w3]}"; then
	wait "${WPID[w3]}"; rc=$?
	is "$rc" 0 "an idle worker exits 0 at once on SIGTERM"
else
	not_ok "an idle worker exits 0 at once on SIGTERM"
fi
unset 'WPID[w3]'
done_testing
