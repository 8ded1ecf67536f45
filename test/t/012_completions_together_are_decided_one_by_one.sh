#!/usr/bin/env bash
# Commands of one worker that finish together are completed in one workload_complete_many call, and each item is decided on its own: a refused output (a secret) fails that workload as invalid_output while the others complete; a batch the server refuses as a whole (an output jsonb cannot hold) is completed one by one (SPEC 4 workload_complete_many, 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

policy='{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 100}}'
# together GATE ID...: with every command waiting at the gate, stop the worker,
# open the gate, let the commands end, and go on: the worker finds them all over at once
together() {
	local gate=$1 id; shift
	for id in "$@"; do wait_exists 30 "$T_DIR/$id.ran.1" || return 1; done
	kill -STOP "${WPID[w1]}"
	: >"$T_DIR/$gate"
	for id in "$@"; do wait_exists 30 "$T_DIR/$id.done" || { kill -CONT "${WPID[w1]}"; return 1; }; done
	sleep 0.5					# from .done to the exit, and the guard's report
	kill -CONT "${WPID[w1]}"
}
# wait_exists SECONDS PATH: the file exists (it may be empty)
wait_exists() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do [ -e "$2" ] && return 0; sleep 0.1; done
	return 1
}

# A, B, C end together; B's output holds a secret
read -r a b c < <(q "SELECT wt.create('a', '{\"do\": \"gate\", \"gate\": \"go1\", \"n\": 1}', '$policy')
    || ' ' || wt.create('b', '{\"do\": \"gate\", \"gate\": \"go1\", \"out\": \"secret\"}', '$policy')
    || ' ' || wt.create('c', '{\"do\": \"gate\", \"gate\": \"go1\", \"n\": 3}', '$policy')")
start_worker w1 --concurrency 3 --lease 9 --poll 1 --verbose
check "A, B and C run at once and end together" together go1 "$a" "$b" "$c"
check "A, B and C reach a final state" wait_for 60 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"
is "$(q "SELECT string_agg(state::text, ',' ORDER BY s.idempotency_key) FROM workload.workloads w JOIN workload.specs s USING (workload_id)")" \
	"SUCCEEDED,DEAD_LETTER,SUCCEEDED" "A and C succeeded, B is dead-lettered"
is "$(q "SELECT (last_failure ->> 'kind') || ': ' || (last_failure ->> 'error') FROM workload.workloads WHERE workload_id = '$b'")" \
	"invalid_output: output refused: WL010 WORKLOAD_SECRET_REJECTED" \
	"B's output was refused as an item of the batch (its code) and failed as invalid_output"
is "$(q "SELECT count(DISTINCT r.xmin::text) FROM workload.runs r JOIN workload.workload_rows w
	ON w.seq = r.seq AND w.tenant_id = r.tenant_id
	WHERE w.workload_id IN ('$a', '$c') AND r.result_application_id IS NOT NULL")" 1 \
	"A's and C's results were stored in one transaction"
check "the worker logged one call for the three" grep -q '3 completions sent together' "$T_DIR/w1.log"

# D and E end together; E's output is JSON jsonb cannot hold, so the call fails as a whole
read -r d e < <(q "SELECT wt.create('d', '{\"do\": \"gate\", \"gate\": \"go2\", \"n\": 4}', '$policy')
    || ' ' || wt.create('e', '{\"do\": \"gate\", \"gate\": \"go2\", \"out\": \"nul\"}', '$policy')")
check "D and E run at once and end together" together go2 "$d" "$e"
check "D and E reach a final state" wait_for 60 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"
check "the worker's batch call was refused as a whole, and it fell back to one by one" \
	grep -q 'workload_complete_many refused (22P05' "$T_DIR/w1.log"
is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$d'")" SUCCEEDED "D succeeded (completed on its own)"
is "$(q "SELECT state || '/' || (last_failure ->> 'kind') FROM workload.workloads WHERE workload_id = '$e'")" \
	"DEAD_LETTER/invalid_output" "E failed as invalid_output"
is "$(q "SELECT count(*) FROM workload.results")" 3 "three results: A, C and D"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
done_testing
