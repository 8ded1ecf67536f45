\echo Use "ALTER EXTENSION workload UPDATE TO '1.2'" to load this file. \quit

-- workload 1.1 -> 1.2: hostile tenants get nothing (SPEC sections 2, 4, 5).
-- Existing data keeps working: stored grants and run authorities still verify
-- (their signatures are kept as SHA-256 digests, which verify the same way),
-- result ids stay valid (now unique per tenant and application), claims held
-- through the update keep their fences (each now belongs to the role that took
-- it, read from its claim event).  Workers that LISTEN must ask
-- workload_channel() again: the channel name is now keyed by a secret.

-- Result ids are unique per (tenant, application): another tenant's result ids
-- can neither collide with nor be probed from yours.
ALTER TABLE workload.results ADD COLUMN tenant_id text, ADD COLUMN application_id text;
UPDATE workload.results r SET tenant_id = w.tenant_id, application_id = w.application_id
FROM workload.workloads w WHERE w.workload_id OPERATOR(pg_catalog.=) r.workload_id;
ALTER TABLE workload.results ALTER COLUMN tenant_id SET NOT NULL,
    ALTER COLUMN application_id SET NOT NULL;
ALTER TABLE workload.results DROP CONSTRAINT results_pkey;
ALTER TABLE workload.results ADD CONSTRAINT results_pkey
    PRIMARY KEY (tenant_id, application_id, result_id);

-- A claim belongs to the database role that took it; grant_ids is the
-- workload's authorization chain (run authority, snapshot grant, the grants it
-- derives from), which the claim holds against revocations.
ALTER TABLE workload.workloads ADD COLUMN claimed_by name,
    ADD COLUMN grant_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE workload.workloads ALTER COLUMN grant_ids DROP DEFAULT;
UPDATE workload.workloads w SET claimed_by = (
    SELECT e.db_role FROM workload.events e
    WHERE e.workload_id OPERATOR(pg_catalog.=) w.workload_id
      AND e.event_type OPERATOR(pg_catalog.=) 'workload.claimed'
    ORDER BY e.sequence DESC LIMIT 1)
WHERE w.claim_id IS NOT NULL;

-- Approvals record the approving database role beside the approver's name.
ALTER TABLE workload.waits ADD COLUMN approver_role name;

-- Revocation reaches down the parent_grant chain: the lineage of every grant
-- the server signed, and the revocations the tick still has to apply to queued
-- work (swept_at NULL: not yet; sweep_after: how far its scan has come).
CREATE TABLE workload.grant_lineage (
    grant_id             text PRIMARY KEY,
    parent_grant         text,
    tenant_id            text,
    application_id       text,
    recorded_at          timestamptz NOT NULL
);
ALTER TABLE workload.revoked_grants ADD COLUMN tenant_id text,
    ADD COLUMN application_id text, ADD COLUMN swept_at timestamptz,
    ADD COLUMN sweep_after text NOT NULL DEFAULT '';
ALTER TABLE workload.revoked_grants ALTER COLUMN sweep_after DROP DEFAULT;
-- the claim reads the revocations whose sweep is not done, at every claim
CREATE INDEX revoked_grants_unswept_idx ON workload.revoked_grants (grant_id)
    WHERE swept_at IS NULL;

-- The lineage of the grants workloads were created with, and of their run
-- authorities (each made from its workload's snapshot grant).
INSERT INTO workload.grant_lineage (grant_id, parent_grant, tenant_id, application_id, recorded_at)
SELECT DISTINCT ON (g OPERATOR(pg_catalog.->>) 'id') g OPERATOR(pg_catalog.->>) 'id', g OPERATOR(pg_catalog.->>) 'parent_grant', g OPERATOR(pg_catalog.->>) 'tenant_id',
       g OPERATOR(pg_catalog.->>) 'application_id', pg_catalog.statement_timestamp()
FROM (SELECT s.authorization_snapshot OPERATOR(pg_catalog.->) 'grant' AS g FROM workload.specs s
      UNION ALL SELECT s.run_authority OPERATOR(pg_catalog.->) 'grant' FROM workload.specs s) q
WHERE g OPERATOR(pg_catalog.->>) 'id' IS NOT NULL
ORDER BY g OPERATOR(pg_catalog.->>) 'id';

UPDATE workload.workloads w SET grant_ids = ARRAY(
    SELECT x FROM pg_catalog.unnest(ARRAY[s.run_authority OPERATOR(pg_catalog.->) 'grant' OPERATOR(pg_catalog.->>) 'id',
        s.authorization_snapshot OPERATOR(pg_catalog.->) 'grant' OPERATOR(pg_catalog.->>) 'id',
        s.authorization_snapshot OPERATOR(pg_catalog.->) 'grant' OPERATOR(pg_catalog.->>) 'parent_grant']) x WHERE x IS NOT NULL)
FROM workload.specs s WHERE s.workload_id OPERATOR(pg_catalog.=) w.workload_id;

-- A signed grant is a bearer credential: what is stored keeps the SHA-256 of
-- its signature, which verifies it as well as the signature did and cannot be
-- presented as one.  Compensation steps are bound to the digest of the stored
-- snapshot, so the steps bound to a snapshot about to change are bound to its
-- new form first.
UPDATE workload.compensations p SET authorization_digest = pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
        ((s.authorization_snapshot OPERATOR(pg_catalog.-) 'signature')
            OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('signature_sha256',
                pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(s.authorization_snapshot OPERATOR(pg_catalog.->>) 'signature', 'UTF8')), 'hex')))::text,
        'UTF8')), 'hex')
FROM workload.specs s
WHERE s.workload_id OPERATOR(pg_catalog.=) p.workload_id
  AND s.authorization_snapshot OPERATOR(pg_catalog.?) 'signature'
  AND p.authorization_digest OPERATOR(pg_catalog.=)
      pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(s.authorization_snapshot::text, 'UTF8')), 'hex');
UPDATE workload.specs SET
    authorization_snapshot = (authorization_snapshot OPERATOR(pg_catalog.-) 'signature')
        OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('signature_sha256',
            pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(authorization_snapshot OPERATOR(pg_catalog.->>) 'signature', 'UTF8')), 'hex')),
    run_authority = (run_authority OPERATOR(pg_catalog.-) 'signature')
        OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('signature_sha256',
            pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(run_authority OPERATOR(pg_catalog.->>) 'signature', 'UTF8')), 'hex'))
WHERE authorization_snapshot OPERATOR(pg_catalog.?) 'signature' OR run_authority OPERATOR(pg_catalog.?) 'signature';

-- The channel secret: the NOTIFY channel of a tenant and application is an
-- HMAC under it, so nobody who may not act there can name the channel.
CREATE TABLE workload.channel_secret (
    secret               bytea NOT NULL CHECK (pg_catalog.length(secret) OPERATOR(pg_catalog.=) 32),
    created_at           timestamptz NOT NULL
);
CREATE UNIQUE INDEX channel_secret_one_row ON workload.channel_secret ((true));

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['grant_lineage', 'channel_secret'] LOOP
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_write_trg');
        EXECUTE pg_catalog.format('REVOKE ALL ON workload.%I FROM PUBLIC', t);
    END LOOP;
END
$$;
GRANT SELECT ON workload.grant_lineage TO workload_admin;

-- Key material is readable by no role but the extension's owner: row level
-- security with no policy hides every row from pg_read_all_data and anyone
-- else without BYPASSRLS (the owner and superusers are not subject to it).
ALTER TABLE workload.signing_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE workload.channel_secret ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON workload.channel_secret FROM workload_admin;

CREATE FUNCTION workload.make_channel_secret() RETURNS void
    LANGUAGE C AS 'MODULE_PATHNAME', 'workload_make_channel_secret';
REVOKE ALL ON FUNCTION workload.make_channel_secret() FROM PUBLIC;
SELECT workload.make_channel_secret();

-- The caller is the role that called the API function (current_user at the
-- call), never the session's outer role: the functions run as their caller and
-- the C switches to the extension's owner for the tables itself, knowing who
-- called.  A SECURITY DEFINER function of another role that calls the API acts
-- with that role's rights.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
            AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'
        JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
        WHERE e.extname OPERATOR(pg_catalog.=) 'workload' AND p.prosecdef
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SECURITY INVOKER', f);
    END LOOP;
END
$$;

-- workload_channel reads the channel secret and answers only members.
ALTER FUNCTION @extschema@.workload_channel(text, text) STABLE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION @extschema@.workload_channel(text, text) IS 'the NOTIFY channel of a tenant and application (members only)';
