-- The API works with an empty search_path, and functions or operators a caller puts ahead of pg_catalog cannot change what it does or returns (SPEC section 5: functions that run with raised rights pin their search_path).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- the functions this test calls run with a pinned search_path (since 1.2 they run as their
-- caller, and the C switches to the extension's owner for the tables), and no function of
-- the extension is SECURITY DEFINER without one
SELECT p.oid::regprocedure AS function, p.prosecdef AS security_definer, p.proconfig
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'workload'
WHERE p.proname IN ('workload_create', 'workload_claim', 'workload_start', 'workload_heartbeat',
                    'workload_checkpoint', 'workload_complete', 'workload_get', 'workload_list', 'workload_history')
ORDER BY p.oid::regprocedure::text;
SELECT count(*) AS definer_without_pinned_path
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'workload'
WHERE p.prosecdef AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false);

-- the specs are built first; after this the session has an empty search_path
SELECT t.spec('empty-path', '{"input": {"pages": 2}, "capability_snapshot": ["render"]}') AS spec1 \gset
SELECT t.spec('hostile-path', '{"input": {"pages": 2}, "capability_snapshot": ["render"]}') AS spec2 \gset
SELECT t.spec('sched', '{}', 'acme', 'sched') - 'idempotency_key' - 'tenant_id' - 'application_id' AS tpl \gset
SET search_path = '';

-- the key calls, schema-qualified, with nothing on the search_path
SELECT public.workload_create(:'spec1') ->> 'state' AS created;
SELECT claim_id AS claim1, fencing_token, workload_id AS id FROM public.workload_claim('w1', '{render}', 'acme', 'billing') \gset
\set claim_id :claim1
SELECT :'id' IS NOT NULL AS claimed, :fencing_token AS fencing_token;
SELECT public.workload_start(:'id', :'claim_id', 'w1', :fencing_token);
SELECT public.workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds', '{"pct": 50}') ->> 'state' AS heartbeat;
SELECT public.workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"page": 1}') -> 'sequence' AS checkpoint;
SELECT public.workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'result-one', '[{"ok": true}]') ->> 'result_id' AS result;
SELECT d ->> 'state' AS state, d -> 'capability_snapshot' AS caps, jsonb_array_length(d -> 'events') AS events,
       d -> 'result' -> 'output' AS output
FROM public.workload_get(:'id') d;
SELECT count(*) AS listed FROM public.workload_list('acme', 'billing');
SELECT count(*) AS history FROM public.workload_history(:'id');
-- refusals still carry their codes
SELECT public.workload_get('workload_000000000000000000000000');
\echo :SQLSTATE
SELECT public.workload_create('{}');
\echo :SQLSTATE
-- a schedule (in another application), fired by a tick, with nothing on the search_path
SELECT public.workload_schedule('acme', 'sched', 'five', '*/5 * * * *', :'tpl', 'Europe/Berlin') ->> 'next_run_at' AS next_run_at;
SET workload.clock_override = '2026-01-01 00:05:10+00';
SELECT public.workload_tick() ->> 'schedule_slots_fired' AS fired;
SELECT d ->> 'last_run_at' AS last_run_at, d ->> 'last_error' AS last_error FROM public.workload_schedules('acme', 'sched') d;
SELECT public.workload_schedule('acme', 'sched', 'five', '61 * * * *', :'tpl');
\echo :SQLSTATE
SELECT public.workload_schedule_drop('acme', 'sched', 'five');
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT public.workload_get(:'id') AS doc_empty_path \gset
RESET search_path;

-- now a caller puts lookalikes ahead of pg_catalog: = on text that is always false, to_jsonb(text[])
-- and jsonb_agg that return "hacked", and a lower() that says "hacked"
CREATE FUNCTION public.evil_texteq(text, text) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false';
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.evil_texteq);
CREATE FUNCTION public.to_jsonb(text[]) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$SELECT '"hacked"'::pg_catalog.jsonb$$;
CREATE FUNCTION public.lower(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$SELECT 'hacked'$$;
CREATE FUNCTION public.evil_agg_final(jsonb) RETURNS jsonb LANGUAGE sql AS $$SELECT '"hacked"'::pg_catalog.jsonb$$;
CREATE AGGREGATE public.jsonb_agg(jsonb) (SFUNC = pg_catalog.jsonb_concat, STYPE = jsonb, FINALFUNC = public.evil_agg_final);
-- a new connection, so nothing the API prepared earlier is reused
\c
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET search_path = public, pg_catalog;
-- the lookalikes do take effect on the caller's own unqualified SQL
SELECT 'a'::text = 'a'::text AS text_equal, to_jsonb(ARRAY['x']) AS to_jsonb_array, lower('ABC') AS lower,
       (SELECT jsonb_agg(x) FROM (VALUES ('1'::jsonb)) v(x)) AS agg;

-- the API is not affected: the same run gives the same answers
SELECT workload_create(:'spec2') ->> 'state' AS created;
SELECT claim_id AS claim2, fencing_token, workload_id AS id2 FROM workload_claim('w1', '{render}', 'acme', 'billing') \gset
\set claim_id :claim2
SELECT :'id2' IS NOT NULL AS claimed, :'id2' <> :'id' AS another_workload;
SELECT workload_start(:'id2', :'claim_id', 'w1', :fencing_token);
SELECT workload_heartbeat(:'id2', :'claim_id', 'w1', :fencing_token, '30 seconds', '{"pct": 50}') ->> 'state' AS heartbeat;
SELECT workload_checkpoint(:'id2', :'claim_id', 'w1', :fencing_token, '{"page": 1}') -> 'sequence' AS checkpoint;
SELECT workload_complete(:'id2', :'claim_id', 'w1', :fencing_token, 'result-two', '[{"ok": true}]') ->> 'result_id' AS result;
SELECT workload_get(:'id2') AS doc_hostile_path \gset
RESET search_path;
SELECT d ->> 'state' AS state, d -> 'capability_snapshot' AS caps, jsonb_array_length(d -> 'events') AS events,
       d -> 'result' -> 'output' AS output, d -> 'attempts' -> 0 ->> 'worker_id' AS worker
FROM (SELECT :'doc_hostile_path'::jsonb AS d) s;
-- the two documents are the same but for the ids of the two workloads (and the global event sequence)
CREATE FUNCTION pg_temp.normalized(doc jsonb, id text, claim text, result text, key text) RETURNS text
LANGUAGE sql AS $$
    SELECT replace(replace(replace(replace(
        (doc || jsonb_build_object('events', (SELECT jsonb_agg(e - 'sequence' ORDER BY (e->>'sequence')::bigint)
                                              FROM jsonb_array_elements(doc->'events') e),
                                   -- a checkpoint's tag is a MAC over its workload's id: it differs by design
                                   'checkpoints', (SELECT jsonb_agg(c - 'tag' ORDER BY (c->>'sequence')::int)
                                                   FROM jsonb_array_elements(doc->'checkpoints') c)))::text,
        id, '<id>'), claim, '<claim>'), result, '<result>'), key, '<key>')
$$;
SELECT pg_temp.normalized(:'doc_empty_path', :'id', :'claim1', 'result-one', 'empty-path')
     = pg_temp.normalized(:'doc_hostile_path', :'id2', :'claim2', 'result-two', 'hostile-path') AS same_document;
SET search_path = public, pg_catalog;
SELECT count(*) AS listed FROM workload_list('acme', 'billing');
SELECT count(*) AS history FROM workload_history(:'id2');
SELECT workload_get('workload_000000000000000000000000');
\echo :SQLSTATE
RESET search_path;

-- the lookalikes go, so nothing after this test sees them
DROP AGGREGATE public.jsonb_agg(jsonb);
DROP FUNCTION public.evil_agg_final(jsonb), public.lower(text), public.to_jsonb(text[]);
DROP OPERATOR public.= (text, text);
DROP FUNCTION public.evil_texteq(text, text);
SELECT to_jsonb(ARRAY['x']) AS to_jsonb_array, lower('ABC') AS lower;

-- pg_temp: a caller's temporary look-alikes of the catalogs and of our tables
-- are not picked up either, also on the tenant-membership path of a
-- non-admin role (pg_temp comes last in every pinned path)
SET client_min_messages = warning;
DROP ROLE IF EXISTS sp_member;
RESET client_min_messages;
CREATE ROLE sp_member;
GRANT workload_client, workload_worker TO sp_member;
SELECT workload_add_tenant_member('sp_member', 'acme', 'billing');
CREATE TEMP TABLE pg_roles (rolname name, oid oid);
CREATE TEMP TABLE tenant_members (role name, tenant_id text, application_id text);
CREATE TEMP TABLE workloads (workload_id text);
CREATE TEMP TABLE specs (workload_id text);
GRANT ALL ON pg_temp.pg_roles, pg_temp.tenant_members, pg_temp.workloads, pg_temp.specs TO sp_member;
SELECT t.spec('temp-path') AS spec3 \gset
SET ROLE sp_member;
SET search_path = pg_temp, public;
SELECT public.workload_create(:'spec3') ->> 'state' AS created_as_member;
SELECT count(*) AS listed_as_member FROM public.workload_list('acme', 'billing');
SELECT public.workload_list('globex', 'billing');
\echo :SQLSTATE
RESET search_path;
RESET ROLE;
DROP TABLE pg_temp.pg_roles, pg_temp.tenant_members, pg_temp.workloads, pg_temp.specs;
DROP OWNED BY sp_member;
DROP ROLE sp_member;
