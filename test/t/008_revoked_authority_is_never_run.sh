#!/usr/bin/env bash
# Before it runs a command the worker asks workload_execution_context; when the workload's authority no longer holds (its grant was revoked after the claim) the workload is failed as authorization_denied, not retried (not in the default retry_on), and its command never runs (SPEC 4 workload_execution_context, 5 revocation, 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

# A runs for 2.5 s; B, under another grant, waits its turn in the same batch
# (both created in one transaction, so one claim takes both)
read -r a b < <(q "SELECT wt.create('a', '{\"do\": \"sleep\", \"ms\": 2500}', '{\"priority\": 2}')
    || ' ' || wt.create('b', '{\"do\": \"ok\", \"ms\": 10}', '{\"priority\": 1}', 'grant-t1-revoked')")
start_worker w1 --lease 9 --poll 1 --batch 2
if wait_file 60 "$T_DIR/$a.pid"; then ok "A runs, B is claimed and waits"; else not_ok "A runs, B is claimed and waits"; fi
is "$(q "SELECT string_agg(state::text, ',' ORDER BY priority DESC) FROM workload.workloads WHERE worker_id = 'w1'")" \
	"RUNNING,RUNNING" "w1 holds both"

q "SELECT workload_revoke_grant('grant-t1-revoked')" >/dev/null
check "B reaches DEAD_LETTER" wait_for 60 \
	"SELECT state = 'DEAD_LETTER' FROM workload.workloads WHERE workload_id = '$b'"
is "$(q "SELECT last_failure ->> 'kind' FROM workload.workloads WHERE workload_id = '$b'")" \
	authorization_denied "its failure kind is authorization_denied"
is "$(q "SELECT string_agg(outcome || '/' || failure_kind, ',' ORDER BY attempt_number)
         FROM workload.attempt_log WHERE workload_id = '$b'")" "FAILED/authorization_denied" \
	"one attempt, failed, not retried"
check "the error names the refusal" sh -c "psql -X -qAt -c \"SELECT last_failure ->> 'error' FROM workload.workloads
    WHERE workload_id = '$b'\" | grep -q '^not run: AUTHORIZATION_DENIED'"
check "B's command never ran" [ ! -e "$T_DIR/$b.ran.1" ]
is "$(q "SELECT count(*) FROM workload.results WHERE workload_id = '$b'")" 0 "B has no result"
check "A, whose grant holds, still completes" wait_for 60 \
	"SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$a'"

# C's grant is revoked in the transaction that creates it, before any claim:
# whichever refuses it (the worker, or a claim that checks revocation), it never runs
c=$(psql -X -qAt -v ON_ERROR_STOP=1 -c "BEGIN" \
	-c "SELECT wt.create('c', '{\"do\": \"ok\", \"ms\": 10}', '{}', 'grant-t1-c')" \
	-c "SELECT workload_revoke_grant('grant-t1-c')" -c "COMMIT")
c=${c%%$'\n'*}
# (no claim hands it out; the tick's revocation sweep dead-letters it: the
# tick runs here as the background worker or cron would run it)
check "C, revoked while queued, reaches DEAD_LETTER" wait_for 60 \
	"WITH t AS MATERIALIZED (SELECT workload_tick()) SELECT state = 'DEAD_LETTER' FROM t, workload.workloads
	 WHERE workload_id = '$c'"
note "C: $(q "SELECT coalesce(string_agg(failure_kind, ','), 'no attempt') FROM workload.attempt_log WHERE workload_id = '$c'")"
check "C's command never ran" [ ! -e "$T_DIR/$c.ran.1" ]
check "w1 is still running" kill -0 "${WPID[w1]}"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
done_testing
