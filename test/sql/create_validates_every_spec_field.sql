-- workload_create refuses every malformed spec field with WORKLOAD_INVALID and changes nothing; a full valid spec is echoed back (SPEC sections 2, 4 "Creating and reading").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- one valid workload exists, so "changed nothing" is about a non-empty store
SELECT t.create('seed') IS NOT NULL AS seeded;
SELECT t.fingerprint() AS before \gset

-- not a spec at all
SELECT workload_create(NULL);
\echo :SQLSTATE
SELECT workload_create('[]');
\echo :SQLSTATE
SELECT workload_create('"a spec"');
\echo :SQLSTATE
SELECT workload_create('42');
\echo :SQLSTATE
SELECT workload_create('null');
\echo :SQLSTATE
SELECT workload_create('{}');
\echo :SQLSTATE

-- each required field missing
SELECT workload_create(t.spec('m') - 'tenant_id');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'application_id');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'environment');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'definition_id');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'definition_revision');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'trigger');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'input');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'requested_by');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'authorization_snapshot');
\echo :SQLSTATE
SELECT workload_create(t.spec('m') - 'idempotency_key');
\echo :SQLSTATE
-- a JSON null is as missing as an absent key
SELECT workload_create(t.spec('m', '{"tenant_id": null}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"idempotency_key": null}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"requested_by": null}'));
\echo :SQLSTATE
-- inside the subject and the snapshot
SELECT workload_create(t.spec('m', '{"requested_by": {"kind": "agent"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"requested_by": {"id": "planner"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('authorization_snapshot', t.grant() - 'grant')));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('authorization_snapshot', t.grant() - 'signature')));
\echo :SQLSTATE

-- wrong types
SELECT workload_create(t.spec('m', '{"tenant_id": 7}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"application_id": ["billing"]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"environment": true}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"definition_revision": 1}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"idempotency_key": {"k": 1}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"priority": "5"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"capability_snapshot": {"render": true}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"capability_snapshot": ["render", 7]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"connection_scopes": "db:read"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"connection_scopes": [null]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"requested_by": "agent:planner"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"authorization_snapshot": []}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": "default"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"timeouts": [1000]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"governing_snapshots": "abc"}'));
\echo :SQLSTATE

-- blank ids, and an id over 256 bytes
SELECT workload_create(t.spec('m', '{"tenant_id": ""}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"application_id": "   "}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"definition_id": "\t\n"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"trigger": ""}'));
\echo :SQLSTATE
SELECT workload_create(t.spec(''));
\echo :SQLSTATE
SELECT workload_create(t.spec('   '));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"requested_by": {"kind": "agent", "id": " "}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"capability_snapshot": ["render", ""]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec(repeat('k', 257)));
\echo :SQLSTATE
-- the limit is bytes: 129 two-byte characters are 258 bytes
SELECT workload_create(t.spec(repeat('é', 129)));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{}', repeat('t', 257)));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('capability_snapshot', jsonb_build_array(repeat('c', 257)))));
\echo :SQLSTATE

-- unknown fields, at the top and inside every nested object
SELECT workload_create(t.spec('m', '{"tenant": "acme"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"requested_by": {"kind": "agent", "id": "planner", "name": "P"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": {"max_attempts": 2, "jitter": true}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"timeouts": {"queue_ms": 1000, "lease_ms": 1000}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"dependencies": [{"workload_id": "workload_x", "optional": true}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"governing_snapshots": {"proposal_digest": "a", "manifest_digest": "b", "registry_digest": "c", "policy_digest": "d", "authorization_digest": "e", "extra_digest": "f"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('authorization_snapshot', t.grant() || '{"algorithm": "none"}')));
\echo :SQLSTATE

-- requested_by.kind is a closed set
SELECT workload_create(t.spec('m', '{"requested_by": {"kind": "robot", "id": "planner"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"requested_by": {"kind": "Agent", "id": "planner"}}'));
\echo :SQLSTATE

-- priority is an int
SELECT workload_create(t.spec('m', '{"priority": 1.5}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"priority": 3000000000}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"priority": -3000000000}'));
\echo :SQLSTATE

-- retry_policy
SELECT workload_create(t.spec('m', '{"retry_policy": {"max_attempts": 0}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": {"max_attempts": 2.5}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": {"initial_delay_ms": -1}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": {"initial_delay_ms": 5000, "max_delay_ms": 4999}}'));
\echo :SQLSTATE
-- a default counts too: max_delay_ms below the default initial_delay_ms (1000)
SELECT workload_create(t.spec('m', '{"retry_policy": {"max_delay_ms": 999}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": {"backoff": "linear"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"retry_policy": {"retry_on": "timeout"}}'));
\echo :SQLSTATE

-- timeouts
SELECT workload_create(t.spec('m', '{"timeouts": {"queue_ms": 0}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"timeouts": {"execution_ms": -1000}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"timeouts": {"heartbeat_ms": "30s"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"timeouts": {"overall_ms": 1.5}}'));
\echo :SQLSTATE

-- dependencies
SELECT workload_create(t.spec('m', '{"dependencies": {"workload_id": "workload_x"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"dependencies": ["workload_x"]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"dependencies": [{"workload_id": "workload_x"}, {"workload_id": "workload_x", "required_state": "FAILED"}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"dependencies": [{"workload_id": "workload_x", "required_state": "DONE"}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"dependencies": [{"workload_id": "workload_x", "required_state": "succeeded"}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"dependencies": [{"required_state": "SUCCEEDED"}]}'));
\echo :SQLSTATE

-- completion_criteria
SELECT workload_create(t.spec('m', '{"completion_criteria": {"kind": "result_count", "min": 1}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": ["result_count"]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_sum", "min": 1}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"min": 1}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_count", "min": 0}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_count", "min": 3, "max": 2}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_count", "max": 2}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_count", "min": 1, "exact": true}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_contains", "field": "", "equals": 1}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('completion_criteria', jsonb_build_array(jsonb_build_object('kind', 'result_contains', 'field', repeat('f', 129), 'equals', 1)))));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_contains", "field": "status"}]}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_contains", "field": "status", "equals": "ok", "min": 1}]}'));
\echo :SQLSTATE
-- one bad criterion after a good one is still refused
SELECT workload_create(t.spec('m', '{"completion_criteria": [{"kind": "result_count", "min": 1}, {"kind": "result_count", "min": -1}]}'));
\echo :SQLSTATE

-- governing_snapshots: all five digests, none blank
SELECT workload_create(t.spec('m', '{"governing_snapshots": {"proposal_digest": "a", "manifest_digest": "b", "registry_digest": "c", "policy_digest": "d"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"governing_snapshots": {"proposal_digest": "a", "manifest_digest": "b", "registry_digest": "c", "policy_digest": "d", "authorization_digest": "  "}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', '{"governing_snapshots": {"proposal_digest": "a", "manifest_digest": "b", "registry_digest": "c", "policy_digest": 4, "authorization_digest": "e"}}'));
\echo :SQLSTATE

-- input: at most 1 MiB and 64 levels deep
SELECT workload_create(t.spec('m', jsonb_build_object('input', jsonb_build_object('blob', repeat('x', 1024 * 1024)))));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('input', (repeat('[', 65) || repeat(']', 65))::jsonb)));
\echo :SQLSTATE
SELECT workload_create(t.spec('m', jsonb_build_object('input', (repeat('{"a":', 64) || '[]' || repeat('}', 64))::jsonb)));
\echo :SQLSTATE

-- capability_snapshot: at most 256 items
SELECT workload_create(t.spec('m', jsonb_build_object('capability_snapshot',
    (SELECT jsonb_agg('cap' || i) FROM generate_series(1, 257) i))));
\echo :SQLSTATE

-- none of the refusals above wrote anything
SELECT t.fingerprint() = :'before' AS unchanged;

-- the limits themselves are accepted: 64 levels, 256 bytes, 256 capabilities, priority 2.0
SELECT workload_create(t.spec('deep', jsonb_build_object('input', (repeat('[', 64) || repeat(']', 64))::jsonb)))->>'state' AS deep_64;
SELECT workload_create(t.spec(repeat('k', 256)))->>'state' AS key_256_bytes;
SELECT workload_create(t.spec(repeat('é', 128)))->>'state' AS key_256_bytes_multibyte;
SELECT jsonb_array_length(workload_create(t.spec('caps', jsonb_build_object('capability_snapshot',
    (SELECT jsonb_agg('cap' || i) FROM generate_series(1, 256) i))))->'capability_snapshot') AS caps_256;
SELECT d->'priority' AS priority, jsonb_typeof(d->'priority') AS type
FROM workload_create(t.spec('prio', '{"priority": 2.0}')) d;
SELECT (workload_create(t.spec('prio-min', '{"priority": -2147483648}'))->'priority') AS int_min,
       (workload_create(t.spec('prio-max', '{"priority": 2147483647}'))->'priority') AS int_max;

-- defaults of a minimal spec
SELECT k AS field, d -> k AS value
FROM workload_create(t.spec('minimal')) d,
     unnest(ARRAY['priority', 'capability_snapshot', 'connection_scopes', 'retry_policy', 'timeouts',
                  'dependencies', 'completion_criteria', 'governing_snapshots']) k
ORDER BY k;

-- a valid spec with every optional field set
SELECT t.create('dep') AS dep \gset
SELECT t.spec('full', jsonb_build_object(
    'input', '{"invoice": 42, "lines": [{"sku": "A-1", "qty": 2}], "note": "ünïcode"}'::jsonb,
    'capability_snapshot', '["render", "pdf"]'::jsonb,
    'connection_scopes', '["db:read", "s3:invoices"]'::jsonb,
    'priority', 7,
    'retry_policy', '{"max_attempts": 5}'::jsonb,
    'timeouts', '{"queue_ms": 60000, "claim_ms": 5000, "execution_ms": 600000, "heartbeat_ms": 30000, "overall_ms": 3600000}'::jsonb,
    'dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'dep', 'required_state', 'SUCCEEDED')),
    'completion_criteria', '[{"kind": "result_count", "min": 1, "max": 10}, {"kind": "result_contains", "field": "status", "equals": "ok"}]'::jsonb,
    'governing_snapshots', '{"proposal_digest": "p1", "manifest_digest": "m1", "registry_digest": "r1", "policy_digest": "po1", "authorization_digest": "a1"}'::jsonb)) AS full_spec \gset
SELECT workload_create(:'full_spec') AS doc \gset
-- every spec field comes back as given (the authorization snapshot without its signature: a
-- signed grant is a bearer credential, and no read path hands one out) ...
SELECT k AS field, (:'doc'::jsonb) -> k = CASE k WHEN 'authorization_snapshot'
           THEN ((:'full_spec'::jsonb) -> k) - 'signature' ELSE (:'full_spec'::jsonb) -> k END AS echoed
FROM jsonb_object_keys(:'full_spec'::jsonb) k WHERE k <> 'retry_policy' ORDER BY k;
-- ... and retry_policy keeps max_attempts 5 with the other defaults filled in
SELECT (:'doc'::jsonb) -> 'retry_policy' = '{"max_attempts": 5, "initial_delay_ms": 1000, "max_delay_ms": 300000,
    "backoff": "exponential", "retry_on": ["timeout", "worker_failure", "transient_connection"]}' AS retry_policy_defaults_filled;
SELECT (:'doc'::jsonb) ->> 'state' AS state, (:'doc'::jsonb) -> 'contract_version' AS contract_version;
-- a fixed backoff and an own retry_on are kept as given
SELECT d -> 'retry_policy' AS retry_policy
FROM workload_create(t.spec('fixed', '{"retry_policy": {"backoff": "fixed", "initial_delay_ms": 0, "max_delay_ms": 0, "retry_on": ["timeout"]}}')) d;
