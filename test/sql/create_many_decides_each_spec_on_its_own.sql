-- workload_create_many creates up to 1000 specs in one transaction, each decided on its own: created, existing (an idempotent replay) or refused with its code and nothing written; the others are written with the events workload_create writes; a batch that is no array of 1 to 1000 items is refused as a whole (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS cm_client; DROP ROLE IF EXISTS cm_worker;
RESET client_min_messages;
CREATE ROLE cm_client LOGIN; GRANT workload_client TO cm_client;
CREATE ROLE cm_worker LOGIN; GRANT workload_worker TO cm_worker;
SELECT workload_add_tenant_member('cm_client', 'acme', 'billing');
SELECT workload_add_tenant_member('cm_worker', 'acme', 'billing');
-- a workload created before, to replay and to conflict with
SELECT t.create('old') AS old \gset

-- one batch of every kind of item, through a client role that is a member of acme only
SELECT jsonb_build_array(
    t.spec('new-1'),                                              -- 1 created
    t.spec('old'),                                                -- 2 existing: an earlier call's
    t.spec('old', '{"input": {"n": "other"}}'),                   -- 3 conflict with an earlier call's
    t.spec('new-1'),                                              -- 4 existing: item 1's
    t.spec('new-1', '{"definition_revision": "r2"}'),             -- 5 conflict with item 1
    t.spec('bad') - 'trigger',                                    -- 6 invalid spec
    t.spec('bad', '{"priority": "high"}'),                        -- 7 invalid spec
    t.spec('other', '{}', 'globex', 'billing'),                   -- 8 a tenant it is not a member of
    t.spec('sec', '{"input": {"password": "hunter2"}}'),          -- 9 a secret in input
    t.spec('sec2', '{"environment": "sk-abcdef"}'),               -- 10 a secret elsewhere in the spec
    t.spec('new-2', '{"not_before": "2026-01-01T00:10:00Z", "priority": 5}'), -- 11 created, due later
    '"not an object"'::jsonb,                                     -- 12 invalid
    t.spec('new-3', jsonb_build_object('authorization_snapshot', t.grant('acme', 'billing', 'someone-else'))), -- 13 grant of another subject
    t.spec('dep', jsonb_build_object('dependencies', jsonb_build_array(
        jsonb_build_object('workload_id', 'workload_0000000000000000000000')))), -- 14 unknown dependency
    t.spec('new-4')                                               -- 15 created
) AS batch \gset
SELECT t.fingerprint() AS before \gset
SET ROLE cm_client;
CREATE TEMP TABLE r AS SELECT * FROM workload_create_many(:'batch');
RESET ROLE;
SELECT ord, outcome, code, workload_id IS NOT NULL AS has_id, document->>'state' AS state,
       document->'input'->>'n' AS n, document->>'next_attempt_at' AS due
FROM r ORDER BY ord;
-- a document is the one workload_create (and workload_list) returns; an existing item's is the workload as it is
SELECT count(*) AS documents, bool_and(r.document = (SELECT d FROM workload_list('acme', 'billing') d
    WHERE d->>'workload_id' = r.workload_id)) AS documents_match FROM r WHERE outcome <> 'refused';
SELECT (SELECT workload_id FROM r WHERE ord = 2) = :'old' AS replay_is_old,
       (SELECT workload_id FROM r WHERE ord = 4) = (SELECT workload_id FROM r WHERE ord = 1) AS replay_is_item_1;

-- only the created ones were written: their rows, specs, queue rows and two events each
SELECT s.input->>'n' AS n, w.state, q.available_at AS queued_until,
       (SELECT string_agg(e.event_type || ' by ' || e.actor || ' as ' || e.db_role, ', ' ORDER BY e.sequence)
        FROM workload.event_log e WHERE e.workload_id = w.workload_id) AS events
FROM workload.workloads w JOIN workload.specs s ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
LEFT JOIN workload.queue q ON q.tenant_id = w.tenant_id AND q.seq = w.seq
ORDER BY w.seq;
SELECT count(*) AS globex_rows FROM workload.specs WHERE tenant_id = 'globex';

-- a worker claims them like any other: best first, the later one not yet
SET ROLE cm_worker;
SELECT input->>'n' AS n, attempt FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10) ORDER BY 1;
RESET ROLE;

-- the same batch again: every good item is now existing, nothing is written
SELECT t.fingerprint() AS before \gset
SET ROLE cm_client;
SELECT ord, outcome, code FROM workload_create_many(:'batch') WHERE ord IN (1, 4, 11, 15) OR code IS NOT NULL ORDER BY ord;
RESET ROLE;
SELECT t.fingerprint() = :'before' AS unchanged;

-- a dependency on an item of the same batch (its id follows the SPEC formula): the
-- items before it are written first, so it is found
SELECT 'workload_' || left(encode(digest('acme:billing:parent:r1:' ||
    encode(digest('{"n": "parent"}'::jsonb::text, 'sha256'), 'hex'), 'sha256'), 'hex'), 24) AS parent \gset
SELECT ord, outcome, workload_id = :'parent' AS is_parent, document->>'state' AS state,
       document->'dependencies'->0->>'workload_id' = :'parent' AS depends_on_parent
FROM workload_create_many(jsonb_build_array(
    t.spec('parent'),
    t.spec('child', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object(
        'workload_id', :'parent')))))) ORDER BY ord;
SELECT e.event_type, e.to_state FROM workload.event_log e
WHERE e.workload_id = (SELECT s.workload_id FROM workload.specs s WHERE s.idempotency_key = 'child')
ORDER BY e.sequence;

-- refused as a whole, nothing written: NULL, not an array, empty, more than 1000 items,
-- more than 16 MiB
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_create_many(NULL);
\echo :SQLSTATE
SELECT * FROM workload_create_many('{"specs": []}');
\echo :SQLSTATE
SELECT * FROM workload_create_many('"x"');
\echo :SQLSTATE
SELECT * FROM workload_create_many('[]');
\echo :SQLSTATE
SELECT * FROM workload_create_many((SELECT jsonb_agg(t.spec('many-' || g)) FROM generate_series(1, 1001) g));
\echo :SQLSTATE
SELECT * FROM workload_create_many(jsonb_build_array(t.spec('huge', jsonb_build_object('input',
    (SELECT jsonb_agg(repeat('x', 1000)) FROM generate_series(1, 20000))))));
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- a deep item, or one too large, is refused on its own
SELECT ord, outcome, code FROM workload_create_many(jsonb_build_array(
    t.spec('ok'),
    t.spec('deep', jsonb_build_object('input', (repeat('[', 100) || repeat(']', 100))::jsonb)),
    t.spec('big', jsonb_build_object('input', repeat('x', 3000000))))) ORDER BY ord;
SELECT idempotency_key FROM workload.specs WHERE idempotency_key IN ('ok', 'deep', 'big');
-- exactly 1000 are taken
SELECT outcome, count(*) FROM workload_create_many((SELECT jsonb_agg(t.spec('many-' || g)) FROM generate_series(1, 1000) g))
GROUP BY outcome;

-- a role without workload_client may not call it; one that is a member of no tenant creates nothing
SELECT jsonb_build_array(t.spec('x1'), t.spec('new-1')) AS two \gset
SELECT t.fingerprint() AS before \gset
SET ROLE cm_worker;
SELECT * FROM workload_create_many(:'two');
\echo :SQLSTATE
RESET ROLE;
SELECT workload_remove_tenant_member('cm_client', 'acme', 'billing');
SELECT t.fingerprint() AS before \gset
SET ROLE cm_client;
SELECT ord, outcome, code, workload_id, document FROM workload_create_many(:'two');
RESET ROLE;
SELECT t.fingerprint() = :'before' AS unchanged;

DROP OWNED BY cm_client, cm_worker;
DROP ROLE cm_client; DROP ROLE cm_worker;
