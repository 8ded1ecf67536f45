-- The same (tenant, application, idempotency_key) returns the same workload unchanged; a different input or revision under that key is WORKLOAD_IDEMPOTENCY_CONFLICT; a new workload records CREATED then READY (SPEC section 4, "Creating and reading").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- a new workload: CREATED then READY, one row, one spec
SELECT workload_create(t.spec('order-1')) AS first \gset
SELECT (:'first'::jsonb)->>'workload_id' AS id \gset
SELECT (:'first'::jsonb)->>'state' AS state;
SELECT sequence - min(sequence) OVER () AS n, event_type, from_state, to_state, actor
FROM workload_history(:'id') ORDER BY sequence;

-- the same spec again, later: the same workload, the document unchanged, nothing recorded
SET workload.clock_override = '2026-01-01 00:05:00+00';
SELECT t.fingerprint() AS before \gset
SELECT workload_create(t.spec('order-1')) AS second \gset
SELECT (:'second'::jsonb)->>'workload_id' = :'id' AS same_id,
       :'second'::jsonb = :'first'::jsonb AS same_document,
       t.fingerprint() = :'before' AS unchanged;
SELECT (SELECT count(*) FROM workload.workloads) AS workloads,
       (SELECT count(*) FROM workload.specs) AS specs,
       (SELECT count(*) FILTER (WHERE event_type = 'workload.created') FROM workload.event_log) AS created_events,
       (SELECT count(*) FILTER (WHERE event_type = 'workload.ready') FROM workload.event_log) AS ready_events;

-- even after the workload moved on, the key returns it as it is now, unchanged by the call
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT t.fingerprint() AS before \gset
SELECT d->>'workload_id' = :'id' AS same_id, d->>'state' AS state, d->'fencing_token' AS fencing_token
FROM workload_create(t.spec('order-1')) d;
SELECT t.fingerprint() = :'before' AS unchanged;

-- the same key with another input, or another definition_revision, is a conflict
SELECT workload_create(t.spec('order-1', '{"input": {"n": "order-2"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('order-1', '{"input": {"n": "order-1", "extra": true}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('order-1', '{"definition_revision": "r2"}'));
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- fields outside the id (priority, definition_id, ...) do not make another workload either
SELECT d->>'workload_id' = :'id' AS same_id, d->'priority' AS priority, d->>'definition_id' AS definition_id
FROM workload_create(t.spec('order-1', '{"priority": 9, "definition_id": "invoice.other"}')) d;
SELECT t.fingerprint() = :'before' AS unchanged;

-- the same key in another tenant or another application is another workload
SELECT workload_create(t.spec('order-1', '{}', 'globex', 'billing')) AS other_tenant \gset
SELECT workload_create(t.spec('order-1', '{}', 'acme', 'shipping')) AS other_app \gset
SELECT (:'other_tenant'::jsonb)->>'workload_id' <> :'id' AS new_id_other_tenant,
       (:'other_app'::jsonb)->>'workload_id' <> :'id' AS new_id_other_app,
       (:'other_tenant'::jsonb)->>'workload_id' <> (:'other_app'::jsonb)->>'workload_id' AS distinct_ids,
       (:'other_tenant'::jsonb)->>'state' AS tenant_state, (:'other_app'::jsonb)->>'state' AS app_state;
SELECT tenant_id, application_id, idempotency_key, count(*) AS rows
FROM workload.specs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT w.tenant_id, w.application_id, e.event_type, e.from_state, e.to_state
FROM workload.event_log e JOIN workload.workloads w USING (workload_id)
ORDER BY e.sequence;

-- NULL and blank keys are refused, not treated as "no key"
SELECT workload_create(t.spec('order-1') - 'idempotency_key');
\echo :SQLSTATE
SELECT workload_create(t.spec(' '));
\echo :SQLSTATE
