#!/usr/bin/env bash
# Nobody stalls the shared machinery (SPEC section 5.1): the attacks a review
# of 1.3 made on the tick, each through real login roles on their own
# connections, against a server whose background worker ticks every second:
#   H1  a role with no workload rights holds the advisory lock key the tick
#       used to take, and tries every lock it can reach;
#   H2  a tenant keeps its own rows locked in open transactions and points
#       schedule templates' dependencies, a timeout's cascade and an
#       expired lease at them;
#   H3  a tenant tries 10,000 schedule time zones;
#   M5  a tenant with 2,000 schedules due every second;
#   M4  a cancel cascade that reaches 30,000 dependents.
# Another tenant's expired leases are recovered within two tick intervals
# while H1 and H2 hold their locks for 60 s, and its schedule fires within two
# intervals of each slot beside M5's; the tick worker's memory stays flat
# over H3; each maintenance pass of M4's cascade keeps to its budget of steps
# and time; a tick called by hand with no lock_timeout of its own waits for
# no row a tenant holds.  Run as root after "make install"; prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
. "$WL_ROOT/test/tap.sh"

INTERVAL_MS=1000
DB=wlt_shared
CDB=wlt_cascade
wl_cluster_start "shared_preload_libraries = 'workload'" "workload.database = '$DB'" \
	"workload.tick_interval = '${INTERVAL_MS}ms'" "fsync = off" "synchronous_commit = off" \
	"full_page_writes = off" "max_connections = 60" >/dev/null

ROLES="sm_a_client sm_a_worker sm_b_client sm_b_worker sm_stranger"
# su DB SQL: as the superuser.  as ROLE DB SQL: as a login role, its own connection.
su() { q "$2" -d "$1"; }
as() { q "$3" -U "$1" -d "$2"; }
# code ROLE DB SQL: the SQLSTATE the statement ends with (00000 when it succeeds)
code() { sqlstate "$3" -U "$1" -d "$2"; }
# hold NAME ROLE DB SQL...: a session that runs the statements, then stays idle in its
# transaction until release NAME; its output goes to $WL_TMP/NAME.out
hold() {
	local name=$1 role=$2 db=$3
	shift 3
	mkfifo "$WL_TMP/$name.in"
	psql -X -qAt -U "$role" -d "$db" <"$WL_TMP/$name.in" >"$WL_TMP/$name.out" 2>&1 &
	eval "HOLD_$name=$!"
	exec {fd}>"$WL_TMP/$name.in"
	eval "HOLD_FD_$name=$fd"
	for s in "$@"; do printf '%s\n' "$s" >&"$fd"; done
	printf '%s\n' "SELECT 'held';" >&"$fd"
}
release() {
	local fd pid
	eval "fd=\$HOLD_FD_$1 pid=\$HOLD_$1"
	printf '%s\n' "ROLLBACK;" '\q' >&"$fd"
	exec {fd}>&-
	wait "$pid" 2>/dev/null
}
tick_pid() { su postgres "SELECT pid FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = '$DB'"; }
# mem_kb PID: the memory a backend has allocated (its memory contexts' grand
# total, which pg_log_backend_memory_contexts writes to the server log), in kB
mem_kb() {
	local before after
	before=$(grep -c "\[$1\].*Grand total" "$WL_TMP/server.log")
	su postgres "SELECT pg_log_backend_memory_contexts($1)" >/dev/null
	for _ in $(seq 1 50); do
		after=$(grep -c "\[$1\].*Grand total" "$WL_TMP/server.log")
		[ "$after" -gt "$before" ] && break
		sleep 0.1
	done
	grep "\[$1\].*Grand total" "$WL_TMP/server.log" | tail -n 1 | sed 's/.*Grand total: \([0-9]*\) bytes.*/\1/' |
		awk '{ print int($1 / 1024) }'
}

setup_db() {
	local db=$1
	su postgres "CREATE DATABASE $db" >/dev/null || bail "no database $db"
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null <<'SQL' || bail "setup of $db failed"
SET client_min_messages = warning;
CREATE EXTENSION workload CASCADE;
DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'sm_a_client') THEN
		CREATE ROLE sm_a_client LOGIN IN ROLE workload_client;
		CREATE ROLE sm_a_worker LOGIN IN ROLE workload_worker;
		CREATE ROLE sm_b_client LOGIN IN ROLE workload_client;
		CREATE ROLE sm_b_worker LOGIN IN ROLE workload_worker;
		CREATE ROLE sm_stranger LOGIN;
	END IF;
END $$;
SELECT workload_add_tenant_member(r, 'ta', 'app') FROM unnest(ARRAY['sm_a_client', 'sm_a_worker']) r;
SELECT workload_add_tenant_member(r, 'tb', 'app') FROM unnest(ARRAY['sm_b_client', 'sm_b_worker']) r;
-- each tenant's grant, signed by the operator, and a create spec under it
CREATE TABLE public.grants AS
SELECT t AS tenant, workload_sign_grant(jsonb_build_object(
	'contract_version', 1, 'id', 'grant-' || t, 'revision', 1, 'status', 'active',
	'issuer', '{"kind": "service", "id": "iam"}'::jsonb,
	'subject', '{"kind": "agent", "id": "planner"}'::jsonb,
	'tenant_id', t, 'application_id', 'app', 'capabilities', '["*"]'::jsonb,
	'resources', '[]'::jsonb, 'constraints', '{"subject_attributes": {}}'::jsonb,
	'parent_grant', null, 'issued_at', '2020-01-01T00:00:00Z',
	'expires_at', '2100-01-01T00:00:00Z')) AS g
FROM unnest(ARRAY['ta', 'tb']) t;
GRANT SELECT ON public.grants TO PUBLIC;
CREATE FUNCTION public.tpl(tenant text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $f$
	SELECT jsonb_build_object('environment', 'tap', 'definition_id', 'job', 'definition_revision', 'r1',
		'trigger', 'api', 'input', '{}'::jsonb,
		'requested_by', '{"kind": "agent", "id": "planner"}'::jsonb,
		'authorization_snapshot', (SELECT g FROM public.grants WHERE grants.tenant = tpl.tenant)) || extra
$f$;
CREATE FUNCTION public.spec(tenant text, key text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $f$
	SELECT public.tpl(tenant, extra) || jsonb_build_object('tenant_id', tenant, 'application_id', 'app',
		'idempotency_key', key)
$f$;
SQL
}
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null
	wl_cluster_stop
}
trap cleanup EXIT
setup_db "$DB"
setup_db "$CDB"
check "the tick worker serves $DB" \
	wait_for 10 "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'workload tick' AND datname = '$DB'" 1 -d postgres

# ---------------------------------------------------------------- H3
# 10,000 zone attempts by tenant ta: POSIX specifications (each a zone of its
# own to the old tick) and other spellings of IANA names, each a schedule
# created or replaced; the tick fires what was stored.  First the same 50
# schedules in five IANA zones for a while: the worker loads each zone once
# (PostgreSQL keeps a zone it has loaded, about 200 kB; at most the ~600
# names of pg_timezone_names), and the measure starts after that.
ZONES="'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'UTC', 'Etc/GMT+3'"
as sm_a_client $DB "SELECT count(*) FROM generate_series(0, 49) i,
	LATERAL workload_schedule('ta', 'app', 'z' || i, '@every 1 second', public.tpl('ta'),
		(ARRAY[$ZONES])[1 + i % 5], 'allow')" >/dev/null
sleep 8
pid=$(tick_pid)
before=$(mem_kb "$pid")
attempts=$(as sm_a_client $DB "
	DO \$\$
	DECLARE refused int := 0; stored int := 0; z text;
	BEGIN
		FOR i IN 1..10000 LOOP
			z := CASE i % 4
				WHEN 0 THEN format('BBB%s:%s', i % 24, lpad((i % 60)::text, 2, '0'))
				WHEN 1 THEN format('<+%s>-%s', i, i % 12)
				WHEN 2 THEN (ARRAY['europe/berlin', 'AMERICA/NEW_YORK', 'Asia/TOKYO', 'utc', 'etc/gmt+3'])[1 + (i / 4) % 5]
				ELSE format('%sEurope/Berlin%s', repeat(' ', i % 2), repeat(' ', (i / 2) % 2)) END;
			BEGIN
				PERFORM workload_schedule('ta', 'app', 'z' || (i % 50), '@every 1 second', public.tpl('ta'), z, 'allow');
				stored := stored + 1;
			EXCEPTION WHEN sqlstate 'WL001' THEN refused := refused + 1;
			END;
		END LOOP;
		RAISE WARNING 'attempts % % ', refused, stored;
	END \$\$" 2>&1 | sed -n 's/.*attempts \([0-9]*\) \([0-9]*\).*/\1 \2/p')
note "zone attempts refused, stored: $attempts"
check "POSIX zone specifications are refused (WORKLOAD_INVALID)" \
	test "$(code sm_a_client $DB "SELECT workload_schedule('ta', 'app', 'p', '@hourly', public.tpl('ta'), 'BBB0:01')")" = WL001
zones=$(su $DB "SELECT string_agg(DISTINCT timezone, ',' ORDER BY timezone) FROM workload.schedules")
note "zones stored: $zones"
check "what is stored is the canonical IANA name, whatever the spelling" \
	test "$(su $DB "SELECT bool_and(timezone IN (SELECT name FROM pg_timezone_names)) FROM workload.schedules")" = t
sleep 5
after=$(mem_kb "$pid")
note "tick worker $pid allocated memory: $before kB before, $after kB after 10,000 attempts and 5 ticks"
check "the tick worker's memory stays flat (grew $((after - before)) kB, bound 256 kB)" \
	test -n "$before" -a -n "$after" -a "$((after - before))" -lt 256 -a "$pid" = "$(tick_pid)"
as sm_a_client $DB "SELECT count(*) FROM workload_schedules('ta', 'app') s,
	LATERAL workload_schedule_drop('ta', 'app', s ->> 'schedule_id')" >/dev/null

# ---------------------------------------------------------------- H1 + H2, 60 s
# H1: the stranger takes the advisory key the tick once used, and every lock
# it can reach, and stays
check "the stranger cannot lock the extension's catalog row or tables (42501)" \
	test "$(code sm_stranger $DB "SELECT 1 FROM pg_catalog.pg_extension FOR UPDATE")" = 42501 \
	-a "$(code sm_stranger $DB "BEGIN; LOCK TABLE pg_catalog.pg_extension; COMMIT")" = 42501 \
	-a "$(code sm_stranger $DB "BEGIN; LOCK TABLE workload.workload_rows; COMMIT")" = 42501
hold h1 sm_stranger $DB "BEGIN;" "SELECT pg_advisory_lock(8606223218634613092);" \
	"SELECT pg_advisory_xact_lock_shared(k) FROM generate_series(1, 1000) k;"
# H2: ta's rows held: y, whose lease expires while ta's worker holds its row;
# x, which ta's client keeps in an open transaction; 100 schedules whose
# templates depend on x; and r, whose cancellation the tick completes in the
# window (its worker never confirms), cascading to rd and to the held x
y=$(as sm_a_client $DB "SELECT workload_create(public.spec('ta', 'y')) ->> 'workload_id'")
read -r yclaim ytoken <<<"$(as sm_a_worker $DB "SELECT claim_id || ' ' || fencing_token
	FROM workload_claim_id('$y', 'ta-w', '{}', '3 seconds') c, LATERAL workload_start('$y', c.claim_id, 'ta-w', c.fencing_token) s")"
r=$(as sm_a_client $DB "SELECT workload_create(public.spec('ta', 'r')) ->> 'workload_id'")
as sm_a_worker $DB "SELECT workload_start('$r', c.claim_id, 'ta-w', c.fencing_token)
	FROM workload_claim_id('$r', 'ta-w', '{}', '4 seconds') c" >/dev/null
as sm_a_client $DB "SELECT workload_cancel('$r', 'ta')" >/dev/null
on_r="jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', '$r', 'required_state', 'SUCCEEDED')))"
x=$(as sm_a_client $DB "SELECT workload_create(public.spec('ta', 'x', $on_r)) ->> 'workload_id'")
rd=$(as sm_a_client $DB "SELECT workload_create(public.spec('ta', 'rd', $on_r)) ->> 'workload_id'")
as sm_a_client $DB "SELECT count(*) FROM generate_series(1, 100) i,
	LATERAL workload_schedule('ta', 'app', 'dep' || i, '@every 1 second',
		public.tpl('ta', jsonb_build_object('dependencies', jsonb_build_array(
			jsonb_build_object('workload_id', '$x', 'required_state', 'SUCCEEDED')))), 'UTC', 'allow')" >/dev/null
hold h2x sm_a_client $DB "BEGIN;" "SELECT workload_cancel('$x', 'ta');"
hold h2y sm_a_worker $DB "BEGIN;" "SELECT workload_heartbeat('$y', '$yclaim', 'ta-w', $ytoken, '2 seconds');"
sleep 1
check "the stranger's and ta's sessions hold their locks" \
	test "$(cat "$WL_TMP/h1.out" "$WL_TMP/h2x.out" "$WL_TMP/h2y.out" | grep -c '^held$')" = 3
# tb, meanwhile: a workload a second claimed on a lease of 1 s and left to expire
end=$((SECONDS + 60))
n=0
while [ $SECONDS -lt $end ]; do
	n=$((n + 1))
	as sm_b_client $DB "SELECT workload_create(public.spec('tb', 'b$n'))" >/dev/null
	as sm_b_worker $DB "SELECT workload_id || ',' || lease_expires_at || ',' || fencing_token
		FROM workload_claim('tb-w', '{}', 'tb', 'app', '1 second', start => true)" >>"$WL_TMP/leases.csv"
	sleep 1
done
sleep 3
still=$(cat "$WL_TMP/h1.out" "$WL_TMP/h2x.out" "$WL_TMP/h2y.out" | grep -c '^held$')
su $DB "CREATE TABLE public.leases (workload_id text, lease_expires_at timestamptz, fencing_token bigint)" >/dev/null
psql -X -q -d $DB -c "\copy public.leases FROM '$WL_TMP/leases.csv' WITH (FORMAT csv)" >/dev/null
lags=$(su $DB "SELECT count(*) || ' ' || coalesce(round(max(lag) * 1000), -1) || ' ' || coalesce(round(avg(lag) * 1000), -1)
	FROM (SELECT extract(epoch FROM e.at - l.lease_expires_at) AS lag
	      FROM public.leases l, workload_history(l.workload_id) e
	      WHERE e.event_type = 'workload.recovered'
	        AND (e.evidence ->> 'fencing_token')::bigint = l.fencing_token) x")
read -r recovered maxlag avglag <<<"$lags"
claims=$(wc -l <"$WL_TMP/leases.csv")
note "tb: $claims leases expired, $recovered recovered; lag from lease expiry to recovery: max $maxlag ms, mean $avglag ms"
check "while the stranger and ta held their locks for 60 s, each of tb's $claims expired leases was recovered" \
	test "$claims" -ge 30 -a "$recovered" = "$claims" -a "$still" = 3
check "within two tick intervals of its expiry ($maxlag ms, bound $((2 * INTERVAL_MS)) ms)" \
	test "$maxlag" -ge 0 -a "$maxlag" -le $((2 * INTERVAL_MS))
check "ta's schedules depending on its held row gave way: no slot recorded as failed for it" \
	test "$(su $DB "SELECT count(*) FROM workload.schedule_events WHERE event_type = 'schedule.failed'")" = 0
states() { su $DB "SELECT string_agg(state::text, ' ' ORDER BY array_position(ARRAY['$r', '$rd', '$x', '$y'], workload_id))
	FROM workload.workloads WHERE workload_id IN ('$r', '$rd', '$x', '$y')"; }
is "$(states)" "CANCELLED CANCELLED READY RUNNING" \
	"the tick completed r's cancellation in the window and cascaded to rd, passing over the held x; y's row stays held"
release h1
release h2x
release h2y
check "once ta lets go, the carried-over cascade cancels x and y's expired lease is recovered" \
	wait_for 10 "SELECT string_agg(state::text, ' ' ORDER BY workload_id = '$x' DESC) FROM workload.workloads
		WHERE workload_id IN ('$x', '$y')" "CANCELLED READY" -d $DB
as sm_a_client $DB "SELECT count(*) FROM workload_schedules('ta', 'app') s,
	LATERAL workload_schedule_drop('ta', 'app', s ->> 'schedule_id')" >/dev/null

# ---------------------------------------------------------------- M5
# ta: 2,000 schedules due every second (twice the slots a pass fires); tb: one
as sm_a_client $DB "SELECT count(*) FROM generate_series(1, 2000) i,
	LATERAL workload_schedule('ta', 'app', 'many' || i, '@every 1 second', public.tpl('ta'), 'UTC', 'allow')" >/dev/null
as sm_b_client $DB "SELECT workload_schedule('tb', 'app', 'quiet', '@every 2 seconds', public.tpl('tb'), 'UTC', 'allow')" >/dev/null
sleep 20
lags=$(su $DB "SELECT count(*) || ' ' || coalesce(round(max(lag) * 1000), -1)
	FROM (SELECT extract(epoch FROM w.created_at - substring(s.idempotency_key FROM '^schedule:quiet:(.*)$')::timestamptz) AS lag
	      FROM workload.workloads w JOIN workload.specs s USING (tenant_id, workload_id)
	      WHERE w.tenant_id = 'tb' AND s.idempotency_key LIKE 'schedule:quiet:%') l")
read -r fired maxlag <<<"$lags"
a_fired=$(su $DB "SELECT count(*) FROM workload.workloads WHERE tenant_id = 'ta' AND created_at > now() - interval '20 seconds'")
note "beside ta's 2,000 schedules ($a_fired slots fired for ta in 20 s), tb's fired $fired slots, each at most $maxlag ms after its time"
check "tb's schedule fires every slot within two tick intervals of its time beside ta's 2,000" \
	test "$fired" -ge 8 -a "$maxlag" -ge 0 -a "$maxlag" -le $((2 * INTERVAL_MS))
su postgres "ALTER SYSTEM SET workload.max_schedules_per_tenant = 2000" >/dev/null
su postgres "SELECT pg_reload_conf()" >/dev/null
sleep 1
check "with workload.max_schedules_per_tenant = 2000, ta's next schedule is WORKLOAD_QUOTA_EXCEEDED" \
	test "$(code sm_a_client $DB "SELECT workload_schedule('ta', 'app', 'one-more', '@hourly', public.tpl('ta'))")" = WL018
check "replacing one of its schedules is not a new one" \
	test "$(code sm_a_client $DB "SELECT workload_schedule('ta', 'app', 'many1', '@hourly', public.tpl('ta'))")" = 00000
su postgres "ALTER SYSTEM RESET workload.max_schedules_per_tenant" >/dev/null
su postgres "SELECT pg_reload_conf()" >/dev/null
for t in ta tb; do
	as sm_${t#t}_client $DB "SELECT count(*) FROM workload_schedules('$t', 'app') s,
		LATERAL workload_schedule_drop('$t', 'app', s ->> 'schedule_id')" >/dev/null
done

# ---------------------------------------------------------------- M4, by hand in $CDB
# (no background worker serves $CDB: each pass below is called and timed here)
# the root's cancellation is requested while a worker holds it; the worker
# never confirms, so the tick completes it when the lease expires, and the
# cancellation cascades to every dependent
root=$(as sm_a_client $CDB "SELECT workload_create(public.spec('ta', 'root')) ->> 'workload_id'")
as sm_a_worker $CDB "SELECT workload_start('$root', c.claim_id, 'ta-w', c.fencing_token)
	FROM workload_claim_id('$root', 'ta-w', '{}', '1 second') c" >/dev/null
as sm_a_client $CDB "SELECT workload_cancel('$root', 'ta')" >/dev/null
t0=$SECONDS
for i in $(seq 0 29); do
	as sm_a_client $CDB "SELECT count(*) FROM workload_create_many((SELECT jsonb_agg(public.spec('ta', 'd' || k,
		jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', '$root',
			'required_state', 'SUCCEEDED'))))) FROM generate_series($((i * 1000 + 1)), $((i * 1000 + 1000))) k))" >/dev/null ||
		bail "could not create the dependents"
done
note "30,000 dependents of one root created in $((SECONDS - t0)) s"
# a tick called by hand, with no lock_timeout of its own, while ta holds one dependent
d1=$(su $CDB "SELECT workload_id FROM workload.specs WHERE idempotency_key = 'd1'")
hold m4 sm_a_client $CDB "BEGIN;" "SELECT workload_cancel('$d1', 'ta');"
sleep 2
passes=0
bad=0
total_steps=0
worst_ms=0
t0=$SECONDS
while [ $passes -lt 400 ]; do
	passes=$((passes + 1))
	phase=leases
	[ $passes -gt 1 ] && phase=cascades
	line=$(q "SET lock_timeout = 0; SET statement_timeout = '60s';
		SELECT (r ->> 'cascade_steps') || ' ' || (r ->> 'cascades_left') || ' ' || (r ->> 'more') || ' '
		       || round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)
		FROM workload.tick_phase('$phase') r" -d $CDB) || { bad=1; break; }
	read -r steps left more ms <<<"$line"
	total_steps=$((total_steps + steps))
	[ "$ms" -gt "$worst_ms" ] && worst_ms=$ms
	budget_steps=5000
	[ $phase = leases ] && budget_steps=1000
	if [ "$steps" -gt "$budget_steps" ] || { [ $phase = cascades ] && [ "$ms" -gt 1500 ]; }; then
		bad=1
		note "pass $passes ($phase): $steps steps, $ms ms"
	fi
	# done when only the dependent ta holds is left
	[ $passes -gt 1 ] && [ "$left" -le 1 ] && [ "$steps" -le 1 ] && break
done
note "the cascade of 30,000 took $passes passes in $((SECONDS - t0)) s, $total_steps steps; the longest pass $worst_ms ms"
check "no pass took more steps than its budget (1,000 in the leases phase, 5,000 in the cascades phase) nor over 1.5 s with its time budget of 1 s" \
	test "$bad" = 0
check "every dependent but the one ta holds was cancelled" \
	test "$(su $CDB "SELECT count(*) FILTER (WHERE state = 'CANCELLED') || ' ' || count(*) FILTER (WHERE state <> 'CANCELLED')
		FROM workload.workloads w JOIN workload.specs s USING (tenant_id, workload_id) WHERE s.idempotency_key LIKE 'd%'")" = "29999 1"
release m4
q "SELECT workload.tick_phase('cascades')" -d $CDB >/dev/null
check "once ta lets go, the one it held is cancelled by the next pass" \
	test "$(su $CDB "SELECT state FROM workload.workloads WHERE workload_id = '$d1'")" = CANCELLED

done_testing
