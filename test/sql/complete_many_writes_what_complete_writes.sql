-- workload_complete_many decides a batch with a fixed number of statements, but what it writes for each item is exactly what workload_complete writes for it: the row, the attempt, the events (with their evidence, actor and role, in workload order), the result with its artifacts and provenance, and the cancellation of dependents that can no longer run. A batch that names a workload or a result id twice is decided item after item (SPEC section 4).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- two identical sets: "one-*" completed call by call, "many-*" in one batch.
-- Workload 1 of each set has a dependent that waits for it to fail (it will
-- be cancelled by the success) and one that waits for it to succeed.
SELECT t.create(s || '-' || g, jsonb_build_object('priority', g)) IS NOT NULL AS created
FROM unnest(ARRAY['one', 'many']) s, generate_series(1, 3) g;
SELECT t.create(s || '-needs-failure', jsonb_build_object('dependencies',
           jsonb_build_array(jsonb_build_object('workload_id', t.create(s || '-1'), 'required_state', 'FAILED'))))
       IS NOT NULL AS created,
       t.create(s || '-needs-success', jsonb_build_object('dependencies',
           jsonb_build_array(jsonb_build_object('workload_id', t.create(s || '-1'), 'required_state', 'SUCCEEDED'))))
       IS NOT NULL AS also
FROM unnest(ARRAY['one', 'many']) s;
CREATE TEMP TABLE c AS
SELECT x.*, i.idempotency_key AS k
FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10, start => true) x
JOIN workload.specs i USING (workload_id);
SELECT count(*) AS claimed, count(*) FILTER (WHERE k LIKE '%needs%') AS dependents_claimed FROM c;

-- the same outputs, artifacts and schema versions for the two sets
CREATE TEMP TABLE req AS
SELECT c.*, jsonb_build_object('n', g, 'list', jsonb_build_array(1, 'two', NULL)) AS output,
       CASE g WHEN 2 THEN ARRAY['s3://bucket/a', 's3://bucket/b'] ELSE '{}'::text[] END AS artifacts,
       CASE g WHEN 3 THEN 2 ELSE 1 END AS schema_version,
       'r-' || replace(c.k, 'many-', 'one-') AS base
FROM c, LATERAL (SELECT split_part(c.k, '-', 2)::int AS g) x;

SELECT k, workload_complete(workload_id, claim_id, 'w1', fencing_token, 'one-r' || k, output,
                            artifacts, schema_version) ->> 'outcome' AS outcome
FROM req WHERE k LIKE 'one-%' ORDER BY workload_id;
CREATE TEMP TABLE many_out AS
SELECT * FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
        'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
        'result_id', 'many-r' || k, 'output', output, 'artifacts', to_jsonb(artifacts),
        'schema_version', schema_version))
     FROM req WHERE k LIKE 'many-%'));
-- each answer is the stored result's document, as workload_get shows it
SELECT (SELECT k FROM req WHERE req.workload_id = m.workload_id) AS k, outcome, code,
       result ->> 'artifacts' AS artifacts, result ->> 'schema_version' AS schema_version,
       result = workload_get(m.workload_id) -> 'result' AS answer_is_the_stored_result
FROM many_out m
ORDER BY k;

-- everything written for a workload, with its own ids (workload, claim, result,
-- its set's prefix) replaced, so the two sets can be compared
CREATE FUNCTION t.written(prefix text, key text) RETURNS text LANGUAGE sql AS $$
    WITH w AS (SELECT w.* FROM workload.workloads w JOIN workload.specs s USING (workload_id)
               WHERE s.idempotency_key = prefix || key),
    doc AS (
        SELECT jsonb_build_object(
            'row', to_jsonb(w) - 'seq' - 'tenant_id' - 'application_id',
            'attempts', (SELECT jsonb_agg(to_jsonb(a) - 'attempt_id' ORDER BY a.attempt_number)
                         FROM workload.attempt_log a WHERE a.workload_id = w.workload_id),
            'events', (SELECT jsonb_agg(to_jsonb(e) - 'sequence' ORDER BY e.sequence)
                       FROM workload.event_log e WHERE e.workload_id = w.workload_id),
            'results', (SELECT jsonb_agg(to_jsonb(r)) FROM workload.results r
                        WHERE r.workload_id = w.workload_id))::text AS t,
        w.workload_id,
        (SELECT string_agg(a.claim_id, ',') FROM workload.attempt_log a
         WHERE a.workload_id = w.workload_id) AS claims
        FROM w)
    SELECT replace(replace(replace(replace(t, workload_id, '<id>'), coalesce(claims, '<none>'), '<claim>'),
                   (SELECT s.workload_id FROM workload.specs s WHERE s.idempotency_key = prefix || '1'),
                   '<workload 1>'), prefix, '<set>')
    FROM doc
$$;
SELECT key, t.written('one-', key) = t.written('many-', key) AS same,
       t.written('one-', key) IS NOT NULL AS found
FROM unnest(ARRAY['1', '2', '3', 'needs-failure', 'needs-success']) key ORDER BY key;
-- and the row and events they are, for one of them
SELECT w.state, w.claim_id IS NULL AS released, w.state IN ('SUCCEEDED', 'CANCELLED', 'DEAD_LETTER') AS finished,
       (SELECT string_agg(e.event_type || ':' || e.to_state, ' ' ORDER BY e.sequence)
        FROM workload.event_log e WHERE e.workload_id = w.workload_id) AS events
FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE s.idempotency_key IN ('many-1', 'many-needs-failure', 'many-needs-success')
ORDER BY s.idempotency_key;
-- the batch's events are in workload order, one after another
SELECT array_agg(e.workload_id ORDER BY e.sequence) = array_agg(e.workload_id ORDER BY e.workload_id, e.sequence)
       AS in_workload_order
FROM workload.event_log e JOIN req ON req.workload_id = e.workload_id
WHERE req.k LIKE 'many-%' AND e.to_state = 'SUCCEEDED';

-- a batch that names one workload twice: the first item completes, the second,
-- with the same result id from the same claim, gets the stored result back
SELECT t.create('twice-' || g) IS NOT NULL FROM generate_series(1, 3) g;
CREATE TEMP TABLE c2 AS
SELECT x.*, i.idempotency_key AS k
FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10, start => true) x
JOIN workload.specs i USING (workload_id) WHERE i.idempotency_key LIKE 'twice-%';
SELECT k, outcome, code, result ->> 'result_id' AS result_id
FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
        'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
        'result_id', 'same-result', 'output', '{}'::jsonb))
     FROM c2, generate_series(1, 2) rep WHERE k = 'twice-1')) m
JOIN c2 USING (workload_id);
-- one result id for two running workloads: the first (in workload order)
-- stores it, the second is refused and stays as it was
SELECT outcome, code
FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
        'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
        'result_id', 'shared-result', 'output', '{}'::jsonb))
     FROM c2 WHERE k IN ('twice-2', 'twice-3'))) m
ORDER BY outcome;
SELECT w.state, (SELECT string_agg(r.result_id, ',') FROM workload.results r
                 WHERE r.workload_id = w.workload_id) AS results
FROM c2 JOIN workload.workloads w USING (workload_id) ORDER BY w.workload_id;

-- a worker role acting in its own tenant: an item of another tenant in its
-- batch is not found (and not touched), the rest complete
SELECT t.create('own') IS NOT NULL, t.create('foreign', '{}', 'other', 'billing') IS NOT NULL;
SELECT workload_add_tenant_member('workload_worker', 'acme', 'billing');
-- its own work it claimed itself (a claim belongs to the role that took it); the other tenant's
-- was claimed by someone else
CREATE TEMP TABLE c3 AS
SELECT * FROM workload_claim('w1', '{}', 'other', 'billing', max_items => 10, start => true);
GRANT ALL ON c3 TO workload_worker;
SET ROLE workload_worker;
INSERT INTO c3 SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10, start => true);
SELECT outcome, code
FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
        'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
        'result_id', 'r-' || workload_id, 'output', '{}'::jsonb)) FROM c3)) m
ORDER BY outcome, code;
RESET ROLE;
SELECT s.idempotency_key, w.state FROM c3 JOIN workload.workloads w USING (workload_id)
JOIN workload.specs s USING (workload_id) ORDER BY 1;
