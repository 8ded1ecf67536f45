#!/usr/bin/env bash
# With the library in shared_preload_libraries, a launcher keeps one tick
# worker in every database where the extension is installed: databases that
# had it when the server started, and one created and given the extension
# afterwards, tick at once (each recovers an expired lease with nobody calling
# the tick); DROP EXTENSION stops that database's worker and CREATE EXTENSION
# brings it back; a template is not served, and a database created from it
# with the extension is; DROP DATABASE is not blocked by a worker; the
# workers and the launcher come back after pg_terminate_backend, never two
# per database; the server stops cleanly (SPEC section 4, the background
# worker).  Run as root after "make install"; prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root

. "$WL_ROOT/test/tap.sh"
tap_before_check() { [ -z "${WL_DATA:-}" ] || [ ! -f "$WL_DATA/postmaster.pid" ] || sample; }
# qd DB SQL: one statement in database DB.  wait_in SECONDS DB SQL EXPECTED: wait_for there.
qd() { q "$2" -d "$1"; }
wait_in() { wait_for "$1" "$3" "$4" -d "$2"; }
ticks() { q "SELECT coalesce(string_agg(datname, ' ' ORDER BY datname), '') FROM pg_stat_activity WHERE backend_type = 'workload tick'"; }
tick_pid() { q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = '$1'"; }
launcher_pid() { q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'workload launcher'"; }
log_count() { grep -c "$1" "$WL_TMP/server.log" || true; }
# sample: count the moments when a database had two tick workers
doubled=0
sample() {
	local d
	d=$(q "SELECT count(*) FROM (SELECT datname FROM pg_stat_activity WHERE backend_type = 'workload tick'
		GROUP BY datname HAVING count(*) > 1) x")
	[ "$d" = 0 ] || doubled=$((doubled + 1))
}

# install_in DB: the extension and one workload whose worker takes a 1-second
# lease and vanishes
install_in() {
	qd "$1" "CREATE EXTENSION IF NOT EXISTS workload CASCADE" >/dev/null
	lease_in "$1" "w-$1-$RANDOM"
}
lease_in() {
	qd "$1" "SELECT workload_create(jsonb_build_object(
	'tenant_id', 'acme', 'application_id', 'billing', 'environment', 'tap',
	'definition_id', 'invoice.render', 'definition_revision', 'r1', 'trigger', 'api',
	'input', '{\"n\": 1}'::jsonb, 'idempotency_key', '$2',
	'requested_by', '{\"kind\": \"agent\", \"id\": \"planner\"}'::jsonb,
	'authorization_snapshot', workload_sign_grant(jsonb_build_object(
		'contract_version', 1, 'id', 'grant-tap', 'revision', 1, 'status', 'active',
		'issuer', '{\"kind\": \"service\", \"id\": \"iam\"}'::jsonb,
		'subject', '{\"kind\": \"agent\", \"id\": \"planner\"}'::jsonb,
		'tenant_id', 'acme', 'application_id', 'billing', 'capabilities', '[\"*\"]'::jsonb,
		'resources', '[]'::jsonb, 'constraints', '{\"subject_attributes\": {}}'::jsonb,
		'parent_grant', null, 'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z'))))" >/dev/null
	qd "$1" "SELECT count(*) FROM workload_claim('w-gone', '{}', 'acme', 'billing', '1 second', start => true)" >/dev/null
}
# recovered DB: every workload there was recovered once (READY, one attempt WORKER_LOST)
recovered() {
	wait_in 10 "$1" "SELECT count(*) FILTER (WHERE state <> 'READY') || ' ' ||
		(SELECT count(*) FILTER (WHERE outcome IS DISTINCT FROM 'WORKER_LOST') FROM workload.attempt_log)
		FROM workload.workloads" "0 0"
}
stop_server() { runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -m fast -t 30 -w stop >/dev/null; }
start_server() { runuser -u postgres -- "$WL_PG_BIN/pg_ctl" -D "$WL_DATA" -l "$WL_TMP/server.log" -w start >/dev/null; }

wl_cluster_start "shared_preload_libraries = 'workload'" "workload.tick_interval = '200ms'" \
	"max_prepared_transactions = 2"
q "CREATE DATABASE wl_one" >/dev/null
q "CREATE DATABASE wl_two" >/dev/null
q "CREATE DATABASE wl_none" >/dev/null
qd wl_one "CREATE EXTENSION workload CASCADE" >/dev/null
qd wl_two "CREATE EXTENSION workload CASCADE" >/dev/null

# The launcher finds the databases at its start: restart the server
stop_server && start_server
check "after a restart the launcher runs once, connected to no database" \
	wait_in 10 postgres "SELECT count(*) || ' ' || count(datname) FROM pg_stat_activity WHERE backend_type = 'workload launcher'" "1 0"
check "it starts a tick worker in each database that has the extension, and none elsewhere" \
	wait_in 10 postgres "SELECT coalesce(string_agg(datname, ' ' ORDER BY datname), '') FROM pg_stat_activity WHERE backend_type = 'workload tick'" "wl_one wl_two"
lease_in wl_one one-1
lease_in wl_two two-1
check "an expired lease is recovered in wl_one with nobody calling the tick" recovered wl_one
check "and in wl_two at the same time" recovered wl_two

q "CREATE DATABASE wl_three" >/dev/null
sleep 1
check "a database created after the start, without the extension, gets no worker" test "$(ticks)" = "wl_one wl_two"
install_in wl_three
check "CREATE EXTENSION there gets it a tick worker within 5 seconds" \
	wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_three'" 1
check "which recovers its expired lease" recovered wl_three

one=$(tick_pid wl_one)
two=$(tick_pid wl_two)
qd wl_three "DROP EXTENSION workload" >/dev/null
check "DROP EXTENSION stops that database's worker within 5 seconds" \
	wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_three'" 0
check "it says so in the log, and the other workers go on (same processes)" \
	test "$(log_count 'workload tick stopped in database "wl_three": the extension was dropped')" = 1 \
	-a "$(tick_pid wl_one) $(tick_pid wl_two)" = "$one $two"
sleep 1
check "the worker is not started again while the extension is absent" test "$(ticks)" = "wl_one wl_two"
install_in wl_three
check "CREATE EXTENSION again brings it back" \
	wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_three'" 1

# an extension made by a prepared transaction (as Citus makes it on its
# workers): COMMIT PREPARED runs no commit hook of the session that created
# it, and itself asks the launcher to look at the database
q "CREATE DATABASE wl_prepared" >/dev/null
sleep 1
qd wl_prepared "BEGIN; CREATE EXTENSION workload CASCADE; PREPARE TRANSACTION 'wl_ext'" >/dev/null
qd wl_prepared "COMMIT PREPARED 'wl_ext'" >/dev/null
check "an extension created through PREPARE TRANSACTION is served once COMMIT PREPARED runs (no reload)" \
	wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_prepared'" 1

# a template is not served (a connected worker would make CREATE DATABASE
# from it fail), a database created from it is
q "CREATE DATABASE wl_template" >/dev/null
qd wl_template "CREATE EXTENSION workload CASCADE" >/dev/null
wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_template'" 1 >/dev/null
q "ALTER DATABASE wl_template IS_TEMPLATE true" >/dev/null
check "a database marked as a template loses its worker" \
	wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_template'" 0
check "CREATE DATABASE from that template works" \
	qd postgres "CREATE DATABASE wl_copy TEMPLATE wl_template"
check "and the copy, which has the extension, gets a worker" \
	wait_in 5 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_copy'" 1

check "ALTER DATABASE ... RENAME of a served database is not blocked by its worker" \
	qd postgres "ALTER DATABASE wl_copy RENAME TO wl_copied"
check "the renamed database is served again (the launcher restarts its worker)" \
	wait_in 20 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_copied'" 1
check "DROP DATABASE of a served database is not blocked by its worker" qd postgres "DROP DATABASE wl_copied"

q "SELECT pg_terminate_backend($(tick_pid wl_one))" >/dev/null
check "a terminated tick worker comes back (the launcher restarts it)" \
	wait_in 20 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'wl_one' AND pid <> $one" 1
lease_in wl_one one-2
check "and recovers the next expired lease" recovered wl_one

launcher=$(launcher_pid)
two=$(tick_pid wl_two)
q "SELECT pg_terminate_backend($launcher)" >/dev/null
check "a terminated launcher comes back (bgw_restart_time)" \
	wait_in 20 postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload launcher' AND pid <> $launcher" 1
sleep 1
check "the tick workers went on meanwhile, and the new launcher started no second one" \
	test "$(ticks)" = "wl_one wl_prepared wl_three wl_two" -a "$(tick_pid wl_two)" = "$two"

sample
check "no database had two tick workers at any moment we looked" test "$doubled" = 0
check "the log shows no error" test "$(log_count 'ERROR')" = 0
check "the server stops cleanly with the workers running" stop_server
check "no process was killed by a signal or panicked" \
	test "$(log_count 'terminated by signal\|PANIC\|was terminated by')" = 0

done_testing || { note "server log follows"; tail -n 60 "$WL_TMP/server.log" | sed 's/^/# /'; exit 1; }
