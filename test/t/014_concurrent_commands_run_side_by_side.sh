#!/usr/bin/env bash
# With --concurrency 4 each of the commands running side by side keeps what one command is promised: its exit status decides its own outcome, its checkpoints and resume are its own, its environment is its own and carries no credentials, a cancellation reaches it and only it, a connection loss leaves all of them running under renewed leases, and a SIGKILLed worker takes every one of them (process group and setsid descendants) with it; without --concurrency the commands run one after another as before (SPEC 4 workload_heartbeat_many, workload_complete_many; 8).  Overlaps are computed from the start and end times each command records in a file.
. "$(dirname "$0")/worker_lib.sh"
t_setup

# every command goes through this wrapper, which appends one line per run to
# $T_DIR/times: worker workload attempt start end exit-status
cat >"$T_DIR/timed.sh" <<EOF
#!/bin/sh
s=\$(date +%s.%N)
"$T_TASK"
rc=\$?
echo "\$WORKLOAD_WORKER_ID \$WORKLOAD_ID \$WORKLOAD_ATTEMPT \$s \$(date +%s.%N) \$rc" >>"\$T_DIR/times"
exit \$rc
EOF
chmod +x "$T_DIR/timed.sh"
T_TASK="$T_DIR/timed.sh"
: >"$T_DIR/times"

# overlap W: the most commands of worker W running at the same moment
overlap() {
	awk -v w="$1" '$1 == w { s[n] = $4; e[n] = $5; n++ }
		END { m = 0
		      for (i = 0; i < n; i++) { k = 0
		          for (j = 0; j < n; j++) if (s[j] <= s[i] && e[j] > s[i]) k++
		          if (k > m) m = k }
		      print m }' "$T_DIR/times"
}
stop_worker() {
	kill -TERM "${WPID[$1]}"
	wait_exit 30 "${WPID[$1]}" >/dev/null
	unset "WPID[$1]"
}
state() { q "SELECT state FROM workload.workloads WHERE workload_id = '$1'"; }
kinds() { q "SELECT string_agg(coalesce(failure_kind, outcome), ',' ORDER BY attempt_number) FROM workload.attempt_log WHERE workload_id = '$1'"; }
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
policy='{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 100, "backoff": "fixed"}}'

# 1. the default (--concurrency 1), even with --batch 3: one after another
q "SELECT count(wt.create('seq' || i, jsonb_build_object('do', 'ok', 'ms', 150, 'n', i)))
   FROM generate_series(1, 6) i" >/dev/null
start_worker w1 --batch 3 --lease 6 --poll 1
check "without --concurrency, six workloads complete" wait_for 60 \
	"SELECT count(*) = 6 FROM workload.workloads WHERE state = 'SUCCEEDED'"
stop_worker w1
is "$(overlap w1)" 1 "without --concurrency (and with --batch 3) the commands ran one at a time"

# 2. side by side, each command's outcome, checkpoints and environment its own
# (created in one transaction, so one claim can take four)
read -r ok1 ok2 flaky fail tmo bad st1 st2 env1 env2 < <(q "SELECT concat_ws(' ',
    wt.create('ok1', '{\"do\": \"ok\", \"ms\": 800, \"n\": 11}', '$policy'),
    wt.create('ok2', '{\"do\": \"ok\", \"ms\": 800, \"n\": 12}', '$policy'),
    wt.create('flaky', '{\"do\": \"flaky\", \"ms\": 800, \"n\": 13}', '$policy'),
    wt.create('fail', '{\"do\": \"fail\"}', '$policy'),
    wt.create('timeout', '{\"do\": \"timeout\"}', '$policy'),
    wt.create('badjson', '{\"do\": \"badjson\"}', '$policy'),
    wt.create('steps1', '{\"do\": \"steps\", \"n\": 17}', '$policy'),
    wt.create('steps2', '{\"do\": \"steps\", \"n\": 18}', '$policy'),
    wt.create('env1', '{\"do\": \"env\"}', '$policy'),
    wt.create('env2', '{\"do\": \"env\"}', '$policy'))")
export PGPASSWORD=not-a-real-password-5d1e
start_worker w2 --concurrency 4 --batch 4 --lease 6 --poll 1 --verbose
unset PGPASSWORD
check "ten workloads run side by side reach a final state" wait_for 90 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"
stop_worker w2
m=$(overlap w2)
note "w2: $(grep -c '^w2 ' "$T_DIR/times") runs; at most $m at the same moment"
check "w2 ran several commands at the same time" [ "$m" -ge 2 ]
check "  and never more than 4" [ "$m" -le 4 ]
is "$(state "$ok1")/$(state "$ok2")" "SUCCEEDED/SUCCEEDED" "exit 0: completed"
is "$(state "$flaky")/$(kinds "$flaky")" "SUCCEEDED/transient_connection,SUCCEEDED" "exit 75: transient_connection, retried"
is "$(state "$fail")/$(kinds "$fail")" "DEAD_LETTER/command_failed" "exit 1: command_failed, not retried"
is "$(state "$tmo")/$(kinds "$tmo")" "DEAD_LETTER/timeout,timeout" "exit 124: timeout, retried"
is "$(state "$bad")/$(kinds "$bad")" "DEAD_LETTER/invalid_output" "stdout that is not JSON: invalid_output"
is "$(q "SELECT string_agg(workload_id, ' ' ORDER BY workload_id) FROM workload.workloads w
         WHERE w.state = 'SUCCEEDED' AND w.workload_id IN ('$ok1', '$ok2', '$flaky', '$st1', '$st2')
           AND workload_get(w.workload_id) -> 'result' -> 'output' ->> 'n'
               = workload_get(w.workload_id) -> 'input' ->> 'n'")" \
	"$(printf '%s\n' "$ok1" "$ok2" "$flaky" "$st1" "$st2" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')" \
	"each output reached its own workload (n matches the input's)"
for s in "$st1" "$st2"; do
	k=steps$([ "$s" = "$st1" ] && echo 1 || echo 2)
	is "$(state "$s")/$(kinds "$s")/$(q "SELECT workload_get('$s') -> 'result' -> 'output' ->> 'resumed_after'")" \
		"SUCCEEDED/worker_failure,SUCCEEDED/2" "$k: crashed after checkpoint 2, resumed from its own checkpoint 2"
	is "$(q "SELECT string_agg((c ->> 'sequence') || ':' || (c -> 'state' ->> 'step'), ',')
             FROM jsonb_array_elements(workload_get('$s') -> 'checkpoints') c")" "1:1,2:2,3:3" \
		"$k: its checkpoints are its own, in order"
done
for e in "$env1" "$env2"; do
	k=env$([ "$e" = "$env1" ] && echo 1 || echo 2)
	is "$(state "$e")/$(grep '^WORKLOAD_ID=' "$T_DIR/$e.env")" "SUCCEEDED/WORKLOAD_ID=$e" "$k's command got its own WORKLOAD_ID"
	check "$k's environment has no PG* variable nor the password" \
		sh -c "! grep -qE '^PG|not-a-real-password' '$T_DIR/$e.env'"
done
is "$(q "SELECT count(*) FROM workload.workloads w
         WHERE (SELECT count(*) FROM workload.results r WHERE r.workload_id = w.workload_id)
               <> CASE WHEN w.state = 'SUCCEEDED' THEN 1 ELSE 0 END")" 0 \
	"each succeeded workload has exactly one result, the others none"

# 3. four long commands: cancel one, drop the connection, then SIGKILL the worker
trees=$(q "SELECT concat_ws(' ',
    wt.create('tree1', '{\"do\": \"tree\", \"ms\": 60000, \"n\": 21}', '$policy'),
    wt.create('tree2', '{\"do\": \"tree\", \"ms\": 60000, \"n\": 22}', '$policy'),
    wt.create('tree3', '{\"do\": \"tree\", \"ms\": 60000, \"n\": 23}', '$policy'),
    wt.create('tree4', '{\"do\": \"tree\", \"ms\": 60000, \"n\": 24}', '$policy'))")
read -r t1 t2 t3 t4 <<<"$trees"
start_worker w3 --concurrency 4 --lease 6 --poll 1 --verbose
running=0
for t in $trees; do wait_file 60 "$T_DIR/$t.pgid" && running=$((running + 1)); done
is "$running" 4 "w3 runs four commands at once"
declare -A PG=() MEM=() ESC=()
for t in $trees; do
	PG[$t]=$(cat "$T_DIR/$t.pgid")
	MEM[$t]=$(group_alive "${PG[$t]}" | tr '\n' ' ')
	ESC[$t]=$(cat "$T_DIR/$t.escaped")
	t_kill_later ${MEM[$t]} "$(cat "$T_DIR/$t.child")" "${ESC[$t]}"
done
is "$(printf '%s\n' "${PG[@]}" | sort -u | wc -l)" 4 "each in a process group of its own"
is "$(q "SELECT count(*) FROM workload.workloads WHERE worker_id = 'w3' AND state = 'RUNNING'")" 4 \
	"w3 holds four claims"

t0=$(date +%s%N)
q "SELECT workload_cancel('$t1', 'tester')" >/dev/null
check "the cancelled command's process group is gone within a heartbeat interval (2 s, +4 s slack)" \
	gone_within 6 ${MEM[$t1]}
note "gone $(( ($(date +%s%N) - t0) / 1000000 )) ms after the cancel"
check "  and so is its setsid descendant" gone_within 5 "${ESC[$t1]}"
check "it reaches CANCELLED" wait_for 30 "SELECT state = 'CANCELLED' FROM workload.workloads WHERE workload_id = '$t1'"
left=0
for t in $t2 $t3 $t4; do [ -n "$(group_alive "${PG[$t]}")" ] && left=$((left + 1)); done
is "$left" 3 "the other three commands still run"

old=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = 'workload-worker'
         AND datname = current_database() AND backend_type = 'client backend'")
cut=$(q "SELECT clock_timestamp()")
is "$(q "SELECT pg_terminate_backend($old)")" t "w3's connection is terminated while three commands run"
check "w3 reconnects and renews all three leases" wait_for 20 \
	"SELECT count(*) = 3 FROM workload.workloads WHERE worker_id = 'w3' AND state = 'RUNNING'
        AND last_heartbeat_at > '$cut'::timestamptz"
left=0
for t in $t2 $t3 $t4; do [ -n "$(group_alive "${PG[$t]}")" ] && left=$((left + 1)); done
is "$left" 3 "the three commands kept running through the reconnection"
check "w3 logged the reconnection" grep -q 'reconnecting' "$T_DIR/w3.log"

t0=$(date +%s%N)
kill -KILL "${WPID[w3]}"
wait "${WPID[w3]}" 2>/dev/null
unset 'WPID[w3]'
check "2 s after w3's SIGKILL no process of its three commands' groups is left" \
	gone_within 2 ${MEM[$t2]} ${MEM[$t3]} ${MEM[$t4]}
check "  nor their setsid descendants" gone_within 2 "${ESC[$t2]}" "${ESC[$t3]}" "${ESC[$t4]}"
note "checked $(( ($(date +%s%N) - t0) / 1000000 )) ms after the SIGKILL"

start_recovery
start_worker w4 --concurrency 4 --lease 6 --poll 1
check "the three are retried and succeed" wait_for 60 \
	"SELECT count(*) = 3 FROM workload.workloads WHERE workload_id IN ('$t2', '$t3', '$t4') AND state = 'SUCCEEDED'"
for i in 2 3 4; do
	t=$(eval echo "\$t$i")
	is "$(kinds "$t")/$(q "SELECT count(*) FROM workload.results WHERE workload_id = '$t'")" \
		"worker_lost,SUCCEEDED/1" "tree$i: lost with w3 (worker_lost), succeeded on w4, one result"
done
is "$(state "$t1")/$(kinds "$t1")/$(q "SELECT count(*) FROM workload.results WHERE workload_id = '$t1'")" \
	"CANCELLED/CANCELLED/0" "the cancelled one stays CANCELLED, without a result"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
stop_worker w4
done_testing
