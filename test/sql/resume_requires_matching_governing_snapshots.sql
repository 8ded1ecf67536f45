-- A workload created with governing_snapshots resumes only for a run that expects exactly those snapshots; anything else is WORKLOAD_SNAPSHOT_MISMATCH and nothing is returned (SPEC section 7, authenticated checkpoints).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

\set snapshots '{"proposal_digest": "p1", "manifest_digest": "m1", "registry_digest": "r1", "policy_digest": "po1", "authorization_digest": "a1"}'
SELECT t.create('governed', jsonb_build_object('governing_snapshots', :'snapshots'::jsonb, 'priority', 1)) AS id \gset
SELECT t.create('ungoverned') AS plain \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"step": 1}') ->> 'sequence' AS sequence;

-- the same snapshots (key order does not matter): the checkpoint comes back
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token,
    '{"authorization_digest": "a1", "policy_digest": "po1", "registry_digest": "r1", "manifest_digest": "m1", "proposal_digest": "p1"}'
) -> 'checkpoint' -> 'state' AS state;

-- a changed digest, a missing one, an extra field, no expectation, not an object: refused
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token, :'snapshots'::jsonb || '{"policy_digest": "po2"}');
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token, :'snapshots'::jsonb - 'manifest_digest');
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token, :'snapshots'::jsonb || '{"extra": "x"}');
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token, '"p1"');
\echo :SQLSTATE

-- a workload without governing snapshots resumes without expectations, and refuses a run that expects some
SELECT claim_id AS c2, fencing_token AS f2 FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour') \gset
SELECT workload_resume(:'plain', :'c2', 'w2', :f2) ->> 'checkpoint' AS checkpoint;
SELECT workload_resume(:'plain', :'c2', 'w2', :f2, :'snapshots');
\echo :SQLSTATE
