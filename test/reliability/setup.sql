-- test/reliability/setup.sql: run by lib.sh's rl_setup_db in each scenario's
-- database (not a test itself).  The extension; rl_worker, a login role that
-- is a client and a worker in tenant t1 / application app (and nothing else);
-- rl.grant(), a grant signed by the server key; rl.spec(key, input, extra), a
-- valid workload spec in that tenant.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS workload CASCADE;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rl_worker') THEN
        CREATE ROLE rl_worker LOGIN IN ROLE workload_worker, workload_client;
    END IF;
END
$$;
SELECT workload_add_tenant_member('rl_worker', 't1', 'app');
CREATE SCHEMA rl;
GRANT USAGE ON SCHEMA rl TO PUBLIC;

CREATE FUNCTION rl.unsigned_grant(id text DEFAULT 'grant-rl') RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'contract_version', 1, 'id', id,
        'issuer', jsonb_build_object('kind', 'service', 'id', 'issuer'),
        'subject', jsonb_build_object('kind', 'agent', 'id', 'tester'),
        'tenant_id', 't1', 'application_id', 'app',
        'capabilities', '["*"]'::jsonb, 'resources', '[]'::jsonb,
        'constraints', jsonb_build_object('subject_attributes', '{}'::jsonb),
        'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z',
        'parent_grant', NULL, 'revision', 1, 'status', 'active')
$$;

CREATE FUNCTION rl.grant(id text DEFAULT 'grant-rl') RETURNS jsonb LANGUAGE sql AS $$
    SELECT workload_sign_grant(rl.unsigned_grant(id))
$$;

CREATE FUNCTION rl.spec(key text, input jsonb DEFAULT '{}', extra jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'tenant_id', 't1', 'application_id', 'app', 'environment', 'test',
        'definition_id', 'rl.task', 'definition_revision', 'r1', 'trigger', 'test',
        'input', input || jsonb_build_object('key', key),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'tester'),
        'authorization_snapshot', rl.grant(),
        'capability_snapshot', '[]'::jsonb,
        'retry_policy', jsonb_build_object('max_attempts', 1000, 'initial_delay_ms', 0, 'backoff', 'fixed'),
        'idempotency_key', key) || extra
$$;
