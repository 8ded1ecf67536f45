#!/usr/bin/env bash
# Commands of one worker that finish close together are completed in one workload_complete_many call, and each item is decided on its own: a refused output (a secret) fails that workload as invalid_output while the others complete; a batch the server refuses as a whole (an output jsonb cannot hold) is completed one by one (SPEC 4 workload_complete_many, 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

policy='{"retry_policy": {"max_attempts": 2, "initial_delay_ms": 100}}'
at=$(date -d '+4 seconds' +%s)
# A, B, C finish at the same moment; B's output holds a secret
read -r a b c < <(q "SELECT wt.create('a', '{\"do\": \"until\", \"at\": $at, \"n\": 1}', '$policy')
    || ' ' || wt.create('b', '{\"do\": \"until\", \"at\": $at, \"out\": \"secret\"}', '$policy')
    || ' ' || wt.create('c', '{\"do\": \"until\", \"at\": $at, \"n\": 3}', '$policy')")
start_worker w1 --concurrency 3 --lease 9 --poll 1 --verbose
check "A, B and C reach a final state" wait_until 60 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"
is "$(q "SELECT string_agg(state::text, ',' ORDER BY idempotency_key) FROM workload.workloads w JOIN workload.specs USING (workload_id)")" \
	"SUCCEEDED,DEAD_LETTER,SUCCEEDED" "A and C succeeded, B is dead-lettered"
is "$(q "SELECT (last_failure ->> 'kind') || ': ' || (last_failure ->> 'error') FROM workload.workloads WHERE workload_id = '$b'")" \
	"invalid_output: output refused: WL010 WORKLOAD_SECRET_REJECTED" \
	"B's output was refused as an item of the batch (its code) and failed as invalid_output"
is "$(q "SELECT count(DISTINCT xmin::text) FROM workload.results WHERE workload_id IN ('$a', '$c')")" 1 \
	"A's and C's results were stored in one transaction"
check "the worker logged one call for the three" grep -q '3 completions sent together' "$T_DIR/w1.log"

# D and E finish together; E's output is JSON jsonb cannot hold, so the call fails as a whole
at=$(date -d '+3 seconds' +%s)
read -r d e < <(q "SELECT wt.create('d', '{\"do\": \"until\", \"at\": $at, \"n\": 4}', '$policy')
    || ' ' || wt.create('e', '{\"do\": \"until\", \"at\": $at, \"out\": \"nul\"}', '$policy')")
check "D and E reach a final state" wait_until 60 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"
is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$d'")" SUCCEEDED "D succeeded (completed on its own)"
is "$(q "SELECT state || '/' || (last_failure ->> 'kind') FROM workload.workloads WHERE workload_id = '$e'")" \
	"DEAD_LETTER/invalid_output" "E failed as invalid_output"
check "the worker fell back to completing one by one" grep -q 'workload_complete_many refused' "$T_DIR/w1.log"
is "$(q "SELECT count(*) FROM workload.results")" 3 "three results: A, C and D"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
done_testing
