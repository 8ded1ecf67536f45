#!/usr/bin/env bash
# Backups that restore (docs/operations.md, "Backup and restore"):
# a database filled through the API by real login roles (workloads resting in
# every state a workload rests in, claims held by workers, checkpoints under
# two keys, results, open and woken waits, compensation steps and their
# workloads, tenant memberships, a revoked grant, a rotated key and a retired
# one) is dumped with pg_dump -Fc and restored with the documented command
# into a fresh second cluster.  Then: every table holds exactly what it held;
# every workload document and list equals the one before; every stored grant,
# run authority and checkpoint tag verifies under the restored keys (checked
# apart from the C with pgcrypto, and through the API: execution context,
# resume, the grants their holders kept); the restored database signs with
# the key the source signed with last and names the same NOTIFY channels; the
# held claims' workers complete with their old fences and a stale fence is
# refused; the next event and workload numbers are above every restored one;
# raw writes are refused again at once, for a tenant's role and for a
# superuser outside the restore; a restore without the documented setting is
# refused by the raw-write guard.  The new cluster preloads the library, so
# its tick starts in the restored database as soon as the restore commits.
# Run as root after "make install"; starts two throwaway clusters; prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root

DB=wl_app
. "$WL_ROOT/test/tap.sh"

# Two clusters: the source and the fresh one the dump is restored into.
wl_cluster_start >/dev/null
SRC_TMP=$WL_TMP SRC_DATA=$WL_DATA SRC_HOST=$PGHOST SRC_PORT=$PGPORT
# the new one runs the tick, as production does: it must find only whole data
wl_cluster_start "shared_preload_libraries = 'workload'" "workload.tick_interval = 100" >/dev/null
DST_TMP=$WL_TMP DST_DATA=$WL_DATA DST_HOST=$PGHOST DST_PORT=$PGPORT
DUMP_DIR=$(mktemp -d /tmp/workload-dump.XXXXXX)
stop_both() {
	WL_TMP=$SRC_TMP WL_DATA=$SRC_DATA wl_cluster_stop
	WL_TMP=$DST_TMP WL_DATA=$DST_DATA wl_cluster_stop
	rm -rf "$DUMP_DIR"
}
trap stop_both EXIT
unset PGHOST PGPORT

# on src|dst [psql args...]: psql as the superuser on that cluster's database
on() {
	local h p
	if [ "$1" = src ]; then h=$SRC_HOST p=$SRC_PORT; else h=$DST_HOST p=$DST_PORT; fi
	shift
	PGHOST=$h PGPORT=$p PGOPTIONS='-c client_min_messages=warning' psql -X -qAt -v ON_ERROR_STOP=1 -d "$DB" "$@"
}
# qn src|dst SQL: one query as the superuser.  as src|dst ROLE SQL: as a login role.
qn() { on "$1" -c "$2"; }
as() { local c=$1 r=$2; shift 2; on "$c" -U "$r" -c "$1"; }
# code src|dst ROLE SQL: the SQLSTATE the statement ends with (00000 when it succeeds)
code() {
	local out
	out=$(on "$1" -U "$2" -v VERBOSITY=sqlstate -c "$3" 2>&1)
	if grep -q '^ERROR:' <<<"$out"; then sed -n 's/^ERROR: *\([A-Z0-9]*\).*/\1/p' <<<"$out" | head -n 1
	else echo 00000; fi
}
on_src_tool() { PGHOST=$SRC_HOST PGPORT=$SRC_PORT "$@"; }
on_dst_tool() { PGHOST=$DST_HOST PGPORT=$DST_PORT "$@"; }

# ---------------------------------------------------------------- the source
on_src_tool psql -X -qAt -d postgres -c "CREATE DATABASE $DB" >/dev/null || bail "no database"
on src >/dev/null <<'SQL' || bail "setup failed"
CREATE EXTENSION workload CASCADE;
CREATE ROLE dr_app LOGIN IN ROLE workload_client, workload_worker;
CREATE ROLE dr_other LOGIN IN ROLE workload_client, workload_worker;
SELECT workload_add_tenant_member('dr_app', 'acme', 'billing');
SELECT workload_add_tenant_member('dr_other', 'globex', 'app');
CREATE SCHEMA dr;
GRANT USAGE ON SCHEMA dr TO PUBLIC;
-- the signed grants as their holders keep them (signature included), the
-- workloads by name, and the claims the workers hold across the dump
CREATE TABLE dr.kept (name text PRIMARY KEY, signed jsonb NOT NULL);
CREATE TABLE dr.ids (name text PRIMARY KEY, workload_id text NOT NULL);
CREATE TABLE dr.held (name text PRIMARY KEY, workload_id text, claim_id text, fence bigint);
GRANT SELECT, INSERT ON dr.kept, dr.ids, dr.held TO PUBLIC;
CREATE FUNCTION dr.unsigned(id text, tenant text DEFAULT 'acme', app text DEFAULT 'billing')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'contract_version', 1, 'id', id, 'revision', 1, 'status', 'active',
        'issuer', jsonb_build_object('kind', 'service', 'id', 'iam'),
        'subject', jsonb_build_object('kind', 'agent', 'id', 'planner'),
        'tenant_id', tenant, 'application_id', app, 'capabilities', '["*"]'::jsonb,
        'resources', '[]'::jsonb, 'constraints', jsonb_build_object('subject_attributes', '{}'::jsonb),
        'parent_grant', NULL, 'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z')
$$;
CREATE FUNCTION dr.spec(key text, grant_name text, extra jsonb DEFAULT '{}',
        tenant text DEFAULT 'acme', app text DEFAULT 'billing')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'tenant_id', tenant, 'application_id', app, 'environment', 'test',
        'definition_id', 'invoice.render', 'definition_revision', 'r1', 'trigger', 'api',
        'input', jsonb_build_object('key', key),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'planner'),
        'authorization_snapshot', (SELECT k.signed FROM dr.kept k WHERE k.name = grant_name),
        'idempotency_key', key) || extra
$$;
-- make(name, grant, extra): create a workload and remember its id
CREATE FUNCTION dr.make(name text, grant_name text, extra jsonb DEFAULT '{}',
        tenant text DEFAULT 'acme', app text DEFAULT 'billing')
RETURNS text LANGUAGE sql AS $$
    INSERT INTO dr.ids SELECT name, workload_create(dr.spec(name, grant_name, extra, tenant, app)) ->> 'workload_id'
    RETURNING workload_id
$$;
CREATE FUNCTION dr.id(name text) RETURNS text LANGUAGE sql AS $$ SELECT workload_id FROM dr.ids WHERE ids.name = id.name $$;
-- hold(name, lease): claim it as worker w1 and remember the claim
CREATE FUNCTION dr.hold(name text, lease interval DEFAULT '2 hours') RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO dr.held SELECT name, c.workload_id, c.claim_id, c.fencing_token
    FROM workload_claim_id(dr.id(name), 'w1', '{}', lease) c RETURNING fence
$$;
CREATE FUNCTION dr.h(name text) RETURNS dr.held LANGUAGE sql AS $$ SELECT * FROM dr.held WHERE held.name = h.name $$;

-- key 1 (made by CREATE EXTENSION) signs the first grants
INSERT INTO dr.kept VALUES ('g1', workload_sign_grant(dr.unsigned('grant-one'))),
    ('g-revoked', workload_sign_grant(dr.unsigned('grant-revoked'))),
    ('g-globex', workload_sign_grant(dr.unsigned('grant-globex', 'globex', 'app')));
SQL

is "$(qn src "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_class c
    WHERE c.relnamespace = 'workload'::regnamespace AND c.relkind IN ('r', 'S', 'p')
      AND c.oid <> ALL (SELECT unnest(extconfig) FROM pg_extension WHERE extname = 'workload')")" "" \
	"every table and sequence of schema workload is registered with pg_dump (pg_extension_config_dump)"

# the first batch, by the tenant's own login role
as src dr_app "
SELECT dr.make('ready', 'g1');
SELECT dr.make('dependent', 'g1', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', dr.id('ready')))));
SELECT dr.make('done', 'g1');
SELECT dr.hold('done');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('done');
SELECT workload_checkpoint(workload_id, claim_id, 'w1', fence, '{\"step\": 1}') FROM dr.h('done');
SELECT workload_complete(workload_id, claim_id, 'w1', fence, 'r-done', '{\"total\": 42}') FROM dr.h('done');
SELECT dr.make('dead', 'g1', '{\"retry_policy\": {\"max_attempts\": 1}}');
SELECT dr.hold('dead');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('dead');
SELECT workload_fail(workload_id, claim_id, 'w1', fence, 'worker_failure', 'boom') FROM dr.h('dead');
SELECT dr.make('retried', 'g1', '{\"retry_policy\": {\"max_attempts\": 3, \"initial_delay_ms\": 86400000, \"max_delay_ms\": 86400000, \"backoff\": \"fixed\"}}');
SELECT dr.hold('retried');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('retried');
SELECT workload_fail(workload_id, claim_id, 'w1', fence, 'worker_failure', 'try again') FROM dr.h('retried');
SELECT dr.make('cancelled', 'g1');
SELECT workload_cancel(dr.id('cancelled'), 'not needed');
SELECT dr.make('trip', 'g1', '{\"capability_snapshot\": [\"flight.book\", \"flight.cancel\", \"hotel.book\", \"hotel.cancel\"], \"retry_policy\": {\"max_attempts\": 1}}');
INSERT INTO dr.held SELECT 'trip', c.workload_id, c.claim_id, c.fencing_token
FROM workload_claim_id(dr.id('trip'), 'w1', '{flight.book,flight.cancel,hotel.book,hotel.cancel}', '1 hour') c;
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('trip');
SELECT workload_add_compensation(workload_id, claim_id, 'w1', fence, 'flight.cancel', '{\"pnr\": \"XK42\"}') FROM dr.h('trip');
SELECT workload_add_compensation(workload_id, claim_id, 'w1', fence, 'hotel.cancel', '{\"booking\": \"H-9\"}') FROM dr.h('trip');
SELECT workload_fail(workload_id, claim_id, 'w1', fence, 'no_seats', 'sold out') FROM dr.h('trip');
SELECT workload_compensate(dr.id('trip'), 'ops:alice');
SELECT dr.make('ckpt', 'g1');
SELECT dr.hold('ckpt');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('ckpt');
SELECT workload_checkpoint(workload_id, claim_id, 'w1', fence, '{\"step\": 1}') FROM dr.h('ckpt');
SELECT dr.make('revoked', 'g-revoked');
" >/dev/null || bail "the first batch failed"
as src dr_other "SELECT dr.make('globex', 'g-globex', '{}', 'globex', 'app')" >/dev/null || bail "globex failed"

# key 2 signs from now on; key 3 is made and retired at once (key 2 stays current)
qn src "
SELECT workload_revoke_grant('grant-revoked');
DO \$\$ BEGIN LOOP EXIT WHEN NOT coalesce((workload_tick() ->> 'more')::boolean, false); END LOOP; END \$\$;
INSERT INTO dr.kept VALUES ('k2', to_jsonb(workload_rotate_signing_key()));
INSERT INTO dr.kept VALUES ('g2', workload_sign_grant(dr.unsigned('grant-two')));
INSERT INTO dr.kept VALUES ('k3', to_jsonb(workload_rotate_signing_key()));
SELECT workload_retire_signing_key(signed #>> '{}') FROM dr.kept WHERE name = 'k3';
" >/dev/null || bail "the key rotation failed"

# the second batch, under key 2: claims held across the dump, waits
as src dr_app "
SELECT workload_checkpoint(workload_id, claim_id, 'w1', fence, '{\"step\": 2}') FROM dr.h('ckpt');
SELECT dr.make('claimed', 'g2');
SELECT dr.hold('claimed');
SELECT dr.make('running', 'g2');
SELECT dr.hold('running');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('running');
SELECT dr.make('cancel-requested', 'g2');
SELECT dr.hold('cancel-requested');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('cancel-requested');
SELECT workload_cancel(dr.id('cancel-requested'), 'customer changed their mind');
SELECT dr.make('waits-event', 'g2');
SELECT dr.hold('waits-event');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('waits-event');
SELECT workload_wait(workload_id, claim_id, 'w1', fence, 'event', 'parcel-1', now() + interval '2 days') FROM dr.h('waits-event');
SELECT dr.make('waits-approval', 'g2');
SELECT dr.hold('waits-approval');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('waits-approval');
SELECT workload_wait(workload_id, claim_id, 'w1', fence, 'human_approval', 'manager', now() + interval '2 days') FROM dr.h('waits-approval');
SELECT dr.make('woken', 'g2');
SELECT dr.hold('woken');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('woken');
SELECT workload_wait(workload_id, claim_id, 'w1', fence, 'event', 'parcel-2', now() + interval '2 days') FROM dr.h('woken');
SELECT workload_signal('acme', 'billing', 'parcel-2', '{\"carrier\": \"DHL\"}');
" >/dev/null || bail "the second batch failed"

states=$(qn src "SELECT string_agg(DISTINCT state::text, ' ' ORDER BY state::text) FROM workload.workloads")
is "$states" "CANCELLATION_REQUESTED CANCELLED CHECKPOINTED CLAIMED DEAD_LETTER READY RUNNING SUCCEEDED WAITING" \
	"the source holds workloads resting in every state a workload rests in (CREATED is passed through at create)"
is "$(qn src "SELECT count(*) FILTER (WHERE retired_at IS NULL) || ' ' || count(*) FROM workload.signing_keys")" "2 3" \
	"the source has three keys, one of them retired"
is "$(qn src "SELECT count(DISTINCT key_id) FROM workload.checkpoints") $(qn src "SELECT count(*) FROM workload.compensations") $(qn src "SELECT count(*) FROM workload.waits WHERE resolved_at IS NOT NULL")" \
	"2 2 1" "checkpoints under two keys, two compensation steps, a resolved wait"

# What the source holds, to compare with after the restore.
# tables: every row of every table of schema workload, and both sequences
TABLES_SQL="SELECT string_agg(c.relname || ' ' || (xpath('/row/m/text()', query_to_xml(
    format('SELECT count(*) || '':'' || coalesce(md5(string_agg((to_jsonb(t) - ''role_oid'')::text, ''|'' ORDER BY (to_jsonb(t) - ''role_oid'')::text)), '''') AS m FROM workload.%I t', c.relname),
    false, true, '')))[1]::text, E'\n' ORDER BY c.relname)
FROM pg_class c WHERE c.relnamespace = 'workload'::regnamespace AND c.relkind = 'r'"
SEQS_SQL="SELECT (SELECT last_value || '/' || is_called FROM workload.workload_seq) || ' ' ||
    (SELECT last_value || '/' || is_called FROM workload.event_seq)"
DOCS_SQL="SELECT string_agg(i.name || ' ' || workload_get(i.workload_id)::text, E'\n' ORDER BY i.name) FROM dr.ids i"
LIST_SQL="SELECT string_agg(d::text, E'\n') FROM workload_list('acme', 'billing', NULL, 1000) d"
# every stored grant (authorization snapshot, run authority) and checkpoint
# tag, checked with pgcrypto against the key it names: how many, how many verify
MACS_SQL="WITH g AS (
    SELECT s.authorization_snapshot AS doc FROM workload.spec_authority s
    UNION ALL SELECT s.run_authority FROM workload.spec_authority s)
SELECT (SELECT count(*) || ' grants, ' || count(*) FILTER (WHERE k.retired_at IS NULL AND
        encode(sha256(convert_to(encode(hmac(convert_to((g.doc -> 'grant')::text, 'UTF8'), k.secret, 'sha256'), 'hex'), 'UTF8')), 'hex')
        = g.doc ->> 'signature_sha256') || ' verify'
        FROM g LEFT JOIN workload.signing_keys k ON k.key_id = g.doc ->> 'key_id') || '; ' ||
    (SELECT count(*) || ' checkpoints, ' || count(*) FILTER (WHERE k.retired_at IS NULL AND
        encode(hmac(convert_to(c.checkpoint_id || ':' || c.workload_id || ':' || c.sequence || ':' || c.state_hash, 'UTF8'),
                    k.secret, 'sha256'), 'hex') = c.tag) || ' verify'
        FROM workload.checkpoints c LEFT JOIN workload.signing_keys k ON k.key_id = c.key_id)"
KEPT_SQL="SELECT string_agg(name || '=' || workload_verify_grant(signed), ' ' ORDER BY name) FROM dr.kept WHERE signed ? 'grant'"
CHANNEL_SQL="SELECT workload_channel('acme', 'billing')"
SIGNER_SQL="SELECT workload_sign_grant(dr.unsigned('grant-after')) ->> 'key_id'"

# (signing records the grant's lineage: sign first, so both sides hold that row)
src_signer=$(qn src "$SIGNER_SQL")
src_tables=$(qn src "$TABLES_SQL")
src_seqs=$(qn src "$SEQS_SQL")
src_docs=$(qn src "$DOCS_SQL")
src_list=$(as src dr_app "$LIST_SQL")
src_macs=$(qn src "$MACS_SQL")
src_kept=$(as src dr_app "$KEPT_SQL")
src_channel=$(as src dr_app "$CHANNEL_SQL")
src_member_oids=$(qn src "SELECT string_agg(format('(%L::name, %s::oid)', role, role_oid), ', ') FROM workload.tenant_members")
src_max_event=$(qn src "SELECT max(sequence) FROM workload.events")
src_events=$(qn src "SELECT count(*) FROM workload.events")
src_max_seq=$(qn src "SELECT max(seq) FROM workload.workloads")
n_specs=$(qn src "SELECT count(*) FROM workload.specs")
n_ckpt=$(qn src "SELECT count(*) FROM workload.checkpoints")
is "$src_macs" "$((2 * n_specs)) grants, $((2 * n_specs)) verify; $n_ckpt checkpoints, $n_ckpt verify" \
	"in the source every stored grant, run authority and checkpoint tag verifies (the check itself is sound)"
is "$src_kept" "g-globex=true g-revoked=false g1=true g2=true" "in the source the kept grants verify, the revoked one does not"

# ------------------------------------------------------- dump, then restore
# The documented commands (docs/operations.md, "Backup and restore").
on_src_tool pg_dump -Fc -d "$DB" -f "$DUMP_DIR/$DB.dump" || bail "pg_dump failed"
on_src_tool pg_dumpall --roles-only -f "$DUMP_DIR/roles.sql" || bail "pg_dumpall --roles-only failed"
# (a role made here first, so that the carried roles get other OIDs than they had)
on_dst_tool psql -X -q -d postgres -c "CREATE ROLE shift_oids" >/dev/null 2>&1
on_dst_tool psql -X -q -d postgres -f "$DUMP_DIR/roles.sql" >/dev/null 2>&1
is "$(on_dst_tool psql -X -qAt -d postgres -c "SELECT string_agg(rolname, ' ' ORDER BY rolname) FROM pg_roles WHERE rolname LIKE 'dr\_%' OR rolname LIKE 'workload\_%'")" \
	"dr_app dr_other workload_admin workload_client workload_worker" "the roles are carried to the new cluster first"

# A restore without the documented setting is refused by the raw-write guard.
on_dst_tool psql -X -qAt -d postgres -c "CREATE DATABASE wl_plain" >/dev/null
plain_out=$(on_dst_tool pg_restore --single-transaction -d wl_plain "$DUMP_DIR/$DB.dump" 2>&1)
plain_rc=$?
if [ "$plain_rc" != 0 ] && grep -q 'WORKLOAD_RAW_WRITE_DENIED' <<<"$plain_out" &&
	[ "$(on_dst_tool psql -X -qAt -d wl_plain -c "SELECT count(*) FROM pg_extension WHERE extname = 'workload'")" = 0 ]; then
	ok "pg_restore without session_replication_role = replica is refused by the raw-write guard, and leaves nothing"
else
	not_ok "pg_restore without session_replication_role = replica is refused by the raw-write guard (rc $plain_rc)"
	echo "$plain_out" | head -n 5 | sed 's/^/#   /'
fi
if grep -q "HINT:  Restore as a superuser with PGOPTIONS='-c session_replication_role=replica' pg_restore --single-transaction" <<<"$plain_out"; then
	ok "its refusal names the documented command in a HINT"
else
	not_ok "its refusal names the documented command in a HINT"
	echo "$plain_out" | head -n 5 | sed 's/^/#   /'
fi

on_dst_tool psql -X -qAt -d postgres -c "CREATE DATABASE $DB" >/dev/null || bail "no database on the new cluster"
restore_out=$(PGOPTIONS='-c session_replication_role=replica' on_dst_tool pg_restore --single-transaction -d "$DB" "$DUMP_DIR/$DB.dump" 2>&1)
restore_rc=$?
is "$restore_rc $restore_out" "0 " "PGOPTIONS='-c session_replication_role=replica' pg_restore --single-transaction restores it, without an error"
[ "$restore_rc" = 0 ] || bail "the restore failed"

# the tick starts in the restored database (the library is preloaded there)
# and, having seen only the whole restore, finds nothing to do
tick_started() {
	local i
	for i in $(seq 1 100); do
		grep -q "workload tick started in database \"$DB\"" "$DST_TMP/server.log" && return 0
		sleep 0.1
	done
	return 1
}
if tick_started; then ok "the tick runs in the restored database"; else not_ok "the tick runs in the restored database"; fi
sleep 0.5

# ------------------------------------------------------ everything is there
dst_signer=$(qn dst "$SIGNER_SQL")
is "$(qn dst "$TABLES_SQL")" "$src_tables" "every table holds exactly the rows it held (keys and channel secret included)"
is "$(qn dst "$SEQS_SQL")" "$src_seqs" "both sequences are where they were"
is "$(qn dst "$DOCS_SQL")" "$src_docs" "every workload document (workload_get, with its events, attempts, checkpoints, waits, compensations) equals the one before"
is "$(as dst dr_app "$LIST_SQL")" "$src_list" "the tenant's workload_list equals the one before"
is "$(qn dst "SELECT string_agg(role || ':' || tenant_id || '/' || application_id, ' ' ORDER BY role) FROM workload.tenant_members")" \
	"dr_app:acme/billing dr_other:globex/app" "the tenant memberships are there"
is "$(qn dst "SELECT bool_and(m.role_oid = r.oid) || ' ' || bool_and(m.role_oid <> s.role_oid)
	FROM workload.tenant_members m JOIN pg_roles r ON r.rolname = m.role
	JOIN (VALUES $src_member_oids) s(role, role_oid) ON s.role = m.role")" "true true" \
	"each names the role of its name here, which has another OID than it had (roles move between clusters by name)"
is "$(code dst dr_other "SELECT workload_get(dr.id('ready'))")" "WL003" "and still decide: a member of another tenant gets nothing of acme's (not found)"
is "$(as dst dr_other "SELECT workload_get(dr.id('globex')) ->> 'state'")" "READY" "while its own workload is its to read"

# ---------------------------------------------------------- keys carry over
is "$(qn dst "$MACS_SQL")" "$src_macs" "every stored grant, run authority and checkpoint tag verifies under the restored keys"
is "$(as dst dr_app "$KEPT_SQL")" "$src_kept" "the signed grants their holders kept verify as before (workload_verify_grant), the revoked one still not"
is "$dst_signer" "$src_signer" "the restored database signs with the key the source signed with last (no key of its own)"
is "$(qn dst "SELECT count(*) FROM workload.signing_keys") $(qn dst "SELECT count(*) FROM workload.channel_secret")" "3 1" \
	"CREATE EXTENSION during the restore left no key or channel secret of its own"
is "$(as dst dr_app "$CHANNEL_SQL")" "$src_channel" "the NOTIFY channel of the tenant is the same name"

# ------------------------------------------- held claims finish with old fences
is "$(as dst dr_app "SELECT workload_execution_context(workload_id, claim_id, 'w1', fence) ->> 'fencing_token' = fence::text FROM dr.h('running')")" \
	"t" "a running claim's execution context (snapshot and run authority verified) is served under its old fence"
is "$(as dst dr_app "SELECT workload_resume(workload_id, claim_id, 'w1', fence) -> 'checkpoint' -> 'state' FROM dr.h('ckpt')")" \
	'{"step": 2}' "the checkpointed claim resumes from its latest checkpoint, its tag verified"
is "$(code dst dr_app "SELECT workload_complete(workload_id, claim_id, 'w1', fence - 1, 'r-stale', '{}') FROM dr.h('running')")" \
	"WL007" "a stale fence is refused as before"
as dst dr_app "
SELECT workload_heartbeat(workload_id, claim_id, 'w1', fence, '1 hour', '{\"pct\": 90}') FROM dr.h('ckpt');
SELECT workload_complete(workload_id, claim_id, 'w1', fence, 'r-ckpt', '{\"ok\": true}') FROM dr.h('ckpt');
SELECT workload_complete(workload_id, claim_id, 'w1', fence, 'r-running', '{\"ok\": true}') FROM dr.h('running');
SELECT workload_start(workload_id, claim_id, 'w1', fence) FROM dr.h('claimed');
SELECT workload_complete(workload_id, claim_id, 'w1', fence, 'r-claimed', '{\"ok\": true}') FROM dr.h('claimed');
SELECT workload_confirm_cancel(workload_id, claim_id, 'w1', fence) FROM dr.h('cancel-requested');
" >/dev/null 2>"$DUMP_DIR/finish.err"
is "$(cat "$DUMP_DIR/finish.err")$(qn dst "SELECT string_agg(i.name || '=' || w.state, ' ' ORDER BY i.name) FROM dr.ids i JOIN workload.workloads w USING (workload_id) WHERE i.name IN ('ckpt', 'running', 'claimed', 'cancel-requested')")" \
	"cancel-requested=CANCELLED ckpt=SUCCEEDED claimed=SUCCEEDED running=SUCCEEDED" \
	"the workers holding claims complete (or confirm the cancel) with the fences they got before the dump"

# ----------------------------------------------------- and work goes on
as dst dr_app "
SELECT workload_signal('acme', 'billing', 'parcel-1', '{\"carrier\": \"UPS\"}');
SELECT c.workload_id FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour', 1, true) c;
" >/dev/null 2>"$DUMP_DIR/more.err"
is "$(cat "$DUMP_DIR/more.err")$(as dst dr_app "SELECT workload_get(dr.id('waits-event')) ->> 'state'")" "READY" "an open wait is woken by a signal after the restore"
new_id=$(as dst dr_app "SELECT workload_create(dr.spec('after-restore', 'g2')) ->> 'workload_id'")
is "$(qn dst "SELECT count(*) FILTER (WHERE sequence <= $src_max_event) || ' ' || (count(*) FILTER (WHERE sequence > $src_max_event) > 0) FROM workload.events")" \
	"$src_events true" "every event written after the restore is numbered above every restored one (the last was $src_max_event)"
is "$(qn dst "SELECT seq > $src_max_seq FROM workload.workloads WHERE workload_id = '$new_id'")" "t" \
	"a new workload's number is above every restored one"

# ------------------------------------------- the guard is in force at once
RAW_INSERT="INSERT INTO workload.tenant_members VALUES ('dr_app', 'globex', 'app')"
is "$(code dst dr_app "$RAW_INSERT")" "42501" "after the restore a tenant's role cannot write a table directly"
is "$(code dst dr_app "SET session_replication_role = replica")" "42501" "nor take the restore's setting, which only a superuser may"
is "$(code dst postgres "$RAW_INSERT")" "WL016" "a superuser's direct INSERT is WORKLOAD_RAW_WRITE_DENIED"
is "$(code dst postgres "SET session_replication_role = replica; $RAW_INSERT")" "WL016" \
	"and so it is under session_replication_role = replica: only the restore's COPY passes there"
is "$(printf 'dr_app\tglobex\tapp\n' | PGOPTIONS='-c client_min_messages=warning' on_dst_tool psql -X -qAt -d "$DB" -v VERBOSITY=sqlstate \
	-c "COPY workload.tenant_members FROM STDIN" 2>&1 | sed -n 's/^ERROR: *\([A-Z0-9]*\).*/\1/p')" "WL016" \
	"a superuser's COPY outside that setting is refused too"
is "$(qn dst "SELECT count(*) FROM workload.tenant_members")" "2" "none of these wrote anything"
is "$(code dst postgres "SET session_replication_role = replica;
    CREATE TEMP TABLE staging (role name, tenant_id text, application_id text);
    COPY staging FROM PROGRAM 'printf \"dr_app\\tglobex\\tapp\\n\"';
    CREATE FUNCTION pg_temp.sneak() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
        INSERT INTO workload.tenant_members VALUES (NEW.role, NEW.tenant_id, NEW.application_id); RETURN NEW; END \$\$;
    CREATE TRIGGER sneak BEFORE INSERT ON staging FOR EACH ROW EXECUTE FUNCTION pg_temp.sneak();
    ALTER TABLE staging ENABLE ALWAYS TRIGGER sneak;
    COPY staging FROM PROGRAM 'printf \"dr_app\\tglobex\\tapp\\n\"'")" "WL016" \
	"under that setting a COPY into another table cannot write a workload table on the way"
printf 'dr_app\tglobex\tapp\t4000000000\n' | PGOPTIONS='-c session_replication_role=replica -c client_min_messages=warning' \
	on_dst_tool psql -X -qAt -d "$DB" -c "COPY workload.tenant_members FROM STDIN" >/dev/null 2>&1
is "$(qn dst "SELECT count(*) FROM workload.tenant_members")" "3" \
	"the one write it lets in is a superuser's COPY into the table itself, as a restore's"
is "$(qn dst "SELECT role_oid = 'dr_app'::regrole FROM workload.tenant_members WHERE tenant_id = 'globex' AND role = 'dr_app'")" "t" \
	"... and the row it writes names the role of that name here, whatever OID it carried"
is "$(qn dst "SELECT string_agg(DISTINCT tgenabled::text, '') FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE tgname LIKE '%raw_write_trg' AND tgrelid::regclass::text LIKE 'workload.%' AND c.relkind = 'r'")" \
	"A" "every raw-write trigger on a table is still ALWAYS enabled (a view's cannot be)"

is "$(grep -c 'background worker "workload tick".*exited with exit code' "$DST_TMP/server.log")" "0" \
	"the tick in the restored database never failed"

done_testing
