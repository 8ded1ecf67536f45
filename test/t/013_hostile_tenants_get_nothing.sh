#!/usr/bin/env bash
# Hostile tenants get nothing (SPEC sections 2, 4 and 5, "since 1.2"): each
# attack a reviewer tried on 1.1, made here through real login roles on
# their own connections (psql -U role), refused or harmless on 1.2:
# result-id squatting, grants copied out of documents, a colleague's grant,
# revocation of queued work and of derived grants, LISTEN on a tenant's
# channel, a borrowed SECURITY DEFINER, pg_read_all_data on the key tables,
# self-approval, another worker role's fence, ":" in ids, relative grant
# times and the secret spellings; and (1.3) the same rules for schedules.
# Prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=wlt_hostile
own_cluster=0
. "$WL_ROOT/test/tap.sh"

if [ -z "${PGHOST:-}" ] || ! psql -X -qAt -d postgres -c 'SELECT 1' >/dev/null 2>&1; then
	. "$WL_ROOT/scripts/cluster.sh"
	wl_need_root
	wl_cluster_start >/dev/null
	own_cluster=1
fi
ROLES="ht_admin ht_a_client ht_a_client2 ht_a_worker ht_a_worker2 ht_b_worker ht_e ht_nobody ht_reader"
cleanup() {
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
	for r in $ROLES; do psql -X -qAt -d postgres -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1; done
	[ "$own_cluster" = 1 ] && wl_cluster_stop
}
trap cleanup EXIT

# su SQL: as the superuser.  as ROLE SQL: as a login role, its own connection.
# code ROLE SQL: the SQLSTATE the statement ends with (00000 when it succeeds).
su() { psql -X -qAt -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }
as() { psql -X -qAt -U "$1" -d "$DB" -c "$2" 2>&1; }
code() { sqlstate "$2" -U "$1" -d "$DB"; }

psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
psql -X -qAt -d postgres -c "CREATE DATABASE $DB" >/dev/null || bail "no database"
for r in $ROLES; do psql -X -qAt -d postgres -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1; done
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" >/dev/null <<'SQL' || bail "setup failed"
SET client_min_messages = warning;
CREATE EXTENSION workload CASCADE;
CREATE ROLE ht_admin LOGIN IN ROLE workload_admin;
CREATE ROLE ht_a_client LOGIN IN ROLE workload_client;
CREATE ROLE ht_a_client2 LOGIN IN ROLE workload_client;
CREATE ROLE ht_a_worker LOGIN IN ROLE workload_worker;
CREATE ROLE ht_a_worker2 LOGIN IN ROLE workload_worker;
CREATE ROLE ht_b_worker LOGIN IN ROLE workload_worker, workload_client;
CREATE ROLE ht_e LOGIN IN ROLE workload_client;
CREATE ROLE ht_nobody LOGIN;
CREATE ROLE ht_reader LOGIN IN ROLE pg_read_all_data;
SELECT workload_add_tenant_member(r, 'ta', 'app')
FROM unnest(ARRAY['ht_a_client', 'ht_a_client2', 'ht_a_worker', 'ht_a_worker2']) r;
SELECT workload_add_tenant_member('ht_b_worker', 'tb', 'app');
SELECT workload_add_tenant_member('ht_e', 'te', 'app');
CREATE SCHEMA ht;
GRANT USAGE ON SCHEMA ht TO PUBLIC;
-- ht.grant(tenant, id, caps, attrs, parent): a grant for subject agent "planner", unsigned
CREATE FUNCTION ht.grant(tenant text, id text, caps text[] DEFAULT '{*}',
        attrs jsonb DEFAULT '{}', parent text DEFAULT NULL) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('contract_version', 1, 'id', id,
        'issuer', jsonb_build_object('kind', 'service', 'id', 'issuer'),
        'subject', jsonb_build_object('kind', 'agent', 'id', 'planner'),
        'tenant_id', tenant, 'application_id', 'app', 'capabilities', to_jsonb(caps),
        'resources', '[]'::jsonb, 'constraints', jsonb_build_object('subject_attributes', attrs),
        'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z',
        'parent_grant', parent, 'revision', 1, 'status', 'active') $$;
-- ht.spec(tenant, key, snapshot, extra): a create spec
CREATE FUNCTION ht.spec(tenant text, key text, snapshot jsonb, extra jsonb DEFAULT '{}')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('tenant_id', tenant, 'application_id', 'app', 'environment', 'test',
        'definition_id', 'job', 'definition_revision', 'r1', 'trigger', 'api',
        'input', jsonb_build_object('k', key),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'planner'),
        'authorization_snapshot', snapshot, 'idempotency_key', key) || extra $$;
-- the grants the admin signed, kept where the test can read them
CREATE TABLE ht.grants (name text PRIMARY KEY, signed jsonb);
GRANT SELECT ON ht.grants TO PUBLIC;
SQL
# the admin signs: a plain grant for each tenant, one bound to ht_a_client, a
# parent and a child derived from it, one for queued work to be revoked
su "INSERT INTO ht.grants SELECT 'a', workload_sign_grant(ht.grant('ta', 'g-a'))
	UNION ALL SELECT 'b', workload_sign_grant(ht.grant('tb', 'g-b'))
	UNION ALL SELECT 'e', workload_sign_grant(ht.grant('te', 'g-e'))
	UNION ALL SELECT 'bound', workload_sign_grant(ht.grant('ta', 'g-bound', '{*}', '{\"database_role\": \"ht_a_client\"}'))
	UNION ALL SELECT 'parent', workload_sign_grant(ht.grant('ta', 'g-parent'))
	UNION ALL SELECT 'child', workload_sign_grant(ht.grant('ta', 'g-child', '{*}', '{}', 'g-parent'))
	UNION ALL SELECT 'queued', workload_sign_grant(ht.grant('ta', 'g-queued'))" >/dev/null
G() { echo "(SELECT signed FROM ht.grants WHERE name = '$1')"; }
create() {	# create ROLE TENANT KEY GRANT: the workload id, or the error
	as "$1" "SELECT workload_create(ht.spec('$2', '$3', $(G "$4"))) ->> 'workload_id'"
}
claim() {	# claim ROLE WORKER TENANT: "id claim_id token" of one claim, started
	as "$1" "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token
		FROM workload_claim('$2', '{}', '$3', 'app', '10 minutes', 1, true)"
}

# ---- result ids are private to a tenant and application ----------------
a1=$(create ht_a_client ta res-a1 a)
b1=$(create ht_b_worker tb res-b1 b)
read -r _ a1c a1t <<<"$(claim ht_a_worker wa ta)"
read -r _ b1c b1t <<<"$(claim ht_b_worker wb tb)"
# B knows A's worker names results "<workload_id>:<attempt>" and takes A's next one first
is "$(code ht_b_worker "SELECT workload_complete('$b1', '$b1c', 'wb', $b1t, '$a1:1', '{}')")" 00000 \
	"tenant b may use any result id for its own workload, A's next one included"
is "$(code ht_a_worker "SELECT workload_complete('$a1', '$a1c', 'wa', $a1t, '$a1:1', '{}')")" 00000 \
	"A's worker still completes with that result id (1.1: WORKLOAD_RESULT_DUPLICATE, and A dead-lettered it)"
is "$(su "SELECT string_agg(tenant_id || '/' || state, ',' ORDER BY tenant_id) FROM workload.workloads WHERE workload_id IN ('$a1', '$b1')")" \
	"ta/SUCCEEDED,tb/SUCCEEDED" "both workloads succeeded, each with its own result"

# ---- no read path hands out a signed grant ------------------------------
c1=$(create ht_a_client ta copy-src a)
doc_sig=$(as ht_a_client2 "SELECT count(*) FROM workload_list('ta', 'app') d
	WHERE d -> 'authorization_snapshot' ?| ARRAY['signature', 'signature_sha256']")
is "$doc_sig" 0 "workload_list shows a colleague's grant without its signature"
is "$(code ht_a_client2 "SELECT workload_create(ht.spec('ta', 'copied', (SELECT d -> 'authorization_snapshot'
	FROM workload_get('$c1') d)))")" WL001 "a grant copied out of workload_get cannot be presented (1.1: created)"
is "$(code ht_a_client2 "SELECT workload_create(ht.spec('ta', 'copied2', (SELECT d -> 'authorization_snapshot'
	FROM workload_list('ta', 'app') d LIMIT 1)))")" WL001 "nor one copied out of workload_list"
# a compensation's document: the parent's run authority, without its signature
saga=$(as ht_a_client "SELECT workload_create(ht.spec('ta', 'saga', $(G a), '{\"capability_snapshot\": [\"undo\"]}')) ->> 'workload_id'")
read -r s1 s1c s1t <<<"$(as ht_a_worker "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token
	FROM workload_claim_id('$saga', 'wa', '{undo}', '10 minutes')")"
as ht_a_worker "SELECT workload_start('$s1', '$s1c', 'wa', $s1t)" >/dev/null
as ht_a_worker "SELECT workload_add_compensation('$s1', '$s1c', 'wa', $s1t, 'undo', '{}')" >/dev/null
as ht_a_worker "SELECT workload_fail('$s1', '$s1c', 'wa', $s1t, 'fatal', 'no')" >/dev/null
comp=$(as ht_a_client "SELECT * FROM workload_compensate('$s1', 'ops')")
case "$comp" in workload_*) ok "the saga's compensation workload was made" ;; *) not_ok "the saga's compensation workload was made: $comp" ;; esac
# presented as the saga workload itself, which is the run authority's subject
is "$(code ht_a_client2 "SELECT workload_create(ht.spec('ta', 'copied3', (SELECT d -> 'authorization_snapshot'
	FROM workload_get('$comp') d), '{\"requested_by\": {\"kind\": \"workload\", \"id\": \"$s1\"}}'))")" WL001 \
	"nor a run authority copied out of a compensation's document (1.1: created)"

# ---- a grant bound to a database role -----------------------------------
is "$(code ht_a_client2 "SELECT workload_create(ht.spec('ta', 'stolen', $(G bound)))")" WL002 \
	"a colleague presenting a grant bound to ht_a_client is refused (1.1: created)"
is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'rightful', $(G bound)))")" 00000 \
	"ht_a_client presents its own bound grant"

# ---- revocation reaches queued work and derived grants ------------------
q1=$(create ht_a_client ta queued-1 queued)
d1=$(create ht_a_client ta derived-1 child)
read -r d1x d1c d1t <<<"$(as ht_a_worker "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token
	FROM workload_claim_id('$d1', 'wa', '{}', '10 minutes')")"
su "SELECT workload_revoke_grant('g-queued'), workload_revoke_grant('g-parent')" >/dev/null
is "$(as ht_a_worker "SELECT count(*) FROM workload_claim('wa', '{}', 'ta', 'app', '1 minute', 1000)
	WHERE workload_id = '$q1'")" 0 "a claim never hands out queued work of a revoked grant (1.1: claimed)"
is "$(code ht_a_worker "SELECT workload_execution_context('$d1', '$d1c', 'wa', $d1t)")" WL017 \
	"revoking a parent grant denies the run of a workload created under its child (1.1: allowed)"
is "$(as ht_a_client "SELECT workload_verify_grant($(G child))")" f \
	"the child grant no longer verifies once its parent is revoked"
su "SELECT workload_tick()" >/dev/null
is "$(su "SELECT state || ' ' || (SELECT e.evidence ->> 'cause' FROM workload.event_log e
	WHERE e.workload_id = w.workload_id ORDER BY e.sequence DESC LIMIT 1)
	FROM workload.workloads w WHERE workload_id = '$q1'")" "DEAD_LETTER authorization_revoked" \
	"the tick dead-letters the queued workload, saying why"
is "$(code ht_a_client "SELECT workload_retry('$q1', 'ops')")" WL017 "and it cannot be retried"

# ---- NOTIFY channels are named by a secret ------------------------------
old_a=$(su "SELECT 'workload_' || left(encode(digest('ta:app', 'sha256'), 'hex'), 32)")
is "$(code ht_nobody "SELECT workload_channel('ta', 'app')")" WL002 \
	"a role with no rights cannot ask for tenant a's channel (1.1: answered)"
is "$(code ht_b_worker "SELECT workload_channel('ta', 'app')")" WL002 \
	"nor can a member of tenant b (1.1: answered)"
new_a=$(as ht_a_worker "SELECT workload_channel('ta', 'app')")
[ "$new_a" != "$old_a" ] && ok "the channel is no longer derived from public names" \
	|| not_ok "the channel is no longer derived from public names"
out=$(mktemp)
psql -X -qAt -U ht_nobody -d "$DB" -c "LISTEN \"$old_a\"" -c "SELECT pg_sleep(2)" -c "SELECT 1" >"$out" 2>&1 &
lpid=$!
psql -X -qAt -U ht_a_worker -d "$DB" -c "LISTEN \"$new_a\"" -c "SELECT pg_sleep(2)" -c "SELECT 1" >"$out.member" 2>&1 &
mpid=$!
sleep 0.7
create ht_a_client ta notified-1 a >/dev/null
wait "$lpid" "$mpid"
is "$(grep -c 'Asynchronous notification' "$out")" 0 \
	"a non-member LISTENing on the name 1.1 used hears nothing (1.1: every new workload id)"
is "$(grep -c 'Asynchronous notification' "$out.member")" 1 "a member LISTENing on the channel it was given is woken"
rm -f "$out" "$out.member"

# ---- another role's SECURITY DEFINER function acts with that role's rights
su "CREATE SCHEMA ht_e AUTHORIZATION ht_e" >/dev/null
as ht_e "CREATE FUNCTION ht_e.peek(t text) RETURNS bigint LANGUAGE sql SECURITY DEFINER
	SET search_path = pg_catalog, public AS \$\$ SELECT count(*) FROM workload_list(t, 'app') \$\$;
	GRANT USAGE ON SCHEMA ht_e TO ht_a_client; GRANT EXECUTE ON FUNCTION ht_e.peek(text) TO ht_a_client" >/dev/null
is "$(code ht_a_client "SELECT ht_e.peek('ta')")" WL002 \
	"tenant e's definer function called by a member of a cannot read a's workloads (1.1: it could)"
is "$(code ht_a_client "SELECT ht_e.peek('te')")" 00000 "it reads tenant e's, with e's rights"

# ---- key material ---------------------------------------------------------
is "$(as ht_reader "SELECT (SELECT count(*) FROM workload.signing_keys) + (SELECT count(*) FROM workload.channel_secret)")" 0 \
	"pg_read_all_data sees no signing key and no channel secret (1.1: every key)"
is "$(as ht_reader "SELECT count(*) > 0 FROM workload.workloads")" t "while it still reads the workloads it is meant to"
is "$(as ht_reader "SELECT count(*) FILTER (WHERE authorization_snapshot ? 'signature' OR run_authority ? 'signature')
	|| '/' || count(*) FILTER (WHERE authorization_snapshot ? 'signature_sha256') FROM workload.spec_authority")" "0/$(su "SELECT count(*) FROM workload.specs")" \
	"it finds every stored grant and run authority (workload.spec_authority, one per spec) by its signature's SHA-256, none with its signature"

# ---- approvals need a second pair of eyes --------------------------------
p1=$(create ht_a_client ta approve-1 a)
read -r _ p1c p1t <<<"$(as ht_a_worker "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token
	FROM workload_claim_id('$p1', 'wa', '{}', '10 minutes')")"
as ht_a_worker "SELECT workload_start('$p1', '$p1c', 'wa', $p1t)" >/dev/null
as ht_a_worker "SELECT workload_wait('$p1', '$p1c', 'wa', $p1t, 'human_approval', 'sign-off', now() + interval '1 day')" >/dev/null
is "$(code ht_a_client "SELECT workload_approve('$p1', 'human:someone-else', true, NULL)")" WL002 \
	"the role that created a workload cannot approve it, whatever approver it names (1.1: approved)"
is "$(as ht_a_client2 "SELECT workload_approve('$p1', 'human:carol', true, 'ok')")" t "a colleague can"
is "$(su "SELECT approver_role FROM workload.waits WHERE workload_id = '$p1'")" ht_a_client2 \
	"the wait records the approving role beside the approver's name"

# ---- a claim belongs to the role that took it -----------------------------
f1=$(create ht_a_client ta fence-1 a)
read -r _ f1c f1t <<<"$(as ht_a_worker "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token
	FROM workload_claim_id('$f1', 'wa', '{}', '10 minutes')")"
as ht_a_worker "SELECT workload_start('$f1', '$f1c', 'wa', $f1t)" >/dev/null
# the triple of a RUNNING claim, as workload_get shows it to any worker of the tenant
triple="d ->> 'workload_id', d -> 'current_claim' ->> 'claim_id', d -> 'current_claim' ->> 'worker_id',
	(d -> 'current_claim' ->> 'fencing_token')::bigint"
is "$(code ht_a_worker2 "SELECT workload_complete($triple, 'x', '{}') FROM workload_get('$f1') d")" WL007 \
	"another worker role presenting the triple it read from workload_get cannot complete the claim (1.1: completed)"
is "$(code ht_a_worker2 "SELECT workload_heartbeat($triple, '1 minute') FROM workload_get('$f1') d")" WL007 \
	"... nor heartbeat it (1.1: extended the lease)"
is "$(su "SELECT state || ' ' || (result_id IS NULL) FROM workload.workloads w WHERE workload_id = '$f1'")" "RUNNING true" \
	"the claim is untouched"
is "$(code ht_a_worker "SELECT workload_complete('$f1', '$f1c', 'wa', $f1t, 'r-$f1', '{}')")" 00000 \
	"the claim's own role completes it"

# ---- bulk work stays in the caller's tenants --------------------------------
is "$(as ht_a_client "SELECT string_agg(outcome || ':' || coalesce(code, '-'), ',' ORDER BY ord)
	FROM workload_create_many(jsonb_build_array(ht.spec('tb', 'bulk-b', $(G b)), ht.spec('ta', 'bulk-a', $(G a)),
		ht.spec('ta', 'bulk-a2', $(G b))))")" \
	"refused:WORKLOAD_UNAUTHORIZED,created:-,refused:WORKLOAD_UNAUTHORIZED" \
	"workload_create_many creates in A's own tenant only, and not with B's grant"
is "$(su "SELECT count(*) FROM workload.specs WHERE idempotency_key IN ('bulk-b', 'bulk-a2')")" 0 \
	"nothing of the refused items was written"
is "$(code ht_a_client "SELECT * FROM workload_redrive('tb', 'app', 'ops')")" WL002 \
	"workload_redrive of another tenant's dead letters is WORKLOAD_UNAUTHORIZED"

# ---- ":" in tenant and application ids -----------------------------------
is "$(code ht_admin "SELECT workload_sign_grant(ht.grant('ta:x', 'g-colon'))")" WL001 "a grant for tenant \"ta:x\" is refused"
is "$(code ht_a_client "SELECT workload_create(ht.spec('ta:x', 'colon', $(G a)))")" WL001 "so is a spec naming it"
is "$(code ht_a_worker "SELECT * FROM workload_claim('w', '{}', 'ta', 'app:x')")" WL001 "and a claim naming application \"app:x\""
is "$(code ht_admin "SELECT workload_add_tenant_member('ht_a_client', 'ta:x', 'app')")" WL001 "and a membership in tenant \"ta:x\""
is "$(code ht_a_client "SELECT workload_channel('ta', 'app:x')")" WL001 "and the channel of application \"app:x\""
is "$(code ht_a_client "SELECT count(*) FROM workload_list('ta:x', 'app')")" WL001 "and a list of tenant \"ta:x\""

# ---- grant times are absolute RFC 3339 with an offset ---------------------
for t in tomorrow now infinity '2027-01-01 00:00:00' '2027-01-01'; do
	is "$(code ht_admin "SELECT workload_sign_grant(ht.grant('ta', 'g-time') || jsonb_build_object('expires_at', '$t'))")" WL001 \
		"expires_at '$t' is refused at sign time"
done
for t in yesterday epoch '2020-01-01'; do
	is "$(code ht_admin "SELECT workload_sign_grant(ht.grant('ta', 'g-time') || jsonb_build_object('issued_at', '$t'))")" WL001 \
		"issued_at '$t' is refused at sign time"
done
is "$(code ht_admin "SELECT workload_sign_grant(ht.grant('ta', 'g-time') || '{\"expires_at\": \"2027-01-01T00:00:00+02:00\"}')")" 00000 \
	"expires_at '2027-01-01T00:00:00+02:00' is accepted"

# ---- secrets, in their common spellings and in every field ----------------
for k in db_password clientSecret stripe-api-key apiKey access_token refreshToken \
	'ｐａｓｓｗｏｒｄ' AWS_SECRET_ACCESS_KEY gcp.credentials Session-Token \
	user_passwd ssh_private_key auth_token Bearer-Token id_token TOKEN; do
	is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'sk1', $(G a), jsonb_build_object('input', jsonb_build_object('$k', 'x'))))")" WL010 \
		"an input key \"$k\" is refused"
done
for k in max_tokens token_count next_page_token secret_ref password_policy; do
	is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'ok-$k', $(G a), jsonb_build_object('input', jsonb_build_object('$k', 'x'))))")" 00000 \
		"an input key \"$k\" is allowed"
done
for v in '-----BEGIN RSA PRIVATE KEY-----' '-----BEGIN OPENSSH PRIVATE KEY-----' '-----BEGIN ENCRYPTED PRIVATE KEY-----' \
	'-----BEGIN EC PRIVATE KEY-----' '-----BEGIN DSA PRIVATE KEY-----' 'key: -----BEGIN PRIVATE KEY-----' \
	'Bearer sk-live-123' '  SK-abc' 'FDB_LIVE_x' 'Bearer fdb_live_y'; do
	is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'sv1', $(G a), jsonb_build_object('input', jsonb_build_object('note', '$v'))))")" WL010 \
		"an input string \"$v\" is refused"
done
is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'idem', $(G a), '{\"idempotency_key\": \"sk-idem\"}'))")" WL010 \
	"a secret as idempotency_key is refused"
is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'crit', $(G a), '{\"completion_criteria\": [{\"kind\": \"result_contains\", \"field\": \"f\", \"equals\": \"sk-123\"}]}'))")" WL010 \
	"a secret as a completion_criteria value is refused"
is "$(code ht_a_client "SELECT workload_create(ht.spec('ta', 'defn', $(G a), '{\"definition_id\": \"Bearer sk-1\"}'))")" WL010 \
	"a secret as definition_id is refused"
# every value a caller stores after the create is checked the same way
s1=$(create ht_a_client ta secret-run a)
read -r _ s1c s1t <<<"$(as ht_a_worker "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token
	FROM workload_claim_id('$s1', 'wa', '{}', '10 minutes')")"
as ht_a_worker "SELECT workload_start('$s1', '$s1c', 'wa', $s1t)" >/dev/null
F="'$s1', '$s1c', 'wa', $s1t"
is "$(code ht_a_worker "SELECT workload_heartbeat($F, '1 minute', '{\"access_token\": \"x\"}')")" WL010 \
	"heartbeat progress with an access_token key is refused"
is "$(code ht_a_worker "SELECT workload_checkpoint($F, '{\"step\": {\"clientSecret\": \"x\"}}')")" WL010 \
	"a checkpoint state with a clientSecret key is refused"
is "$(code ht_a_worker "SELECT workload_add_compensation($F, 'refund', '{\"apiKey\": \"x\"}')")" WL010 \
	"a compensation input with an apiKey key is refused"
is "$(code ht_a_worker "SELECT workload_fail($F, 'transient', 'Bearer sk-live-9')")" WL010 \
	"a failure error text holding a Bearer sk- token is refused"
is "$(code ht_a_worker "SELECT workload_complete($F, 'r-secret', '{\"db_password\": \"x\"}')")" WL010 \
	"an output with a db_password key is refused"
is "$(su "SELECT state || ' ' || (SELECT count(*) FROM workload.checkpoints c WHERE c.workload_id = w.workload_id)
	FROM workload.workloads w WHERE workload_id = '$s1'")" "RUNNING 0" "none of them changed the workload"
is "$(code ht_a_client "SELECT workload_signal('ta', 'app', 'k', '{\"refreshToken\": \"x\"}')")" WL010 \
	"a signal payload with a refreshToken key is refused"
is "$(code ht_a_client2 "SELECT workload_approve('$p1', 'human:carol', true, '-----BEGIN EC PRIVATE KEY-----')")" WL010 \
	"an approval note holding a private key is refused"

# ---- schedules (1.3): the same membership and grant rules ------------------
tpl() {	# tpl GRANT: a schedule template under that grant
	echo "(ht.spec('ta', 'x', $(G "$1")) - 'idempotency_key' - 'tenant_id' - 'application_id')"
}
is "$(code ht_a_client "SELECT workload_schedule('ta', 'app', 'nightly', '0 3 * * *', $(tpl bound))")" 00000 \
	"ht_a_client schedules work under its own bound grant"
is "$(code ht_a_client2 "SELECT workload_schedule('ta', 'app', 'stolen', '0 3 * * *', $(tpl bound))")" WL002 \
	"a colleague cannot schedule work under a grant bound to ht_a_client"
for f in "workload_schedule_pause('ta', 'app', 'nightly')" "workload_schedule_resume('ta', 'app', 'nightly')" \
	"workload_schedule_drop('ta', 'app', 'nightly')" "workload_schedules('ta', 'app')" \
	"workload_schedule('ta', 'app', 'nightly', '* * * * *', $(tpl b))"; do
	is "$(code ht_b_worker "SELECT $f")" WL002 "tenant b cannot call ${f%%(*} on tenant a's schedules"
done
is "$(as ht_b_worker "SELECT count(*) FROM workload_schedules('tb', 'app')")" 0 "tenant b's own list does not show a's schedule"
is "$(as ht_a_client2 "SELECT count(*) FROM workload_schedules('ta', 'app') d
	WHERE d -> 'template' -> 'authorization_snapshot' ?| ARRAY['signature', 'signature_sha256']")" 0 \
	"workload_schedules shows a colleague's template grant without its signature"
is "$(code ht_a_client2 "SELECT workload_create(ht.spec('ta', 'copied-s', (SELECT d -> 'template' -> 'authorization_snapshot'
	FROM workload_schedules('ta', 'app') d)))")" WL001 "a grant copied out of a schedule cannot be presented"
is "$(as ht_reader "SELECT count(*) FROM workload.schedules WHERE template -> 'authorization_snapshot' ? 'signature'")" 0 \
	"pg_read_all_data finds no signature in workload.schedules"
is "$(su "SELECT paused || ' ' || created_by FROM workload.schedules")" "false ht_a_client" \
	"a's schedule is as ht_a_client made it"

done_testing
