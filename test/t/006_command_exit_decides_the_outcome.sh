#!/usr/bin/env bash
# workload-worker's command protocol: exit 0 completes with stdout (JSON, else invalid_output), exit 75 is transient_connection, 124 timeout, a signal worker_failure, anything else command_failed; fd 3 lines become checkpoints or progress, and a retry resumes from the last checkpoint in WORKLOAD_CHECKPOINT (SPEC 4 workload_checkpoint, workload_fail; 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

# one retry allowed, right away, for every kind the extension retries by default
policy='{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 100, "backoff": "fixed"}}'
mk() { q "SELECT wt.create('$1', '$2', '$policy')"; }
ok_id=$(mk ok '{"do": "ok", "ms": 10, "n": 7}')
flaky=$(mk flaky '{"do": "flaky", "n": 8}')
fail=$(mk fail '{"do": "fail"}')
tmo=$(mk timeout '{"do": "timeout"}')
crash=$(mk crash '{"do": "crash"}')
bad=$(mk badjson '{"do": "badjson"}')
steps=$(mk steps '{"do": "steps", "n": 9}')

start_worker w1 --lease 3 --poll 1
check "every workload reaches a final state" wait_for 90 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"

state() { q "SELECT state FROM workload.workloads WHERE workload_id = '$1'"; }
kinds() { q "SELECT string_agg(coalesce(failure_kind, outcome), ',' ORDER BY attempt_number) FROM workload.attempt_log WHERE workload_id = '$1'"; }

is "$(q "SELECT workload_get('$ok_id') -> 'result' -> 'output' ->> 'n'")" 7 "exit 0: completed with stdout as the output"
is "$(q "SELECT workload_get('$ok_id') -> 'result' ->> 'result_id'")" "$ok_id:1" "the result id is <workload_id>:<attempt>"
is "$(state "$flaky")/$(kinds "$flaky")" "SUCCEEDED/transient_connection,SUCCEEDED" "exit 75: transient_connection, retried"
is "$(state "$fail")/$(kinds "$fail")" "DEAD_LETTER/command_failed" "exit 1: command_failed, not retried"
check "the failure keeps the exit status and stderr" sh -c "psql -X -qAt -c \"SELECT last_failure ->> 'error' FROM workload.workloads WHERE workload_id = '$fail'\" | grep -q 'status 1; stderr:' "
check "  ... including what the command wrote to stderr" sh -c "psql -X -qAt -c \"SELECT last_failure ->> 'error' FROM workload.workloads WHERE workload_id = '$fail'\" | grep -q 'this input is refused'"
is "$(state "$tmo")/$(kinds "$tmo")" "DEAD_LETTER/timeout,timeout" "exit 124: timeout, retried"
is "$(state "$crash")/$(kinds "$crash")" "DEAD_LETTER/worker_failure,worker_failure" "killed by a signal: worker_failure, retried"
is "$(state "$bad")/$(kinds "$bad")" "DEAD_LETTER/invalid_output" "stdout that is not JSON: invalid_output, not retried"

# steps: checkpoints 1 and 2 on attempt 1, then a crash; attempt 2 resumes after 2
is "$(state "$steps")/$(kinds "$steps")" "SUCCEEDED/worker_failure,SUCCEEDED" "a crashed run is retried"
is "$(q "SELECT string_agg((c ->> 'sequence') || ':' || (c -> 'state' ->> 'step'), ',')
         FROM jsonb_array_elements(workload_get('$steps') -> 'checkpoints') c")" "1:1,2:2,3:3" \
	"fd 3 lines became checkpoints, in order, across both attempts"
is "$(q "SELECT workload_get('$steps') -> 'result' -> 'output' ->> 'resumed_after'")" 2 \
	"the retry got the last checkpoint in WORKLOAD_CHECKPOINT"
is "$(q "SELECT workload_get('$steps') -> 'result' -> 'output' ->> 'attempt'")" 2 "and WORKLOAD_ATTEMPT=2"
is "$(q "SELECT count(*) FROM workload.checkpoints c WHERE (c.state ? 'progress')")" 0 \
	"progress lines are not stored as checkpoints"

# progress reaches the workload with a heartbeat
cat >"$T_DIR/progress.sh" <<'EOF'
#!/bin/sh
read -r input
echo '{"progress": {"done": 1, "of": 2}}' >&3
sleep 2.5
EOF
chmod +x "$T_DIR/progress.sh"
kill -TERM "${WPID[w1]}"; wait_exit 30 "${WPID[w1]}" >/dev/null; unset 'WPID[w1]'
p=$(q "SELECT wt.create('progress', '{}')")
"$T_WORKER" --dsn "dbname=$T_DB user=wl_test_worker" --tenant t1 --application app --worker-id w2 \
	--lease 3 --poll 1 --exec "$T_DIR/progress.sh" >>"$T_DIR/w2.log" 2>&1 &
WPID[w2]=$!
check "a progress line is passed on with the next heartbeat" wait_for 30 \
	"SELECT workload_get('$p') -> 'progress' = '{\"done\": 1, \"of\": 2}'"
check "and the workload completes" wait_for 30 "SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$p'"
is "$(q "SELECT workload_get('$p') -> 'result' -> 'output'")" '{}' "empty stdout completes with {}"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
done_testing
