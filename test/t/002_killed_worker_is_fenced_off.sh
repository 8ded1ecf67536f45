#!/usr/bin/env bash
# Three workload-workers run 100 workloads; one is killed with SIGKILL while it holds claims; every workload still ends in its expected state with exactly one result, the killed worker's fence is refused when replayed, and no claim is left (SPEC 4 "Claiming and running", 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

# 80 succeed, 10 succeed after a transient failure, 10 fail for good; a few
# are urgent.  Each input says the state it must end in.
q "SELECT count(wt.create('k' || i, jsonb_build_object('n', i,
        'do', CASE WHEN i % 10 = 3 THEN 'flaky' WHEN i % 10 = 7 THEN 'fail' ELSE 'ok' END,
        'ms', 100 + (i * 37) % 300,
        'expect', CASE WHEN i % 10 = 7 THEN 'DEAD_LETTER' ELSE 'SUCCEEDED' END),
    jsonb_build_object('priority', CASE WHEN i % 25 = 0 THEN 10 ELSE 0 END,
        'retry_policy', jsonb_build_object('max_attempts', 3, 'initial_delay_ms', 200, 'backoff', 'fixed'))))
  FROM generate_series(1, 100) i" >/dev/null
is "$(q "SELECT count(*) FROM workload.workloads WHERE state = 'READY'")" 100 "100 workloads are READY"

start_recovery
start_worker w1 --lease 3 --poll 1
start_worker w2 --lease 3 --poll 1
start_worker w3 --lease 3 --poll 1 --batch 3

# kill w3 once work is under way and it holds claims
if wait_for 90 "SELECT (SELECT count(*) FROM workload.workloads WHERE state = 'SUCCEEDED') >= 10
        AND (SELECT count(*) FROM workload.workloads WHERE worker_id = 'w3'
             AND state IN ('RUNNING', 'CHECKPOINTED')) >= 2"; then
	kill -KILL "${WPID[w3]}"
	wait "${WPID[w3]}" 2>/dev/null
	unset 'WPID[w3]'
	ok "w3 held claims and was killed with SIGKILL"
else
	not_ok "w3 held claims and was killed with SIGKILL"
fi
sleep 0.5
q "SELECT workload_id || '|' || claim_id || '|' || fencing_token || '|' || attempt_count
   FROM workload.workloads WHERE worker_id = 'w3' ORDER BY 1" >"$T_DIR/held"
held=$(wc -l <"$T_DIR/held")
note "w3 held $held claim(s) when it died"
check "w3 still holds claims after its death" [ "$held" -ge 1 ]

check "every workload reaches a final state" \
	wait_for 150 "SELECT count(*) = 0 FROM workload.workloads
        WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"

is "$(q "SELECT count(*) FROM workload.workloads w
         WHERE w.state::text <> workload_get(w.workload_id) -> 'input' ->> 'expect'")" 0 \
	"every workload ends in its expected state"
is "$(q "SELECT string_agg(state || '=' || n, ' ' ORDER BY state) FROM
         (SELECT state::text, count(*) n FROM workload.workloads GROUP BY 1) s")" \
	"DEAD_LETTER=10 SUCCEEDED=90" "90 succeeded, 10 dead-lettered"
is "$(q "SELECT count(*) FROM workload.workloads w
         WHERE (SELECT count(*) FROM workload.results r WHERE r.workload_id = w.workload_id)
               <> CASE WHEN w.state = 'SUCCEEDED' THEN 1 ELSE 0 END")" 0 \
	"each succeeded workload has exactly one result, the others none"
is "$(q "SELECT count(*) FROM workload.workloads w
         WHERE workload_get(w.workload_id) -> 'input' ->> 'do' = 'flaky' AND w.attempt_count < 2")" 0 \
	"every flaky workload needed a second attempt"
is "$(q "SELECT count(*) FROM workload.attempt_log WHERE failure_kind = 'command_failed'")" 10 \
	"failing commands were failed as command_failed, once each (not retried)"

# the killed worker's claims: lost, recovered, finished by someone else
lost=0; elsewhere=0; replay_refused=0; unchanged=0
while IFS='|' read -r id claim token attempt; do
	[ -n "$id" ] || continue
	[ "$(q "SELECT outcome FROM workload.attempt_log WHERE workload_id = '$id' AND attempt_number = $attempt")" = WORKER_LOST ] \
		&& lost=$((lost + 1))
	[ "$(q "SELECT worker_id <> 'w3' FROM workload.results WHERE workload_id = '$id'
            UNION ALL SELECT true FROM workload.workloads WHERE workload_id = '$id' AND state = 'DEAD_LETTER'")" = t ] \
		&& elsewhere=$((elsewhere + 1))
	before=$(q "SELECT md5(r::text) FROM workload.results r WHERE workload_id = '$id'")
	answer=$(q "SELECT wt.try_complete('$id', '$claim', 'w3', $token, '$id:$attempt', '{\"late\": true}')")
	note "replay of w3's fence on $id (token $token): $answer"
	case "$answer" in WL006 | WL007) replay_refused=$((replay_refused + 1)) ;; esac
	[ "$(q "SELECT md5(r::text) FROM workload.results r WHERE workload_id = '$id'")" = "$before" ] \
		&& unchanged=$((unchanged + 1))
done <"$T_DIR/held"
is "$lost" "$held" "each attempt w3 held is recorded as WORKER_LOST"
is "$elsewhere" "$held" "each workload w3 held was finished by another worker"
is "$replay_refused" "$held" "a replay of w3's fence is refused (WL006 or WL007)"
is "$unchanged" "$held" "the refused replay changed no result"

is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
is "$(q "SELECT count(*) FROM workload.results WHERE worker_id NOT IN ('w1', 'w2', 'w3')")" 0 \
	"results come only from the three workers"

for id in w1 w2; do
	kill -TERM "${WPID[$id]}"
	if wait_exit 30 "${WPID[$id]}"; then
		wait "${WPID[$id]}"; rc=$?
		is "$rc" 0 "$id stops on SIGTERM with status 0"
	else
		not_ok "$id stops on SIGTERM with status 0"
	fi
	unset "WPID[$id]"
done
done_testing
