-- workload_get returns the whole document, workload_list lists one tenant and application by priority then age, workload_history lists the events in order; unknown ids are WORKLOAD_NOT_FOUND, NULLs WORKLOAD_INVALID (SPEC section 4, "Creating and reading").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET timezone = 'UTC';

-- the keys SPEC gives the document: the spec's fields, the state fields, and what workload_get adds
CREATE TEMP TABLE spec_keys(k text, get_only boolean);
INSERT INTO spec_keys VALUES
  ('tenant_id', false), ('application_id', false), ('environment', false), ('definition_id', false),
  ('definition_revision', false), ('trigger', false), ('input', false), ('requested_by', false),
  ('authorization_snapshot', false), ('capability_snapshot', false), ('connection_scopes', false),
  ('priority', false), ('idempotency_key', false), ('retry_policy', false), ('timeouts', false),
  ('dependencies', false), ('completion_criteria', false), ('governing_snapshots', false),
  ('not_before', false), ('workload_id', false), ('contract_version', false), ('input_hash', false), ('state', false),
  ('created_at', false), ('updated_at', false), ('attempt_count', false), ('retry_count', false),
  ('next_attempt_at', false), ('last_failure', false), ('fencing_token', false),
  ('current_claim', false), ('progress', false),
  ('attempts', true), ('checkpoints', true), ('result', true), ('events', true);

-- a full run: claim, start, heartbeat with progress, checkpoint, complete
SELECT t.create('run', '{"priority": 3, "capability_snapshot": ["render"], "timeouts": {"overall_ms": 600000}}') AS id \gset
SET workload.clock_override = '2026-01-01 00:00:10+00';
SELECT claim_id, fencing_token FROM workload_claim('w1', '{render}', 'acme', 'billing', '60 seconds') \gset
SET workload.clock_override = '2026-01-01 00:00:11+00';
SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);
SET workload.clock_override = '2026-01-01 00:00:20+00';
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '60 seconds', '{"pages": 2, "of": 5}')->'cancellation_requested' AS cancel;
SET workload.clock_override = '2026-01-01 00:00:30+00';
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"page": 2}')->'sequence' AS checkpoint;
SET workload.clock_override = '2026-01-01 00:00:40+00';
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'res-1', '[{"page": 1}, {"page": 2}]')->>'result_id' AS result;
SELECT workload_get(:'id') AS doc \gset

-- every key SPEC lists is there; the only one beyond them is checkpoint_sequence
SELECT k AS missing FROM spec_keys EXCEPT SELECT jsonb_object_keys(:'doc'::jsonb) ORDER BY 1;
SELECT jsonb_object_keys(:'doc'::jsonb) AS beyond_spec EXCEPT SELECT k FROM spec_keys ORDER BY 1;

-- the state fields after the run
SELECT key, value FROM jsonb_each(:'doc'::jsonb)
WHERE key IN ('state', 'created_at', 'updated_at', 'attempt_count', 'retry_count', 'next_attempt_at',
              'last_failure', 'fencing_token', 'current_claim', 'progress', 'contract_version', 'priority')
ORDER BY key;
-- attempts, checkpoints (with their state), the result and the events
SELECT jsonb_pretty(((:'doc'::jsonb)->'attempts'->0) - 'attempt_id' - 'claim_id') AS attempt,
       jsonb_array_length((:'doc'::jsonb)->'attempts') AS attempts;
SELECT c->'sequence' AS sequence, c->'attempt' AS attempt, c->'fencing_token' AS token, c->'state' AS state,
       c->>'created_at' AS created_at, c->>'checkpoint_id' IS NOT NULL AS has_id, c->>'state_hash' IS NOT NULL AS has_hash
FROM jsonb_array_elements((:'doc'::jsonb)->'checkpoints') c;
SELECT (:'doc'::jsonb)->'result'->'output' AS output, (:'doc'::jsonb)->'result'->>'result_id' AS result_id,
       (:'doc'::jsonb)->'result'->'provenance'->'fencing_token' AS provenance_token,
       (:'doc'::jsonb)->'result'->'provenance'->>'claim_id' = :'claim_id' AS provenance_claim;
SELECT e->>'event_type' AS event_type, e->>'to_state' AS to_state, e->>'actor' AS actor, e->>'at' AS at
FROM jsonb_array_elements((:'doc'::jsonb)->'events') e ORDER BY (e->>'sequence')::bigint;
-- the document's events are workload_history's, one for one
SELECT (SELECT jsonb_agg(e->'sequence' ORDER BY (e->>'sequence')::bigint) FROM jsonb_array_elements((:'doc'::jsonb)->'events') e)
     = (SELECT jsonb_agg(to_jsonb(sequence) ORDER BY sequence) FROM workload_history(:'id')) AS same_events;

-- workload_history: in sequence order, with from, to, actor, time and evidence
SELECT sequence > lag(sequence) OVER (ORDER BY sequence) AS increasing, event_type, from_state, to_state, actor, at,
       evidence
FROM workload_history(:'id') ORDER BY sequence;

-- a freshly created workload: no attempts, checkpoints, result; two events
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT d->'attempts' AS attempts, d->'checkpoints' AS checkpoints, d->'result' AS result,
       jsonb_array_length(d->'events') AS events, d->'current_claim' AS current_claim, d->'progress' AS progress
FROM workload_get(t.create('fresh')) d;

-- workload_list: priority descending, then created_at (then creation order)
SET workload.clock_override = '2026-01-01 01:00:00+00';
SELECT t.create('l-a', '{"priority": 0}', 'acme', 'reports') IS NOT NULL AS a,
       t.create('l-b', '{"priority": 5}', 'acme', 'reports') IS NOT NULL AS b,
       t.create('l-f', '{"priority": 0}', 'acme', 'reports') IS NOT NULL AS f;
SET workload.clock_override = '2026-01-01 00:30:00+00';
SELECT t.create('l-c', '{"priority": 5}', 'acme', 'reports') IS NOT NULL AS c_earlier,
       t.create('l-d', '{"priority": -1}', 'acme', 'reports') IS NOT NULL AS d_earlier;
SET workload.clock_override = '2026-01-01 02:00:00+00';
SELECT t.create('l-e', '{"priority": 0}', 'acme', 'reports') IS NOT NULL AS e_later;
SELECT d->>'idempotency_key' AS key, d->'priority' AS priority, d->>'created_at' AS created_at, d->>'state' AS state
FROM workload_list('acme', 'reports') WITH ORDINALITY AS l(d, n) ORDER BY n;
-- the listed documents have exactly the document keys, without the workload_get extras
SELECT count(*) AS docs,
       bool_and((SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(d) k WHERE k <> 'checkpoint_sequence')
              = (SELECT array_agg(k ORDER BY k) FROM spec_keys WHERE NOT get_only)) AS document_keys
FROM workload_list('acme', 'reports') d;
-- filtered by state
SELECT workload_id IS NOT NULL AS claimed FROM workload_claim('w2', '{}', 'acme', 'reports');
SELECT d->>'idempotency_key' AS key, d->>'state' AS state
FROM workload_list('acme', 'reports', 'CLAIMED') WITH ORDINALITY AS l(d, n) ORDER BY n;
SELECT d->>'idempotency_key' AS key
FROM workload_list('acme', 'reports', 'READY') WITH ORDINALITY AS l(d, n) ORDER BY n;
SELECT count(*) AS succeeded FROM workload_list('acme', 'reports', 'SUCCEEDED');
-- lim
SELECT d->>'idempotency_key' AS key
FROM workload_list('acme', 'reports', lim => 2) WITH ORDINALITY AS l(d, n) ORDER BY n;
SELECT count(*) AS lim_1 FROM workload_list('acme', 'reports', NULL, 1);
SELECT count(*) AS lim_10000 FROM workload_list('acme', 'reports', NULL, 10000);
-- only that tenant and application
SELECT count(*) AS billing FROM workload_list('acme', 'billing');
SELECT count(*) AS unknown_tenant FROM workload_list('nobody', 'reports');
SELECT count(*) AS unknown_app FROM workload_list('acme', 'nothing');
-- refusals
SELECT * FROM workload_list('acme', 'reports', NULL, 0);
\echo :SQLSTATE
SELECT * FROM workload_list('acme', 'reports', NULL, 10001);
\echo :SQLSTATE
SELECT * FROM workload_list('acme', 'reports', NULL, -1);
\echo :SQLSTATE
SELECT * FROM workload_list('acme', 'reports', NULL, NULL);
\echo :SQLSTATE
SELECT * FROM workload_list(NULL, 'reports');
\echo :SQLSTATE
SELECT * FROM workload_list('acme', NULL);
\echo :SQLSTATE
SELECT * FROM workload_list('', 'reports');
\echo :SQLSTATE

-- unknown ids and NULLs
SELECT workload_get('workload_000000000000000000000000');
\echo :SQLSTATE
SELECT * FROM workload_history('workload_000000000000000000000000');
\echo :SQLSTATE
SELECT workload_get(NULL);
\echo :SQLSTATE
SELECT * FROM workload_history(NULL);
\echo :SQLSTATE
SELECT workload_get('  ');
\echo :SQLSTATE
SELECT * FROM workload_history('');
\echo :SQLSTATE
