#!/usr/bin/env bash
# A retried run starts from what workload_resume answers: the verified latest checkpoint (WORKLOAD_CHECKPOINT, WORKLOAD_CHECKPOINT_SEQUENCE) and the last wake (WORKLOAD_WAKE); a checkpoint edited behind the API's back is refused (WORKLOAD_CHECKPOINT_TAMPERED) and the workload is failed as checkpoint_tampered without running; governing snapshots are checked against --expected-snapshots (SPEC 7 authenticated checkpoints, durable waits; 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

policy='{"retry_policy": {"max_attempts": 3, "initial_delay_ms": 100, "backoff": "fixed"}}'
# earlier attempts are played by hand, as the superuser, before any worker runs
manual() {
	q "SELECT claim_id || ' ' || fencing_token FROM workload_claim_id('$1', 'manual', '{}', '1 hour')
       CROSS JOIN LATERAL (SELECT workload_start('$1', claim_id, 'manual', fencing_token)) s"
}

# V: checkpoints twice, then waits for an event that is signalled with a payload
v=$(q "SELECT wt.create('v', '{\"do\": \"env\"}', '$policy')")
read -r claim token < <(manual "$v")
q "SELECT workload_checkpoint('$v', '$claim', 'manual', $token, '{\"step\": 4}')" >/dev/null
q "SELECT workload_checkpoint('$v', '$claim', 'manual', $token, '{\"step\": 5}')" >/dev/null
q "SELECT workload_wait('$v', '$claim', 'manual', $token, 'event', 'v-ready', now() + interval '1 hour')" >/dev/null
is "$(q "SELECT workload_signal('t1', 'app', 'v-ready', '{\"approved_by\": \"ops\"}')")" 1 "V waited and was woken by a signal"

# T: checkpoints twice, the attempt fails; then checkpoint 2 is edited by a superuser
t=$(q "SELECT wt.create('t', '{\"do\": \"env\"}', '$policy')")
read -r claim token < <(manual "$t")
q "SELECT workload_checkpoint('$t', '$claim', 'manual', $token, '{\"paid_out\": 100}')" >/dev/null
q "SELECT workload_checkpoint('$t', '$claim', 'manual', $token, '{\"paid_out\": 200}')" >/dev/null
is "$(q "SELECT workload_fail('$t', '$claim', 'manual', $token, 'worker_failure', 'lost')")" READY "T's first attempt failed and will be retried"
q "SELECT wt.tamper_checkpoint('$t', 2, '{\"paid_out\": 0}')" >/dev/null
is "$(q "SELECT state ->> 'paid_out' FROM workload.checkpoints WHERE workload_id = '$t' AND sequence = 2")" 0 \
	"T's latest checkpoint was edited behind the API's back"
is "$(psql -X -qAt -c "UPDATE workload.checkpoints SET state = '{}' WHERE workload_id = '$t'" 2>&1 | grep -o 'WORKLOAD_RAW_WRITE_DENIED')" \
	WORKLOAD_RAW_WRITE_DENIED "  (and the raw-write guard is back on)"
check "both are READY" wait_for 10 "SELECT count(*) = 2 FROM workload.workloads WHERE state = 'READY'"

start_worker w1 --lease 6 --poll 1
check "both reach a final state" wait_for 60 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"

out() { q "SELECT workload_get('$v') -> 'result' -> 'output' $1"; }
is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$v'")" SUCCEEDED "V succeeded"
is "$(out "-> 'checkpoint'")" '{"step": 5}' "V's run got the latest checkpoint in WORKLOAD_CHECKPOINT"
check "  and WORKLOAD_CHECKPOINT_SEQUENCE=2" grep -qx 'WORKLOAD_CHECKPOINT_SEQUENCE=2' "$T_DIR/$v.env"
is "$(out "-> 'wake' ->> 'outcome'")/$(out "-> 'wake' ->> 'wake_key'")/$(out "-> 'wake' -> 'payload' ->> 'approved_by'")" \
	"signalled/v-ready/ops" "V's run got the last wake, with the signal's payload, in WORKLOAD_WAKE"
is "$(out "-> 'context' ->> 'attempt_id'")" \
	"$(q "SELECT attempt_id FROM workload.attempt_log WHERE workload_id = '$v' AND outcome = 'SUCCEEDED'")" \
	"WORKLOAD_CONTEXT carries the execution context's attempt id"
is "$(out "-> 'context' ? 'claim_id'")/$(out "-> 'context' ? 'fencing_token'")" "f/f" \
	"  but not the fence (claim id, fencing token)"

is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$t'")" DEAD_LETTER "T is dead-lettered"
is "$(q "SELECT string_agg(coalesce(failure_kind, outcome), ',' ORDER BY attempt_number) FROM workload.attempt_log WHERE workload_id = '$t'")" \
	"worker_failure,checkpoint_tampered" "its retry failed as checkpoint_tampered, not retried again"
check "the error names the refusal" sh -c "psql -X -qAt -c \"SELECT last_failure ->> 'error' FROM workload.workloads
    WHERE workload_id = '$t'\" | grep -q '^not run: WORKLOAD_CHECKPOINT_TAMPERED'"
check "T's command never ran" [ ! -e "$T_DIR/$t.ran.2" ]
is "$(q "SELECT count(*) FROM workload.results WHERE workload_id = '$t'")" 0 "T has no result"
kill -TERM "${WPID[w1]}"; wait_exit 30 "${WPID[w1]}" >/dev/null; unset 'WPID[w1]'

# governing snapshots: a worker built for D runs what D governs, and refuses the rest
d='{"proposal_digest": "p1", "manifest_digest": "m1", "registry_digest": "r1", "policy_digest": "o1", "authorization_digest": "a1"}'
g1=$(q "SELECT wt.create('g1', '{\"do\": \"ok\", \"ms\": 10}', jsonb_build_object('governing_snapshots', '$d'::jsonb) || '$policy')")
g2=$(q "SELECT wt.create('g2', '{\"do\": \"ok\", \"ms\": 10}', jsonb_build_object('governing_snapshots', '$d'::jsonb || '{\"policy_digest\": \"o2\"}') || '$policy')")
start_worker w2 --lease 6 --poll 1 --expected-snapshots "$d"
check "both governed workloads reach a final state" wait_for 60 \
	"SELECT count(*) = 0 FROM workload.workloads WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')"
is "$(q "SELECT state FROM workload.workloads WHERE workload_id = '$g1'")" SUCCEEDED "the one governed by D succeeds"
is "$(q "SELECT state || '/' || (last_failure ->> 'kind') FROM workload.workloads WHERE workload_id = '$g2'")" \
	"DEAD_LETTER/snapshot_mismatch" "the other fails as snapshot_mismatch"
check "  without running" [ ! -e "$T_DIR/$g2.ran.1" ]
done_testing
