-- Helpers shared by the regress tests (included with \i, not a test itself).
-- pg_regress runs every test in one database, so each test starts from a
-- freshly created extension: no test sees another's workloads, events or keys.
-- t.grant builds an authorization snapshot; t.spec a valid workload spec.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS t CASCADE;
DROP EXTENSION IF EXISTS workload CASCADE;
CREATE EXTENSION workload;
-- On a Citus coordinator (test/t/025_citus_cluster_routes_each_tenant.sh runs
-- this suite there), the fresh extension is distributed by tenant.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM workload_citus_distribute();
    END IF;
END
$$;
CREATE SCHEMA t;

-- t.unsigned_grant: the grant alone, to sign (or tamper with) by hand.
CREATE OR REPLACE FUNCTION t.unsigned_grant(tenant text DEFAULT 'acme', app text DEFAULT 'billing',
        subject_id text DEFAULT 'planner', caps text[] DEFAULT ARRAY['*'],
        status text DEFAULT 'active', expires text DEFAULT '2100-01-01T00:00:00Z')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
            'contract_version', 1, 'id', 'grant-' || tenant || '-' || subject_id,
            'issuer', jsonb_build_object('kind', 'service', 'id', 'issuer'),
            'subject', jsonb_build_object('kind', 'agent', 'id', subject_id),
            'tenant_id', tenant, 'application_id', app,
            'capabilities', to_jsonb(caps), 'resources', '[]'::jsonb,
            'constraints', jsonb_build_object('subject_attributes', '{}'::jsonb),
            'issued_at', '2020-01-01T00:00:00Z', 'expires_at', expires,
            'parent_grant', NULL, 'revision', 1, 'status', status)
$$;

-- t.grant builds a grant and signs it under the server key (workload_sign_grant).
CREATE OR REPLACE FUNCTION t.grant(tenant text DEFAULT 'acme', app text DEFAULT 'billing',
        subject_id text DEFAULT 'planner', caps text[] DEFAULT ARRAY['*'],
        status text DEFAULT 'active', expires text DEFAULT '2100-01-01T00:00:00Z')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT workload_sign_grant(t.unsigned_grant(tenant, app, subject_id, caps, status, expires))
$$;

CREATE OR REPLACE FUNCTION t.spec(key text, extra jsonb DEFAULT '{}',
        tenant text DEFAULT 'acme', app text DEFAULT 'billing')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'tenant_id', tenant, 'application_id', app, 'environment', 'test',
        'definition_id', 'invoice.render', 'definition_revision', 'r1',
        'trigger', 'api', 'input', jsonb_build_object('n', key),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'planner'),
        'authorization_snapshot', t.grant(tenant, app),
        'idempotency_key', key) || extra
$$;

-- t.create(key, extra) creates and returns the workload id.
CREATE OR REPLACE FUNCTION t.create(key text, extra jsonb DEFAULT '{}',
        tenant text DEFAULT 'acme', app text DEFAULT 'billing')
RETURNS text LANGUAGE sql AS $$
    SELECT workload_create(t.spec(key, extra, tenant, app)) ->> 'workload_id'
$$;

-- t.fingerprint(): a digest of every table, to show a refused call changed nothing.
CREATE OR REPLACE FUNCTION t.fingerprint() RETURNS text LANGUAGE sql AS $$
    SELECT md5(string_agg(x, '|' ORDER BY x)) FROM (
        SELECT 'w' || md5(w::text) FROM workload.workloads w
        UNION ALL SELECT 'u' || md5(u::text) FROM workload.runs u
        UNION ALL SELECT 'q' || md5(q::text) FROM workload.queue q
        UNION ALL SELECT 'l' || md5(l::text) FROM workload.leases l
        UNION ALL SELECT 's' || md5(s::text) FROM workload.specs s
        UNION ALL SELECT 'h' || md5(h::text) FROM workload.spec_authority h
        UNION ALL SELECT 'a' || md5(a::text) FROM workload.attempts a
        UNION ALL SELECT 'c' || md5(c::text) FROM workload.checkpoints c
        UNION ALL SELECT 'r' || md5(r::text) FROM workload.results r
        UNION ALL SELECT 'e' || md5(e::text) FROM workload.events e
        UNION ALL SELECT 'd' || md5(d::text) FROM workload.dependencies d
        UNION ALL SELECT 'x' || md5(x::text) FROM workload.waits x
        UNION ALL SELECT 'p' || md5(p::text) FROM workload.compensations p
        UNION ALL SELECT 'k' || md5(k::text) FROM workload.signing_keys k
        UNION ALL SELECT 'g' || md5(g::text) FROM workload.revoked_grants g
        UNION ALL SELECT 'm' || md5(m::text) FROM workload.tenant_members m) q(x)
$$;
-- run(id): claim this workload as worker w1 and start it; returns the fence
CREATE OR REPLACE FUNCTION t.run(id text, worker text DEFAULT 'w1', lease interval DEFAULT '30 seconds')
RETURNS TABLE(claim_id text, fencing_token bigint) LANGUAGE plpgsql AS $$
BEGIN
    SELECT c.claim_id, c.fencing_token INTO claim_id, fencing_token
    FROM workload_claim_id(id, worker, '{}', lease) c;
    PERFORM workload_start(id, claim_id, worker, fencing_token);
    RETURN NEXT;
END $$;
-- st(id): state, counters, how long until due (against the clock) and whether a claim is held
CREATE OR REPLACE FUNCTION t.st(id text)
RETURNS TABLE(state text, attempt_count int, retry_count int, due_in interval, claimed boolean)
LANGUAGE sql AS $$
    SELECT d->>'state', (d->>'attempt_count')::int, (d->>'retry_count')::int,
           (d->>'next_attempt_at')::timestamptz - current_setting('workload.clock_override')::timestamptz,
           jsonb_typeof(d->'current_claim') = 'object'
    FROM workload_get(id) d
$$;

RESET client_min_messages;
