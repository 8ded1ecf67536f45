-- test/t/worker_setup.sql: shared setup for the workload-worker end-to-end
-- tests (run by test/t/worker_lib.sh, not a test itself).  Creates the
-- extension, a login role holding only workload_worker for the workers, and
-- wt.create(key, input, extra, grant_id): a workload in tenant "t1",
-- application "app".
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS workload CASCADE;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'wl_test_worker') THEN
        CREATE ROLE wl_test_worker LOGIN IN ROLE workload_worker;
    END IF;
    -- tenant membership, where this build of the extension has it
    IF to_regproc('workload_add_tenant_member') IS NOT NULL THEN
        EXECUTE $q$SELECT workload_add_tenant_member('wl_test_worker', 't1', 'app')$q$;
    END IF;
END
$$;
CREATE SCHEMA IF NOT EXISTS wt;

-- wt.grant(id): the requester's grant, signed where this build signs grants.
CREATE OR REPLACE FUNCTION wt.grant(grant_id text DEFAULT 'grant-t1-tester') RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    g jsonb := jsonb_build_object(
        'contract_version', 1, 'id', grant_id,
        'issuer', jsonb_build_object('kind', 'service', 'id', 'issuer'),
        'subject', jsonb_build_object('kind', 'agent', 'id', 'tester'),
        'tenant_id', 't1', 'application_id', 'app',
        'capabilities', '["*"]'::jsonb, 'resources', '[]'::jsonb,
        'constraints', jsonb_build_object('subject_attributes', '{}'::jsonb),
        'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z',
        'parent_grant', NULL, 'revision', 1, 'status', 'active');
    signed jsonb;
BEGIN
    IF to_regproc('workload_sign_grant') IS NOT NULL THEN
        EXECUTE 'SELECT workload_sign_grant($1)' INTO signed USING g;
        RETURN signed;
    END IF;
    RETURN jsonb_build_object('grant', g, 'key_id', 'k1', 'signature', 'unsigned');
END
$$;

-- wt.create(key, input, extra, grant_id): a workload under that grant.
CREATE OR REPLACE FUNCTION wt.create(key text, input jsonb, extra jsonb DEFAULT '{}',
        grant_id text DEFAULT 'grant-t1-tester')
RETURNS text LANGUAGE sql AS $$
    SELECT workload_create(jsonb_build_object(
        'tenant_id', 't1', 'application_id', 'app', 'environment', 'test',
        'definition_id', 'e2e.task', 'definition_revision', 'r1', 'trigger', 'test',
        'input', input,
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'tester'),
        'authorization_snapshot', wt.grant(grant_id),
        'capability_snapshot', '[]'::jsonb,
        'idempotency_key', key) || extra) ->> 'workload_id'
$$;

-- wt.try_complete: send a completion and answer 'accepted' or the refusal's SQLSTATE.
CREATE OR REPLACE FUNCTION wt.try_complete(id text, claim text, worker text, token bigint,
        result_id text, output jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM workload_complete(id, claim, worker, token, result_id, output);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

-- wt.tamper_checkpoint: what a superuser could do behind the API's back: turn
-- the raw-write triggers off, overwrite a checkpoint's state, turn them back on
-- as they were.
CREATE OR REPLACE FUNCTION wt.tamper_checkpoint(id text, seq int, new_state jsonb)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t record;
    saved text[][] := '{}';
BEGIN
    FOR t IN SELECT tgname, tgenabled FROM pg_trigger
             WHERE tgrelid = 'workload.checkpoints'::regclass AND NOT tgisinternal LOOP
        saved := saved || ARRAY[[t.tgname::text, t.tgenabled::text]];
        EXECUTE format('ALTER TABLE workload.checkpoints DISABLE TRIGGER %I', t.tgname);
    END LOOP;
    UPDATE workload.checkpoints SET state = new_state WHERE workload_id = id AND sequence = seq;
    FOR i IN 1 .. coalesce(array_length(saved, 1), 0) LOOP
        EXECUTE format('ALTER TABLE workload.checkpoints ENABLE %s TRIGGER %I',
                       CASE saved[i][2] WHEN 'A' THEN 'ALWAYS' WHEN 'R' THEN 'REPLICA' ELSE '' END,
                       saved[i][1]);
    END LOOP;
END
$$;
