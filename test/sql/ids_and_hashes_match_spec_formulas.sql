-- workload_id, input_hash, claim_id, attempt_id, checkpoint_id, state_hash, output_hash and workload_channel follow the SPEC formulas, checked with pgcrypto (SPEC section 2).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- unicode tenant, application and key; an input whose text form differs from how it was typed
-- (jsonb sorts keys by length, then bytes, and drops duplicate keys and whitespace)
\set input '{"zeta": {"β": [1, 2.50, "日本"], "a": null}, "a": "ünï", "key": "x", "key": "y", "emoji": "😀\\u00e9"}'
SELECT :'input'::jsonb AS input_as_stored;
SELECT t.spec('ключ-1', jsonb_build_object('input', :'input'::jsonb, 'definition_revision', 'rév-2'),
              'tenant-é', 'app-日本') AS spec \gset
SELECT workload_create(:'spec') AS doc \gset
SELECT (:'doc'::jsonb)->>'workload_id' AS id \gset

-- input_hash = hex sha256 of the input's jsonb text form, not of the text as typed
SELECT (:'doc'::jsonb)->>'input_hash' = encode(digest((:'input'::jsonb)::text, 'sha256'), 'hex') AS input_hash_ok,
       (:'doc'::jsonb)->>'input_hash' <> encode(digest(:'input', 'sha256'), 'hex') AS not_of_typed_text,
       (:'doc'::jsonb)->>'input_hash' ~ '^[0-9a-f]{64}$' AS lower_hex_64;
-- workload_id = 'workload_' || 24 hex of sha256(tenant:app:key:revision:input_hash)
SELECT :'id' = 'workload_' || left(encode(digest(
           'tenant-é' || ':' || 'app-日本' || ':' || 'ключ-1' || ':' || 'rév-2' || ':' ||
           encode(digest((:'input'::jsonb)::text, 'sha256'), 'hex'), 'sha256'), 'hex'), 24) AS workload_id_ok,
       length(:'id') AS id_length;
-- the same material in another tenant is another id
SELECT workload_create(t.spec('ключ-1', jsonb_build_object('input', :'input'::jsonb, 'definition_revision', 'rév-2'),
           'tenant-e', 'app-日本'))->>'workload_id' <> :'id' AS other_tenant_other_id;

-- claim_id = 'claim_' || 20 hex of sha256(workload_id:fencing_token:worker_id)
SELECT claim_id, fencing_token FROM workload_claim('wörker-1', '{}', 'tenant-é', 'app-日本') \gset
SELECT :'claim_id' = 'claim_' || left(encode(digest(:'id' || ':' || :fencing_token || ':' || 'wörker-1', 'sha256'), 'hex'), 20)
       AS claim_id_ok, :fencing_token AS fencing_token, length(:'claim_id') AS claim_id_length;
SELECT workload_start(:'id', :'claim_id', 'wörker-1', :fencing_token);

-- checkpoint state_hash = hex sha256 of the state's jsonb text form
\set state '{"page": 3, "seen": ["ä", "日本"], "cursor": {"b": 2, "a": 1}}'
SELECT c->>'state_hash' = encode(digest((:'state'::jsonb)::text, 'sha256'), 'hex') AS returned_state_hash_ok,
       c->>'checkpoint_id' = 'checkpoint_' || :'id' || '_1' AS returned_checkpoint_id_ok
FROM workload_checkpoint(:'id', :'claim_id', 'wörker-1', :fencing_token, :'state') c;
SELECT workload_checkpoint(:'id', :'claim_id', 'wörker-1', :fencing_token, '{"page": 4}') IS NOT NULL AS second_checkpoint;

-- result output_hash = hex sha256 of the output's jsonb text form
\set output '[{"status": "ok", "total": 10.0, "name": "Ålesund"}, {"status": "ok"}]'
SELECT r->>'output_hash' = encode(digest((:'output'::jsonb)::text, 'sha256'), 'hex') AS returned_output_hash_ok
FROM workload_complete(:'id', :'claim_id', 'wörker-1', :fencing_token, 'result-ü-1', :'output') r;

-- the same ids and hashes, as workload_get shows them
SELECT workload_get(:'id') AS full \gset
SELECT a->>'attempt_id' = 'attempt_' || :'id' || '_' || (a->>'attempt') AS attempt_id_ok,
       a->>'attempt_id' = 'attempt_' || :'id' || '_1' AS first_attempt,
       a->>'claim_id' = :'claim_id' AS claim_id_ok
FROM jsonb_array_elements((:'full'::jsonb)->'attempts') a;
SELECT c->'sequence' AS sequence,
       c->>'checkpoint_id' = 'checkpoint_' || :'id' || '_' || (c->>'sequence') AS checkpoint_id_ok,
       c->>'state_hash' = encode(digest((c->'state')::text, 'sha256'), 'hex') AS state_hash_ok
FROM jsonb_array_elements((:'full'::jsonb)->'checkpoints') c ORDER BY (c->>'sequence')::int;
SELECT ((:'full'::jsonb)->'checkpoints'->0->>'state_hash') = encode(digest((:'state'::jsonb)::text, 'sha256'), 'hex') AS first_state_hash_ok,
       ((:'full'::jsonb)->'result'->>'output_hash') = encode(digest((:'output'::jsonb)::text, 'sha256'), 'hex') AS output_hash_ok,
       ((:'full'::jsonb)->>'input_hash') = encode(digest(((:'full'::jsonb)->'input')::text, 'sha256'), 'hex') AS input_hash_ok;
-- and as the tables hold them
SELECT (SELECT bool_and(state_hash = encode(digest(state::text, 'sha256'), 'hex')) FROM workload.checkpoints) AS checkpoints_ok,
       (SELECT bool_and(output_hash = encode(digest(output::text, 'sha256'), 'hex')) FROM workload.results) AS results_ok,
       (SELECT bool_and(input_hash = encode(digest(input::text, 'sha256'), 'hex')) FROM workload.specs) AS specs_ok;

-- a second attempt: attempt_id ends in _2 and the claim id uses fencing token 2
SELECT t.create('again') AS id2 \gset
SELECT claim_id, fencing_token FROM workload_claim('w-a', '{}', 'acme', 'billing', start => true) \gset
SELECT workload_fail(:'id2', :'claim_id', 'w-a', :fencing_token, 'worker_failure', 'crashed');
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT claim_id, fencing_token FROM workload_claim('w-b', '{}', 'acme', 'billing') \gset
SELECT a->'attempt' AS attempt, a->'fencing_token' AS fencing_token, a->>'worker_id' AS worker,
       a->>'attempt_id' = 'attempt_' || :'id2' || '_' || (a->>'attempt') AS attempt_id_ok,
       a->>'claim_id' = 'claim_' || left(encode(digest(:'id2' || ':' || (a->>'fencing_token') || ':' || (a->>'worker_id'), 'sha256'), 'hex'), 20) AS claim_id_ok
FROM jsonb_array_elements(workload_get(:'id2')->'attempts') a ORDER BY (a->>'attempt')::int;
SELECT :fencing_token AS current_token,
       workload_get(:'id2')->'current_claim'->>'claim_id' = :'claim_id' AS current_claim_ok;

-- workload_channel = 'workload_' || 32 hex of hmac(tenant:app, channel_secret, 'sha256') (since 1.2)
SELECT workload_channel('tenant-é', 'app-日本') = 'workload_' || left(encode(hmac('tenant-é:app-日本', (SELECT secret FROM workload.channel_secret), 'sha256'), 'hex'), 32) AS channel_ok,
       workload_channel('acme', 'billing') = 'workload_' || left(encode(hmac('acme:billing', (SELECT secret FROM workload.channel_secret), 'sha256'), 'hex'), 32) AS channel_ascii_ok,
       length(workload_channel('acme', 'billing')) AS channel_length,
       workload_channel('acme', 'billing') <> workload_channel('acme', 'billing2') AS per_application;
SELECT workload_channel(NULL, 'billing');
\echo :SQLSTATE
