#!/usr/bin/env bash
# With the library in shared_preload_libraries, a tick worker runs
# workload_tick every workload.tick_interval in each database where the
# extension is installed (test 022 covers several databases): none runs
# while the extension is absent, and nothing is logged; once it is created,
# one shows in pg_stat_activity, recovers an expired lease with nobody
# calling the tick, comes back after it is terminated, follows a reload;
# workload.database, when set, limits the databases served (SIGHUP); the
# worker stops cleanly with the server (SPEC section 4, workload_tick and the
# background worker).  Run as root after "make install"; prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root

. "$WL_ROOT/test/tap.sh"
worker_pid() { q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'postgres'"; }
log_count() { grep -c "$1" "$WL_TMP/server.log" || true; }
stop_server() { runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -m fast -t 30 -w stop >/dev/null; }

wl_cluster_start "shared_preload_libraries = 'workload'" \
	"workload.tick_interval = '200ms'"

check "the launcher shows in pg_stat_activity as backend_type \"workload launcher\"" \
	wait_for 10 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload launcher'" 1
sleep 1.5
check "without the extension no tick worker runs, and the log says nothing about it" \
	test "$(q "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick'")" = 0 \
	-a "$(log_count 'workload tick')" = 0

q "CREATE EXTENSION workload CASCADE" >/dev/null
check "CREATE EXTENSION starts a tick worker, backend_type \"workload tick\", within 5 seconds" \
	wait_for 5 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'postgres'" 1
pid=$(worker_pid)
q "SELECT workload_create(jsonb_build_object(
	'tenant_id', 'acme', 'application_id', 'billing', 'environment', 'tap',
	'definition_id', 'invoice.render', 'definition_revision', 'r1', 'trigger', 'api',
	'input', '{\"n\": 1}'::jsonb, 'idempotency_key', 'tap-1',
	'requested_by', '{\"kind\": \"agent\", \"id\": \"planner\"}'::jsonb,
	'authorization_snapshot', workload_sign_grant(jsonb_build_object(
		'contract_version', 1, 'id', 'grant-tap', 'revision', 1, 'status', 'active',
		'issuer', '{\"kind\": \"service\", \"id\": \"iam\"}'::jsonb,
		'subject', '{\"kind\": \"agent\", \"id\": \"planner\"}'::jsonb,
		'tenant_id', 'acme', 'application_id', 'billing', 'capabilities', '[\"*\"]'::jsonb,
		'resources', '[]'::jsonb, 'constraints', '{\"subject_attributes\": {}}'::jsonb,
		'parent_grant', null, 'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z'))))" >/dev/null
q "SELECT count(*) FROM workload_claim('w-doomed', '{}', 'acme', 'billing', '1 second', start => true)" >/dev/null
check "a lease that expires is recovered with nobody calling the tick" \
	wait_for 10 "SELECT state || ' ' || attempt_count FROM workload.workloads" "READY 1"
check "the attempt is WORKER_LOST and the events name workload.recovery" \
	test "$(q "SELECT a.outcome || ' ' || (SELECT count(*) FROM workload.event_log e WHERE e.actor = 'workload.recovery')
	           FROM workload.attempt_log a")" = "WORKER_LOST 2"
check "pg_stat_activity shows what the worker runs" \
	wait_for 5 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND query LIKE '%workload.tick_phase(%'" 1

q "SELECT pg_terminate_backend($(worker_pid))" >/dev/null
check "a terminated worker comes back (the launcher starts it again)" \
	wait_for 20 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND pid <> $pid" 1
pid=$(worker_pid)
q "SELECT count(*) FROM workload_claim('w-doomed-too', '{}', 'acme', 'billing', '1 second', start => true)" >/dev/null
check "the restarted worker recovers the next expired lease" \
	wait_for 10 "SELECT state || ' ' || attempt_count FROM workload.workloads" "READY 2"

# A DROP EXTENSION that locks tables before it locks the extension (on
# Citus a worker node's DROP drops its shards first, test 026): a pass that
# began in between holds the extension and waits on a table, and the DROP
# then waits on the pass.  Here one session locks workload.workloads, waits
# past deadlock_timeout (so the pass's own deadlock check has passed), then
# drops the extension and rolls back.  Passes give way to the table lock,
# so the DROP goes through instead of being cancelled as a deadlock.
check "the workload is claimed again once its retry delay has passed" \
	wait_for 20 "SELECT count(*) FROM workload_claim('w-locked', '{}', 'acme', 'billing', '1 second', start => true)" 1
drop_behind_lock() {
	PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 -d postgres -c "BEGIN" \
		-c "LOCK TABLE workload.workloads IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(2)" \
		-c "DROP EXTENSION workload CASCADE" -c "ROLLBACK" >"$WL_TMP/drop.out" 2>&1 ||
		{ sed 's/^/#   /' "$WL_TMP/drop.out"; return 1; }
}
check "a DROP EXTENSION behind its own table lock is not cancelled by a pass waiting on that table" \
	drop_behind_lock
check "passes gave way to the lock and said so in the log" \
	test "$(log_count 'workload tick: pass skipped, a lock it needs is held by another session')" -gt 0
# (the third attempt of three: recovered, it dead-letters the workload)
check "... the worker went on (same process) and recovered the lease once the lock was gone" \
	wait_for 10 "SELECT state || ' ' || attempt_count || ' ' || (SELECT pid FROM pg_stat_activity
		WHERE backend_type = 'workload tick' AND datname = 'postgres') FROM workload.workloads" "DEAD_LETTER 3 $pid"

q "ALTER SYSTEM SET workload.tick_interval = '100ms'" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
sleep 1
check "a reload (SIGHUP) keeps the same worker running" test "$(worker_pid)" = "$pid"

q "ALTER SYSTEM SET workload.database = 'some_other_db'" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
check "workload.database naming another database stops this one's worker (SIGHUP)" \
	wait_for 5 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick'" 0
q "ALTER SYSTEM SET workload.database = 'some_other_db, postgres'" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
check "naming it again brings the worker back" \
	wait_for 20 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'postgres'" 1
# refused_list: ALTER SYSTEM refuses a workload.database that does not parse
refused_list() {
	local out
	out=$(psql -X -qAt -c "ALTER SYSTEM SET workload.database = 'a, \"b'" 2>&1) && return 1
	echo "$out" | grep -q 'invalid value for parameter "workload.database"'
}
check "a list that does not parse is refused" refused_list
check "the log shows no error from the workers" \
	test "$(grep 'ERROR' "$WL_TMP/server.log" | grep -vc 'invalid value for parameter "workload.database"')" = 0

check "the server stops cleanly with the worker running" stop_server
check "no process was killed by a signal or panicked" \
	test "$(log_count 'terminated by signal\|PANIC\|was terminated by')" = 0

done_testing || { note "server log follows"; tail -n 40 "$WL_TMP/server.log" | sed 's/^/# /'; exit 1; }
