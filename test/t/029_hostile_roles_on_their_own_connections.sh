#!/usr/bin/env bash
# The rest of the review of 1.3 (SPEC section 5.1), each attack through real
# login roles on their own connections (psql -U role), refused or harmless:
#   M1  a compensation of a compensation after the root grant's revocation;
#   M2  one person with two roles approving her own workload (SET ROLE);
#   M3  a membership granted to "Hr_Bob" acted on by hr_bob;
#   D1  in one session: claim the priority-2 workload, fail it, retry it,
#       claim again: it comes before the READY priority-1 workload;
#   lapse  work whose grant expired before it was due is never handed out;
#          with context => true a claim carries each verified execution
#          context, and work whose signing key was retired is never
#          handed out either;
#   Low  the raw-write guard and a session named as Citus's; a removed
#        member's LISTEN; credential shapes in input; a tenant's quotas.
# Prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=wlt_roles
own_cluster=0
. "$WL_ROOT/test/tap.sh"

if [ -z "${PGHOST:-}" ] || ! psql -X -qAt -d postgres -c 'SELECT 1' >/dev/null 2>&1; then
	. "$WL_ROOT/scripts/cluster.sh"
	wl_need_root
	wl_cluster_start "shared_preload_libraries = 'workload'" "workload.database = 'wl_no_tick_here'" >/dev/null
	own_cluster=1
fi
ROLES="hr_client hr_worker hr_alice hr_approvers hr_bob Hr_Bob hr_colleague hr_listener hr_nobody"
drop_roles() {
	for r in $ROLES; do psql -X -qAt -d postgres -c "DROP ROLE IF EXISTS \"$r\"" >/dev/null 2>&1; done
}
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
	drop_roles
	[ "$own_cluster" = 1 ] && wl_cluster_stop
}
trap cleanup EXIT

# su SQL: as the superuser.  as ROLE SQL: as a login role, its own connection.
# code ROLE SQL: the SQLSTATE the statement ends with (00000 when it succeeds).
su() { q "$1" -d "$DB"; }
as() { q "$2" -U "$1" -d "$DB"; }
code() { sqlstate "$2" -U "$1" -d "$DB"; }

psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
drop_roles
psql -X -qAt -d postgres -c "CREATE DATABASE $DB" >/dev/null || bail "no database"
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" >/dev/null <<'SQL' || bail "setup failed"
SET client_min_messages = warning;
CREATE EXTENSION workload CASCADE;
CREATE ROLE hr_client LOGIN IN ROLE workload_client;
CREATE ROLE hr_worker LOGIN IN ROLE workload_worker, workload_client;
CREATE ROLE hr_approvers NOLOGIN IN ROLE workload_client;
CREATE ROLE hr_alice LOGIN IN ROLE workload_client, workload_worker, hr_approvers;
CREATE ROLE hr_bob LOGIN IN ROLE workload_client;
CREATE ROLE "Hr_Bob" LOGIN IN ROLE workload_client;
CREATE ROLE hr_colleague LOGIN IN ROLE workload_client;
CREATE ROLE hr_listener LOGIN IN ROLE workload_client;
CREATE ROLE hr_nobody LOGIN;
SELECT workload_add_tenant_member(r, 'ta', 'app')
FROM unnest(ARRAY['hr_client', 'hr_worker', 'hr_alice', 'hr_approvers', 'Hr_Bob', 'hr_colleague', 'hr_listener']) r;
-- the operator's grants: one for the tenant; a root and a grant derived from it for a saga
CREATE FUNCTION public.grant_of(id text, parent text DEFAULT NULL, expires text DEFAULT '2100-01-01T00:00:00Z')
RETURNS jsonb LANGUAGE sql AS $f$
	SELECT jsonb_build_object('contract_version', 1, 'id', id, 'revision', 1, 'status', 'active',
		'issuer', '{"kind": "service", "id": "iam"}'::jsonb,
		'subject', '{"kind": "agent", "id": "planner"}'::jsonb,
		'tenant_id', 'ta', 'application_id', 'app', 'capabilities', '["*"]'::jsonb,
		'resources', '[]'::jsonb, 'constraints', '{"subject_attributes": {}}'::jsonb,
		'parent_grant', parent, 'issued_at', '2020-01-01T00:00:00Z', 'expires_at', expires)
$f$;
CREATE TABLE public.grants (name text PRIMARY KEY, g jsonb);
INSERT INTO public.grants VALUES
	('ta', workload_sign_grant(public.grant_of('grant-ta'))),
	('root', workload_sign_grant(public.grant_of('root'))),
	('child', workload_sign_grant(public.grant_of('child', 'root'))),
	('soon', workload_sign_grant(public.grant_of('soon', NULL,
		to_char(now() AT TIME ZONE 'UTC' + interval '4 seconds', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))));
GRANT SELECT ON public.grants TO PUBLIC;
CREATE FUNCTION public.spec(key text, extra jsonb DEFAULT '{}', g text DEFAULT 'ta') RETURNS jsonb LANGUAGE sql AS $f$
	SELECT jsonb_build_object('tenant_id', 'ta', 'application_id', 'app', 'environment', 'tap',
		'definition_id', 'job', 'definition_revision', 'r1', 'trigger', 'api',
		'input', jsonb_build_object('n', key), 'idempotency_key', key,
		'requested_by', '{"kind": "agent", "id": "planner"}'::jsonb,
		'authorization_snapshot', (SELECT grants.g FROM public.grants WHERE name = spec.g)) || extra
$f$;
SQL

# a workload under a grant that expires 4 s after the setup, made at once; it
# needs a capability only the claim that looks for it later offers
soon=$(as hr_client "SELECT workload_create(public.spec('soon', '{\"capability_snapshot\": [\"lapse\"]}', 'soon')) ->> 'workload_id'")

# ---------------------------------------------------------------- M1
saga=$(as hr_client "SELECT workload_create(public.spec('saga', '{\"capability_snapshot\": [\"pay\", \"refund\"]}', 'child')) ->> 'workload_id'")
run_and_fail() {	# run_and_fail ID: hr_worker claims it, records an undo step, fails it for good
	as hr_worker "SELECT workload_add_compensation('$1', c.claim_id, 'w1', c.fencing_token, 'refund', '{}') IS NOT NULL
		AND workload_fail('$1', c.claim_id, 'w1', c.fencing_token, 'declined', 'no') = 'DEAD_LETTER'
		FROM workload_claim_id('$1', 'w1', '{pay,refund}', '1 hour') c,
		LATERAL (SELECT workload_start('$1', c.claim_id, 'w1', c.fencing_token)) s"
}
is "$(run_and_fail "$saga")" t "M1: the saga records an undo step and fails for good"
comp1=$(as hr_client "SELECT workload_compensate('$saga', 'ops')")
is "$(run_and_fail "$comp1")" t "M1: its compensation records an undo of its own and fails for good"
comp2=$(as hr_client "SELECT workload_compensate('$comp1', 'ops')")
su "SELECT workload_revoke_grant('root')" >/dev/null
is "$(as hr_worker "SELECT count(*) FROM workload_claim('w1', '{pay,refund}', 'ta', 'app', '1 hour', 10) WHERE workload_id = '$comp2'")" 0 \
	"M1: once the root grant is revoked, no claim hands out the compensation of the compensation"
is "$(code hr_worker "SELECT * FROM workload_claim_id('$comp2', 'w1', '{pay,refund}')")" WL017 \
	"M1: claimed by name it is AUTHORIZATION_DENIED"
su "SELECT workload_tick()" >/dev/null
is "$(su "SELECT state || ' ' || (SELECT evidence ->> 'cause' FROM workload_history('$comp2') ORDER BY sequence DESC LIMIT 1)
	FROM workload.workloads WHERE workload_id = '$comp2'")" "DEAD_LETTER authorization_revoked" \
	"M1: the tick dead-letters it as revoked"

# ---------------------------------------------------------------- M2
appr=$(as hr_alice "SELECT workload_create(public.spec('refund')) ->> 'workload_id'")
as hr_alice "SELECT workload_wait('$appr', c.claim_id, 'w1', c.fencing_token, 'human_approval', 'signoff', now() + interval '1 day')
	FROM workload_claim_id('$appr', 'w1', '{}', '1 hour') c, LATERAL workload_start('$appr', c.claim_id, 'w1', c.fencing_token) s" >/dev/null
is "$(code hr_alice "SELECT workload_approve('$appr', 'human:alice', true, NULL)")" WL002 \
	"M2: alice may not approve what she created"
is "$(code hr_alice "SET ROLE hr_approvers; SELECT workload_approve('$appr', 'human:alice', true, NULL)")" WL002 \
	"M2: nor through a group role she belongs to (SET ROLE)"
is "$(as hr_colleague "SELECT workload_approve('$appr', 'human:colleague', true, NULL)")" t \
	"M2: another person approves it"

# ---------------------------------------------------------------- M3
is "$(code hr_bob "SELECT workload_create(public.spec('as-bob'))")" WL002 \
	"M3: hr_bob is no member although \"Hr_Bob\", whose name differs only in case, is one"
is "$(code Hr_Bob "SELECT workload_create(public.spec('as-Bob'))")" 00000 \
	"M3: \"Hr_Bob\" acts under its own membership"
su "DROP OWNED BY \"Hr_Bob\"; DROP ROLE \"Hr_Bob\"; CREATE ROLE \"Hr_Bob\" LOGIN IN ROLE workload_client" >/dev/null
is "$(code Hr_Bob "SELECT workload_create(public.spec('as-new-Bob'))")" WL002 \
	"M3: a new role made with the dropped member's name is no member"

# ---------------------------------------------------------------- D1, one session
lo=$(as hr_client "SELECT workload_create(public.spec('lo', '{\"priority\": 1}')) ->> 'workload_id'")
hi=$(as hr_client "SELECT workload_create(public.spec('hi', '{\"priority\": 2, \"retry_policy\": {\"max_attempts\": 1}}')) ->> 'workload_id'")
order=$(psql -X -qAt -U hr_worker -d "$DB" -v ON_ERROR_STOP=1 <<SQL 2>&1
SELECT workload_id AS c_id, claim_id AS c_claim, fencing_token AS c_token, input ->> 'n' AS c_n
FROM workload_claim('w1', '{}', 'ta', 'app', '1 hour', start => true) \gset
SELECT :'c_n';
SELECT workload_fail(:'c_id', :'c_claim', 'w1', :c_token, 'boom', 'x');
SELECT workload_retry(:'c_id', 'ops');
SELECT input ->> 'n' FROM workload_claim('w1', '{}', 'ta', 'app', '1 hour', start => true);
SQL
)
note "D1 session: $(tr '\n' ' ' <<<"$order")"
is "$(tr '\n' ' ' <<<"$order")" "hi DEAD_LETTER READY hi " \
	"D1: after a retry in the same session, the claim takes the priority-2 workload before the priority-1 one"

# ---------------------------------------------------------------- authority over time
sleep $(su "SELECT greatest(0, ceil(extract(epoch FROM (g #>> '{grant,expires_at}')::timestamptz - now())) + 1)
	FROM public.grants WHERE name = 'soon'")
is "$(as hr_worker "SELECT count(*) FROM workload_claim('w2', '{lapse}', 'ta', 'app', '1 hour', 10) WHERE workload_id = '$soon'")" 0 \
	"lapse: a workload whose grant expired before a claim reached it is not handed out"
is "$(su "SELECT state || ' ' || (SELECT evidence ->> 'cause' FROM workload_history('$soon') ORDER BY sequence DESC LIMIT 1)
	FROM workload.workloads WHERE workload_id = '$soon'")" "DEAD_LETTER authorization_expired" \
	"lapse: the claim dead-lettered it with cause authorization_expired"
ctx=$(as hr_client "SELECT workload_create(public.spec('ctx')) ->> 'workload_id'")
is "$(as hr_worker "SELECT c.execution_context = workload_execution_context(c.workload_id, c.claim_id, 'w3', c.fencing_token)
	FROM workload_claim('w3', '{}', 'ta', 'app', '1 hour', 1, start => true, context => true) c")" t \
	"context: a claim with context => true carries the execution context workload_execution_context answers"
stale=$(as hr_client "SELECT workload_create(public.spec('stale')) ->> 'workload_id'")
old_key=$(su "SELECT key_id FROM workload.signing_keys WHERE retired_at IS NULL")
su "SELECT workload_rotate_signing_key()" >/dev/null
su "SELECT workload_retire_signing_key('$old_key')" >/dev/null
is "$(as hr_worker "SELECT count(*) FROM workload_claim('w3', '{}', 'ta', 'app', '1 hour', 10, context => true)")" 0 \
	"context: work whose signing key was retired is not handed out"
is "$(su "SELECT state FROM workload.workloads WHERE workload_id = '$stale'")" DEAD_LETTER \
	"context: the claim dead-lettered it (cause $(su "SELECT evidence ->> 'cause' FROM workload_history('$stale') ORDER BY sequence DESC LIMIT 1"))"
su "UPDATE public.grants SET g = workload_sign_grant(public.grant_of('grant-ta-2')) WHERE name = 'ta'" >/dev/null

# ---------------------------------------------------------------- the raw-write guard
for who in hr_client hr_nobody; do
	is "$(code $who "SET application_name = 'citus_internal gpid=10000000001'; DELETE FROM workload.workload_rows")" 42501 \
		"raw writes: $who, named as Citus's internal session, has no privilege on the tables"
done
is "$(code postgres "SET application_name = 'citus_internal gpid=10000000001'; DELETE FROM workload.workload_rows")" WL016 \
	"raw writes: a superuser's session named as Citus's, where Citus is not installed, is WORKLOAD_RAW_WRITE_DENIED"

# ---------------------------------------------------------------- a removed member's LISTEN
chan=$(as hr_listener "SELECT workload_channel('ta', 'app')")
WL_TMP_LISTEN=$(mktemp -u /tmp/wlt-listen.XXXXXX)
mkfifo "$WL_TMP_LISTEN"
out=$(mktemp /tmp/wlt-listen-out.XXXXXX)
psql -X -qAt -U hr_listener -d "$DB" <"$WL_TMP_LISTEN" >"$out" 2>&1 &
lpid=$!
exec {lfd}>"$WL_TMP_LISTEN"
printf 'LISTEN "%s";\n' "$chan" >&$lfd
sleep 0.5
as hr_client "SELECT workload_create(public.spec('heard-1'))" >/dev/null
printf 'SELECT 1;\n' >&$lfd
sleep 0.5
su "SELECT workload_remove_tenant_member('hr_listener', 'ta', 'app')" >/dev/null
as hr_client "SELECT workload_create(public.spec('unheard-1'))" >/dev/null
printf 'SELECT 2;\n\\q\n' >&$lfd
exec {lfd}>&-
wait $lpid
heard=$(grep -c 'Asynchronous notification' "$out")
note "the listener heard: $(grep 'Asynchronous notification' "$out" | sed 's/received from.*//' | tr '\n' ' ')"
check "a member's LISTEN hears a create; once removed, it hears the rotation and then nothing" \
	test "$heard" = 2 -a "$(grep -c 'workload.channel_rotated' "$out")" = 1
is "$(as hr_client "SELECT workload_channel('ta', 'app') <> '$chan'")" t \
	"the remaining members' channel has a new name"
is "$(code hr_listener "SELECT workload_channel('ta', 'app')")" WL002 "the removed member may not ask for it"
rm -f "$WL_TMP_LISTEN" "$out"

# ---------------------------------------------------------------- credential shapes
for secret in 'sk_live_4eC39HqLyjWDarjtT1zdp7dc' 'ghp_1234567890abcdefghijklmnopqrstuvwxyz' \
	'xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx' 'AKIAIOSFODNN7EXAMPLE' \
	'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U' \
	'https://user:hunter2@db.example.com/x' 'authorization: Basic dXNlcjpwYXNz'; do
	is "$(code hr_client "SELECT workload_create(public.spec('s-' || md5('$secret'), jsonb_build_object('input', jsonb_build_object('k', '$secret'))))")" WL010 \
		"secrets: an input holding ${secret:0:12}... is WORKLOAD_SECRET_REJECTED"
done

# ---------------------------------------------------------------- quotas
# not final: every state an edge leaves, DEAD_LETTER (which may be retried) too
active=$(su "SELECT count(*) FROM workload.workloads WHERE tenant_id = 'ta' AND state NOT IN ('SUCCEEDED', 'CANCELLED')")
limit=$((active + 3))
su "ALTER DATABASE $DB SET workload.max_active_per_tenant = $limit" >/dev/null
codes=""
for i in 1 2 3 4; do
	codes="$codes $(code hr_client "SELECT workload_create(public.spec('q$i'))")"
done
is "$codes" " 00000 00000 00000 WL018" \
	"quotas: with $active workloads not final, ta creates 3 more up to workload.max_active_per_tenant = $limit, then WORKLOAD_QUOTA_EXCEEDED"
is "$(code hr_worker "SELECT count(*) FROM workload_claim('w4', '{}', 'ta', 'app', '1 hour', 1, start => true)")" 00000 \
	"quotas: a worker's calls are never refused for one"
su "ALTER DATABASE $DB SET workload.max_active_per_tenant = 0" >/dev/null
su "ALTER DATABASE $DB SET workload.max_stored_kb_per_tenant = 64" >/dev/null
is "$(code hr_client "SELECT workload_create(public.spec('big', jsonb_build_object('input', jsonb_build_object('blob', repeat('x', 100000)))))")" WL018 \
	"quotas: an input past workload.max_stored_kb_per_tenant = 64 is WORKLOAD_QUOTA_EXCEEDED"

done_testing
