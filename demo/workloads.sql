-- demo/workloads.sql: the demo's database side, run once by demo/run.sh.
-- Creates the extension, a login role for the workers that holds only
-- workload_worker, and ~300 workloads in tenant "acme", application "media"
-- (the first 270 in one workload_create_many call):
-- renders, checkpointed encodes, flaky uploads, corrupt frames, poison pills,
-- legacy thumbnails that print no JSON, publishes that depend on renders,
-- long archives (to be cancelled) and urgent renders, created last with a
-- higher priority.  demo.created records what each workload is.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS workload CASCADE;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'demo_worker') THEN
        CREATE ROLE demo_worker LOGIN IN ROLE workload_worker;
    END IF;
    IF to_regproc('workload_add_tenant_member') IS NOT NULL THEN
        EXECUTE $q$SELECT workload_add_tenant_member('demo_worker', 'acme', 'media')$q$;
    END IF;
END
$$;

CREATE SCHEMA demo;
CREATE TABLE demo.created (
    workload_id text PRIMARY KEY,
    kind        text NOT NULL,
    n           integer NOT NULL,
    priority    integer NOT NULL,
    seq         integer GENERATED ALWAYS AS IDENTITY
);
-- on Citus (demo/run.sh --citus) a reference table, so the demo's queries can
-- join it with the distributed workload tables
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM create_reference_table('demo.created');
    END IF;
END
$$;

-- What the demo script reads, as views of tenant acme's rows: on Citus a
-- query whose every table names the tenant runs on the node that holds it.
CREATE VIEW demo.workloads AS SELECT * FROM workload.workloads WHERE tenant_id = 'acme';
CREATE VIEW demo.dependencies AS SELECT * FROM workload.dependencies WHERE tenant_id = 'acme';
CREATE VIEW demo.specs AS SELECT * FROM workload.specs WHERE tenant_id = 'acme';
CREATE VIEW demo.results AS SELECT * FROM workload.results WHERE tenant_id = 'acme';
CREATE VIEW demo.attempt_log AS SELECT * FROM workload.attempt_log WHERE tenant_id = 'acme';
CREATE VIEW demo.event_log AS SELECT * FROM workload.event_log WHERE tenant_id = 'acme';

-- demo.grant: the planner's grant, signed where this build signs grants.
CREATE FUNCTION demo.grant() RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    g jsonb := jsonb_build_object(
        'contract_version', 1, 'id', 'grant-acme-media-planner',
        'issuer', jsonb_build_object('kind', 'service', 'id', 'iam'),
        'subject', jsonb_build_object('kind', 'agent', 'id', 'media-planner'),
        'tenant_id', 'acme', 'application_id', 'media',
        'capabilities', '["media"]'::jsonb, 'resources', '[]'::jsonb,
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

-- demo.spec(kind, n, ms, priority, deps): the create spec of one workload.
CREATE FUNCTION demo.spec(kind text, n integer, ms integer, priority integer DEFAULT 0,
        deps text[] DEFAULT '{}') RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    spec jsonb := jsonb_build_object(
        'tenant_id', 'acme', 'application_id', 'media', 'environment', 'demo',
        'definition_id', 'media.' || kind, 'definition_revision', 'r1', 'trigger', 'demo',
        'input', jsonb_build_object('kind', kind, 'n', n, 'ms', ms),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'media-planner'),
        'authorization_snapshot', demo.grant(),
        'capability_snapshot', '["media"]'::jsonb,
        'priority', priority,
        'retry_policy', jsonb_build_object('max_attempts', 3, 'initial_delay_ms', 500,
                                           'backoff', 'exponential'),
        'idempotency_key', kind || '-' || n);
BEGIN
    IF cardinality(deps) > 0 THEN
        spec := spec || jsonb_build_object('dependencies',
            (SELECT jsonb_agg(jsonb_build_object('workload_id', d)) FROM unnest(deps) d));
    END IF;
    RETURN spec;
END
$$;

-- demo.create(kind, n, ms, priority, deps): one workload; returns its id.
CREATE FUNCTION demo.create(kind text, n integer, ms integer, priority integer DEFAULT 0,
        deps text[] DEFAULT '{}') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    id text;
BEGIN
    id := workload_create(demo.spec(kind, n, ms, priority, deps)) ->> 'workload_id';
    INSERT INTO demo.created (workload_id, kind, n, priority) VALUES (id, kind, n, priority);
    RETURN id;
END
$$;

-- demo.bulk: how the bulk was created (one workload_create_many call)
CREATE TABLE demo.bulk (items integer, created integer, ms numeric);

-- demo.try_complete: send a completion; the answer, or the refusal's SQLSTATE and message.
CREATE FUNCTION demo.try_complete(id text, claim text, worker text, token bigint,
        result_id text, output jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN 'accepted: ' || (workload_complete(id, claim, worker, token, result_id, output) ->> 'outcome');
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;

DO $$
DECLARE
    i integer;
    made integer;
    t0 timestamptz;
BEGIN
    -- the bulk, in order of creation, with failures spread through it: 270 workloads
    -- made by one workload_create_many call (each item answered on its own)
    t0 := clock_timestamp();
    CREATE TEMP TABLE bulk_items ON COMMIT DROP AS
    SELECT g.x AS ord, g.x AS n,
           CASE WHEN g.x % 60 = 23 THEN 'poison'
                WHEN g.x % 90 = 47 THEN 'legacy'
                WHEN g.x % 30 = 11 THEN 'corrupt'
                WHEN g.x % 18 = 5 THEN 'upload'
                WHEN g.x % 13 = 0 THEN 'encode'
                ELSE 'render' END AS kind
    FROM generate_series(1, 270) g(x);
    INSERT INTO demo.created (workload_id, kind, n, priority)
    SELECT r.workload_id, b.kind, b.n, 0
    FROM workload_create_many((SELECT jsonb_agg(demo.spec(b.kind, b.n,
             CASE b.kind WHEN 'encode' THEN 300 ELSE 120 + (b.n * 53) % 300 END) ORDER BY b.ord)
             FROM bulk_items b)) r
    JOIN bulk_items b ON b.ord = r.ord
    WHERE r.outcome = 'created'
    ORDER BY r.ord;
    GET DIAGNOSTICS made = ROW_COUNT;
    IF made <> 270 THEN
        RAISE EXCEPTION 'workload_create_many created % of 270', made;
    END IF;
    INSERT INTO demo.bulk VALUES (270, made,
        round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1));
    -- publishes wait for three renders each; two wait for a corrupt frame
    FOR i IN 1..12 LOOP
        PERFORM demo.create('publish', i, 100, 0, ARRAY(
            SELECT c.workload_id FROM demo.created c WHERE c.kind = 'render' ORDER BY c.n
            OFFSET (i - 1) * 20 LIMIT 3));
    END LOOP;
    FOR i IN 13..14 LOOP
        PERFORM demo.create('publish', i, 100, 0, ARRAY(
            SELECT c.workload_id FROM demo.created c WHERE c.kind = 'corrupt' ORDER BY c.n LIMIT 1));
    END LOOP;
    -- two long archives (the operator cancels them while they run)
    FOR i IN 1..2 LOOP
        PERFORM demo.create('archive', i, 60000, 5);
    END LOOP;
    -- urgent renders: created last, claimed first
    FOR i IN 1001..1020 LOOP
        PERFORM demo.create('urgent', i, 120, 10);
    END LOOP;
END
$$;
