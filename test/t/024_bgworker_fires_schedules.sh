#!/usr/bin/env bash
# With the library preloaded, the background tick fires schedules in real
# time with nobody calling workload_tick: an "@every 1 second" schedule
# makes one workload per second, each on a whole second, each slot once even
# while sessions call workload_tick in a loop beside the background worker;
# a paused schedule makes none, and resuming starts again (SPEC section 4,
# "Scheduling and bulk work").  Run as root after "make install"; prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root

. "$WL_ROOT/test/tap.sh"
made() { q "SELECT count(*) FROM workload.specs WHERE idempotency_key LIKE 'schedule:every-second:%'"; }

wl_cluster_start "shared_preload_libraries = 'workload'" "workload.tick_interval = '200ms'"
q "CREATE EXTENSION workload CASCADE" >/dev/null
check "a tick worker runs in the database" \
	wait_for 10 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = 'postgres'" 1

q "SELECT workload_schedule('acme', 'billing', 'every-second', '@every 1 second', jsonb_build_object(
	'environment', 'tap', 'definition_id', 'heartbeat.ping', 'definition_revision', 'r1',
	'trigger', 'api', 'input', '{}'::jsonb,
	'requested_by', '{\"kind\": \"agent\", \"id\": \"planner\"}'::jsonb,
	'authorization_snapshot', workload_sign_grant(jsonb_build_object(
		'contract_version', 1, 'id', 'grant-tap', 'revision', 1, 'status', 'active',
		'issuer', '{\"kind\": \"service\", \"id\": \"iam\"}'::jsonb,
		'subject', '{\"kind\": \"agent\", \"id\": \"planner\"}'::jsonb,
		'tenant_id', 'acme', 'application_id', 'billing', 'capabilities', '[\"*\"]'::jsonb,
		'resources', '[]'::jsonb, 'constraints', '{\"subject_attributes\": {}}'::jsonb,
		'parent_grant', null, 'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z'))),
	overlap => 'allow')" >/dev/null

# two sessions tick in a loop beside the background worker for about 4 seconds
racers=()
for r in 1 2; do
	( end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do q "SELECT workload_tick()" >/dev/null; done ) &
	racers+=($!)
done
wait "${racers[@]}"
sleep 1.5
count=$(made)
check "the schedule made one workload a second while two sessions ticked beside the background worker (made $count in ~5.5 s)" \
	test "$count" -ge 4 -a "$count" -le 7
check "each slot once: as many distinct keys as workloads, all with trigger schedule" \
	test "$(q "SELECT count(DISTINCT idempotency_key) || ' ' || count(*) FILTER (WHERE trigger = 'schedule')
	           FROM workload.specs")" = "$count $count"
check "each slot is a whole second, one second after the one before" \
	test "$(q "SELECT count(*) FROM (SELECT (substring(idempotency_key FROM '^schedule:every-second:(.*)\$'))::timestamptz AS slot,
	                  lag((substring(idempotency_key FROM '^schedule:every-second:(.*)\$'))::timestamptz)
	                      OVER (ORDER BY idempotency_key) AS prev FROM workload.specs) s
	           WHERE extract(microseconds FROM s.slot)::bigint % 1000000 <> 0
	              OR (s.prev IS NOT NULL AND s.slot - s.prev <> interval '1 second')")" = 0
check "the schedule shows its last slot and workload, and no error" \
	test "$(q "SELECT (d ->> 'last_workload_id') IS NOT NULL AND (d ->> 'last_error') IS NULL
	             AND (d ->> 'next_run_at')::timestamptz > (d ->> 'last_run_at')::timestamptz
	           FROM workload_schedules('acme', 'billing') d")" = t

q "SELECT workload_schedule_pause('acme', 'billing', 'every-second')" >/dev/null
before=$(made)
sleep 2
check "a paused schedule makes nothing" test "$(made)" = "$before"
q "SELECT workload_schedule_resume('acme', 'billing', 'every-second')" >/dev/null
check "resumed, it fires again within 3 seconds" \
	wait_for 3 "SELECT count(*) > $before FROM workload.specs WHERE idempotency_key LIKE 'schedule:every-second:%'" t
check "the log shows no error" test "$(grep -c 'ERROR\|WARNING' "$WL_TMP/server.log")" = 0

done_testing || { note "server log follows"; tail -n 40 "$WL_TMP/server.log" | sed 's/^/# /'; exit 1; }
