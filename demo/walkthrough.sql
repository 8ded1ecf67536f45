-- demo/walkthrough.sql: a workload's life, in SQL, on a throwaway cluster.
-- Run by demo/run.sh; each step prints what a client or a worker sees.
\set ON_ERROR_STOP off
\set VERBOSITY terse
\pset format aligned
\pset footer off
CREATE EXTENSION workload CASCADE;

\echo
\echo '== 1. An admin signs a grant; a client creates a workload under it'
SELECT workload_create(jsonb_build_object(
    'tenant_id', 'acme', 'application_id', 'billing', 'environment', 'demo',
    'definition_id', 'invoice.render', 'definition_revision', 'r1', 'trigger', 'api',
    'input', jsonb_build_object('invoice', 1042),
    'requested_by', jsonb_build_object('kind', 'agent', 'id', 'planner'),
    'authorization_snapshot', workload_sign_grant(jsonb_build_object('contract_version', 1, 'id', 'g-1',
            'issuer', jsonb_build_object('kind', 'service', 'id', 'iam'),
            'subject', jsonb_build_object('kind', 'agent', 'id', 'planner'),
            'tenant_id', 'acme', 'application_id', 'billing',
            'capabilities', jsonb_build_array('pdf'), 'resources', '[]'::jsonb,
            'constraints', jsonb_build_object('subject_attributes', '{}'::jsonb),
            'issued_at', '2020-01-01T00:00:00Z', 'expires_at', '2100-01-01T00:00:00Z',
            'parent_grant', NULL, 'revision', 1, 'status', 'active')),
    'capability_snapshot', jsonb_build_array('pdf'),
    'retry_policy', jsonb_build_object('max_attempts', 2, 'initial_delay_ms', 0),
    'idempotency_key', 'invoice-1042')) ->> 'workload_id' AS id \gset
SELECT :'id' AS workload_id, workload_get(:'id') ->> 'state' AS state;

\echo
\echo '== 2. Worker A claims it with a 2-second lease and starts it'
SELECT claim_id AS a_claim, fencing_token AS a_token
FROM workload_claim('worker-a', ARRAY['pdf'], 'acme', 'billing', lease => '2 seconds') \gset
SELECT :'a_claim' AS claim_id, :a_token AS fencing_token;
SELECT workload_start(:'id', :'a_claim', 'worker-a', :a_token);
SELECT workload_checkpoint(:'id', :'a_claim', 'worker-a', :a_token, '{"page": 1}') ->> 'sequence' AS checkpoint;

\echo
\echo '== 3. Worker A goes silent; its lease runs out and recovery puts the workload back'
SELECT pg_sleep(2.5);
SELECT * FROM workload_recover_expired();
SELECT workload_get(:'id') ->> 'state' AS state;

\echo
\echo '== 4. Worker B claims it: a new claim, a larger fencing token, the last checkpoint'
SELECT claim_id AS b_claim, fencing_token AS b_token, checkpoint_sequence
FROM workload_claim('worker-b', ARRAY['pdf'], 'acme', 'billing', start => true) \gset
SELECT :'b_claim' AS claim_id, :b_token AS fencing_token, :checkpoint_sequence AS resumes_after_checkpoint;

\echo
\echo '== 5. Worker A wakes up and tries to complete: the fence refuses it'
SELECT workload_complete(:'id', :'a_claim', 'worker-a', :a_token, 'result-a', '{"pages": 3}');

\echo
\echo '== 6. Worker B completes; a retried request with the same result id is safe'
SELECT workload_complete(:'id', :'b_claim', 'worker-b', :b_token, 'result-b', '{"pages": 3}') ->> 'outcome' AS outcome;
SELECT workload_complete(:'id', :'b_claim', 'worker-b', :b_token, 'result-b', '{"pages": 3}') ->> 'outcome' AS replayed;

\echo
\echo '== 7. The audit trail'
SELECT sequence, event_type, from_state, to_state, actor, evidence ->> 'fencing_token' AS token
FROM workload_history(:'id') ORDER BY sequence;

\echo
\echo '== 8. A raw UPDATE cannot move a workload behind the API'
UPDATE workload.workloads SET state = 'READY' WHERE workload_id = :'id';
SELECT workload_get(:'id') ->> 'state' AS state;
