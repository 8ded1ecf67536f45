-- The result document workload_complete and workload_complete_many answer with is written in jsonb's binary form directly: for every kind of output and artifacts it is the document workload_get reads back from the stored result, byte for byte as text, equal as jsonb, and every path into it answers as in the output given (SPEC section 4, workload_complete).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- outputs of every shape: scalars, empty and nested containers, more than 32
-- keys and elements (jsonb stores every 32nd child's offset), numbers of every
-- size, text beyond ASCII; artifacts none, some and more than 32
CREATE TEMP TABLE o (n int PRIMARY KEY, output jsonb, artifacts text[]);
INSERT INTO o VALUES
 (1, '{}', '{}'), (2, '[]', '{}'), (3, '{"ok": true}', '{s3://a}'),
 (4, '"a string"', '{}'), (5, '42', '{}'), (6, '-1.5e300', '{}'), (7, 'true', '{}'),
 (8, 'false', '{}'), (9, 'null', '{}'), (10, '[1, "two", null, {"x": []}, 2.50]', '{}'),
 (11, (SELECT jsonb_object_agg('k' || g, g) FROM generate_series(1, 40) g), '{}'),
 (12, (SELECT jsonb_agg(g) FROM generate_series(1, 40) g),
      (SELECT array_agg('s3://bucket/' || g) FROM generate_series(1, 40) g)),
 (13, '{"é ü": "日本語", "emoji": "\ud83d\ude00"}', '{s3://é}'),
 (14, '123456789012345678901234567890.1234567890', '{}'),
 (15, (SELECT jsonb_build_object('big', repeat('x', 5000), 'n', 0.1)), '{a,b,c}'),
 (16, '{"a": {"b": {"c": {"d": {"e": [[[[1]]]]}}}}}', '{}');
SELECT count(t.create('r' || n)) FROM o;
CREATE TEMP TABLE c AS
SELECT x.*, i.idempotency_key AS k FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 16, start => true) x
JOIN workload.specs i USING (workload_id);
SELECT count(*) AS claimed FROM c;
-- fifteen in one batch, the last alone; each answer as long as jsonb's own
-- encoding of its text (compared as it is answered, before a table stores it)
CREATE TEMP TABLE done AS
SELECT m.workload_id, m.outcome, m.result,
       pg_column_size(m.result) = pg_column_size(m.result::text::jsonb) AS same_size
FROM workload_complete_many('w1', (
    SELECT jsonb_agg(jsonb_build_object('workload_id', c.workload_id, 'claim_id', c.claim_id,
        'fencing_token', c.fencing_token, 'result_id', 'res-' || o.n, 'output', o.output,
        'artifacts', to_jsonb(o.artifacts), 'schema_version', 1 + o.n % 3))
    FROM c JOIN o ON c.k = 'r' || o.n WHERE o.n < 16)) m;
INSERT INTO done
SELECT c.workload_id, 'completed', r, pg_column_size(r) = pg_column_size(r::text::jsonb)
FROM c JOIN o ON c.k = 'r16' AND o.n = 16,
     LATERAL workload_complete(c.workload_id, c.claim_id, 'w1', c.fencing_token,
                               'res-16', o.output, o.artifacts, 2) r;
SELECT outcome, count(*), bool_and(same_size) AS same_size FROM done GROUP BY 1 ORDER BY 1;
-- each answer is the stored result's document: as text, as jsonb, and along every path
SELECT o.n,
       d.result::text = (workload_get(d.workload_id) -> 'result')::text AS same_text,
       d.result = workload_get(d.workload_id) -> 'result' AS same_jsonb,
       d.result -> 'output' = o.output AS output,
       (SELECT array_agg(a ORDER BY i) FROM jsonb_array_elements_text(d.result -> 'artifacts')
            WITH ORDINALITY e(a, i)) IS NOT DISTINCT FROM nullif(o.artifacts, '{}') AS artifacts,
       d.result #>> '{provenance,claim_id}' = c.claim_id AND
       (d.result #>> '{provenance,fencing_token}')::bigint = c.fencing_token AND
       d.result #>> '{provenance,worker_id}' = 'w1' AND
       (d.result #>> '{provenance,attempt}')::int = 1 AS provenance,
       d.result ->> 'result_id' = 'res-' || o.n AND d.result ->> 'workload_id' = d.workload_id AND
       d.result ->> 'outcome' = 'succeeded' AND
       d.result ->> 'output_hash' = encode(digest(o.output::text, 'sha256'), 'hex') AS fields,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(d.result) k) =
       ARRAY['artifacts', 'created_at', 'outcome', 'output', 'output_hash', 'provenance',
             'result_id', 'schema_version', 'workload_id'] AS keys,
       d.result @> jsonb_build_object('output', o.output) AS contains_output,
       jsonb_typeof(d.result -> 'output') AS output_type
FROM done d JOIN c USING (workload_id) JOIN o ON c.k = 'r' || o.n
ORDER BY o.n;
-- and it takes jsonb's functions as any other value does
SELECT o.n, d.result #> '{output}' = d.result -> 'output' AS path,
       jsonb_path_query_first(d.result, '$.provenance.fencing_token')::text::bigint = c.fencing_token AS jsonpath,
       (d.result || '{"x": 1}'::jsonb) - 'x' = d.result AS concatenated,
       d.result::text::jsonb = d.result AS reparsed
FROM done d JOIN c USING (workload_id) JOIN o ON c.k = 'r' || o.n
ORDER BY o.n;
