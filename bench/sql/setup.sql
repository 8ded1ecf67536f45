-- bench/sql/setup.sql: schema "bench" with the helpers the benchmark uses.
-- Loaded into the template database by bench/run.sh after CREATE EXTENSION.
-- bench.spec mirrors t.spec in test/include/helpers.sql; keep the two shapes alike.
\set ON_ERROR_STOP on
CREATE SCHEMA IF NOT EXISTS bench;

-- An authorization snapshot for tenant/app.  Signed with workload_sign_grant
-- when the extension has it; until then the extension accepts "unsigned".
CREATE OR REPLACE FUNCTION bench.grant(tenant text, app text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    g jsonb := jsonb_build_object(
        'contract_version', 1, 'id', 'grant-' || tenant || '-' || app || '-bench',
        'issuer', jsonb_build_object('kind', 'service', 'id', 'issuer'),
        'subject', jsonb_build_object('kind', 'agent', 'id', 'bench'),
        'tenant_id', tenant, 'application_id', app,
        'capabilities', '["*"]'::jsonb, 'resources', '[]'::jsonb,
        'constraints', jsonb_build_object('subject_attributes', '{}'::jsonb),
        'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z',
        'parent_grant', NULL, 'revision', 1, 'status', 'active');
BEGIN
    IF to_regprocedure('workload_sign_grant(jsonb)') IS NOT NULL THEN
        RETURN workload_sign_grant(g);
    END IF;
    RETURN jsonb_build_object('grant', g, 'key_id', 'key-test', 'signature', 'unsigned');
END
$$;

-- The grant is the same for every workload of a tenant/app: compute it once per
-- session (bench.spec is called a million times during preloading).
CREATE OR REPLACE FUNCTION bench.cached_grant(tenant text, app text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    k text := 'bench.grant_' || md5(tenant || ':' || app);
    v text := current_setting(k, true);
BEGIN
    IF v IS NULL OR v = '' THEN
        v := bench.grant(tenant, app)::text;
        PERFORM set_config(k, v, false);
    END IF;
    RETURN v::jsonb;
END
$$;

CREATE OR REPLACE FUNCTION bench.spec(key text, tenant text, app text, prio int DEFAULT 0)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'tenant_id', tenant, 'application_id', app, 'environment', 'bench',
        'definition_id', 'bench.noop', 'definition_revision', 'r1',
        'trigger', 'api', 'input', jsonb_build_object('n', key),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', 'bench'),
        'authorization_snapshot', bench.cached_grant(tenant, app),
        'priority', prio,
        'idempotency_key', key)
$$;

-- bench.create_range(tenant, app, from, to): creates workloads from..to (keys
-- "<app>-<i>") in the calling transaction; returns how many.  Priorities cycle
-- 0..3 so the claim ordering has something to do, like the baseline's.
CREATE OR REPLACE FUNCTION bench.create_range(tenant text, app text, lo bigint, hi bigint)
RETURNS bigint LANGUAGE sql AS $$
    SELECT count(workload_create(bench.spec(app || '-' || i, tenant, app, (i % 4)::int)))
    FROM generate_series(lo, hi) AS i
$$;

-- The baseline (a): a bare queue table, the same shape of claim.
CREATE TABLE IF NOT EXISTS bench.q (
    id        bigint PRIMARY KEY,
    priority  int NOT NULL,
    state     text NOT NULL,
    token     bigint NOT NULL DEFAULT 0,
    payload   jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS q_ready_idx ON bench.q (priority DESC, id) WHERE state = 'ready';

CREATE OR REPLACE FUNCTION bench.q_fill(lo bigint, hi bigint)
RETURNS bigint LANGUAGE sql AS $$
    WITH ins AS (
        INSERT INTO bench.q (id, priority, state, payload)
        SELECT i, (i % 4)::int, 'ready', jsonb_build_object('n', i)
        FROM generate_series(lo, hi) AS i
        RETURNING 1)
    SELECT count(*) FROM ins
$$;

-- bench.drain(tenant, app, worker, batch): claims (with start) and completes
-- every READY workload of tenant/app, batch by batch, one commit per batch.
-- Used to leave finished workloads (SUCCEEDED, with events, attempts and
-- results) in the tables for the scale runs.  Run several in parallel.
CREATE OR REPLACE PROCEDURE bench.drain(tenant text, app text, worker text, batch int DEFAULT 1000)
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    LOOP
        SELECT count(workload_complete(c.workload_id, c.claim_id, worker, c.fencing_token,
                                       'r-' || c.workload_id, '{"ok": true}'::jsonb))
        INTO n
        FROM workload_claim(worker, '{}', tenant, app, max_items => batch, start => true) c;
        COMMIT;
        EXIT WHEN n = 0;
    END LOOP;
END
$$;

-- bench.feed(tenant, app, seconds, key_base): a producer that keeps the READY
-- depth of tenant/app where it was, by creating as many workloads as the
-- workers have taken.  It reads the events sequence (cheap, no table scan):
-- each create appends 2 events (created, ready), each claim/start/complete
-- job 3 (claimed, started, completed).  Approximate by up to one tick of work.
CREATE OR REPLACE PROCEDURE bench.feed(tenant text, app text, seconds float8, key_base bigint,
                                       tick_ms int DEFAULT 20, events_per_job int DEFAULT 3)
LANGUAGE plpgsql AS $$
DECLARE
    seqname text := pg_get_serial_sequence('workload.event_rows', 'sequence');
    t_end timestamptz := clock_timestamp() + make_interval(secs => seconds);
    s0 bigint;
    s bigint;
    created bigint := 0;
    k bigint;
BEGIN
    EXECUTE format('SELECT last_value FROM %s', seqname) INTO s0;
    WHILE clock_timestamp() < t_end LOOP
        EXECUTE format('SELECT last_value FROM %s', seqname) INTO s;
        k := (s - s0 - 2 * created) / events_per_job - created;
        -- at most 100 a transaction: a producer's long transaction holds back
        -- the pruning of what the workers claimed meanwhile, as a held
        -- snapshot does (with longer ones a run's rate fell by a third in
        -- two minutes with no snapshot held, the feeder's xmin seconds old)
        WHILE k > 0 LOOP
            PERFORM bench.create_range(tenant, app, key_base + created + 1,
                                       key_base + created + least(k, 100));
            created := created + least(k, 100);
            k := k - least(k, 100);
            COMMIT;
        END LOOP;
        COMMIT;
        PERFORM pg_sleep(tick_ms / 1000.0);
    END LOOP;
    RAISE NOTICE 'feeder created % workloads', created;
END
$$;

-- Samples of the memory check (bench/scripts/memory_cycle.pgbench).
CREATE TABLE IF NOT EXISTS bench.mem_samples (
    calls  bigint PRIMARY KEY,
    bytes  bigint NOT NULL,
    at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
