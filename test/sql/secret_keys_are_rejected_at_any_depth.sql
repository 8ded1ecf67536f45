-- A secret-looking key or string anywhere in input, checkpoint state, output, progress or error text is refused with WORKLOAD_SECRET_REJECTED, changes nothing, and the message never repeats the secret (SPEC section 5, "Secrets").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- t.leaks(sql, secret): runs sql, which must be refused; true when the error's
-- message, detail or hint contains the secret
CREATE OR REPLACE FUNCTION t.leaks(sql text, secret text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    m text; d text; h text;
BEGIN
    EXECUTE sql;
    RAISE EXCEPTION 'not refused: %', sql;
EXCEPTION WHEN SQLSTATE 'WL010' THEN
    GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
    RETURN strpos(concat_ws(' ', m, d, h), secret) > 0;
END
$$;

SELECT t.create('seed') IS NOT NULL AS seeded;
SELECT t.fingerprint() AS before \gset

-- secret keys at the top level, in any case
SELECT workload_create(t.spec('s1', '{"input": {"password": "hunter2"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('s2', '{"input": {"Secret": "x"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('s3', '{"input": {"TOKEN": "x"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('s4', '{"input": {"api_key": 12345}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('s5', '{"input": {"private_key": null}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('s6', '{"input": {"ApI_KeY": {}}}'));
\echo :SQLSTATE

-- ten levels down, through objects and arrays
SELECT workload_create(t.spec('s7', jsonb_build_object('input',
    (repeat('{"x": [', 5) || '{"ok": 1, "password": "hunter2"}' || repeat(']}', 5))::jsonb)));
\echo :SQLSTATE
SELECT workload_create(t.spec('s8', jsonb_build_object('input',
    (repeat('[{"a": 1}, ', 10) || '{"Token": "t"}' || repeat(']', 10))::jsonb)));
\echo :SQLSTATE

-- secret-looking strings: values, array elements, deep, and as keys
SELECT workload_create(t.spec('v1', jsonb_build_object('input', jsonb_build_object('pem',
    E'-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('v2', '{"input": {"openai": "sk-proj-abc123"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('v3', '{"input": {"items": ["a", "b", "fdb_live_9f8e7d"]}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('v4', jsonb_build_object('input',
    (repeat('{"x": [', 5) || '"sk-deep"' || repeat(']}', 5))::jsonb)));
\echo :SQLSTATE
SELECT workload_create(t.spec('v5', '{"input": "sk-the-whole-input"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('v6', '{"input": {"sk-live-as-a-key": 1}}'));
\echo :SQLSTATE

-- nothing was written by any of these
SELECT t.fingerprint() = :'before' AS unchanged;

-- the message names the place, never the secret value
SELECT t.leaks($$SELECT workload_create(t.spec('l1', '{"input": {"password": "hunter2-value"}}'))$$, 'hunter2-value') AS password_leaks,
       t.leaks($$SELECT workload_create(t.spec('l2', '{"input": {"k": "sk-proj-abc123"}}'))$$, 'sk-proj-abc123') AS sk_leaks,
       t.leaks($$SELECT workload_create(t.spec('l3', '{"input": {"k": ["fdb_live_9f8e7d"]}}'))$$, 'fdb_live_9f8e7d') AS fdb_leaks,
       t.leaks($$SELECT workload_create(t.spec('l4', '{"input": {"k": "-----BEGIN PRIVATE KEY-----MIIEvQ"}}'))$$, 'MIIEvQ') AS pem_leaks,
       t.leaks($$SELECT workload_create(t.spec('l5', '{"input": {"sk-as-key-value": 1}}'))$$, 'sk-as-key-value') AS key_leaks;

-- harmless look-alikes are accepted
SELECT workload_create(t.spec('h1', '{"input": {"db": "secret://vault/x", "password_hint": "first pet", "tokens": 3,
    "my_secret_count": 1, "note": "prefix sk- in the middle", "pem": "BEGIN PUBLIC KEY", "task": "sk"}}'))->>'state' AS harmless;

-- the same rules for what a worker sends back
SELECT t.create('run', '{"retry_policy": {"max_attempts": 1}}') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'id', 'w1', '{}') \gset
SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);
SELECT t.fingerprint() AS before \gset

-- checkpoint state
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"cursor": 3, "auth": {"token": "abc"}}');
\echo :SQLSTATE
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"steps": [[["sk-in-state"]]]}');
\echo :SQLSTATE
-- output
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'r1', '[{"id": 1, "PASSWORD": "x"}]');
\echo :SQLSTATE
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'r1', '{"key": "fdb_live_abc"}');
\echo :SQLSTATE
-- progress
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds', '{"done": 10, "private_key": "x"}');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds',
    jsonb_build_object('log', E'-----BEGIN PRIVATE KEY-----\nAAAA'));
\echo :SQLSTATE
-- error text
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'sk-live-0123456789');
\echo :SQLSTATE
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', E'dumped: -----BEGIN PRIVATE KEY-----\nAAAA');
\echo :SQLSTATE

SELECT t.fingerprint() = :'before' AS unchanged, workload_get(:'id')->>'state' AS state;
SELECT t.leaks(format($$SELECT workload_checkpoint(%L, %L, 'w1', %s, '{"s": "sk-checkpoint-value"}')$$, :'id', :'claim_id', :fencing_token), 'sk-checkpoint-value') AS state_leaks,
       t.leaks(format($$SELECT workload_complete(%L, %L, 'w1', %s, 'r1', '{"secret": "output-value"}')$$, :'id', :'claim_id', :fencing_token), 'output-value') AS output_leaks,
       t.leaks(format($$SELECT workload_heartbeat(%L, %L, 'w1', %s, '30 seconds', '["fdb_live_progress"]')$$, :'id', :'claim_id', :fencing_token), 'fdb_live_progress') AS progress_leaks,
       t.leaks(format($$SELECT workload_fail(%L, %L, 'w1', %s, 'worker_failure', 'sk-error-value')$$, :'id', :'claim_id', :fencing_token), 'sk-error-value') AS error_leaks;

-- harmless worker payloads go through
SELECT c->'sequence' AS sequence FROM workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"ref": "secret://vault/db", "password_hint": "x"}') c;
SELECT h->'cancellation_requested' AS cancellation_requested FROM workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds', '{"tokens_used": 12}') h;
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'login failed; see secret://vault/db') AS state;
SELECT workload_get(:'id')->'last_failure'->>'error' AS error, workload_get(:'id')->'progress' AS progress;
