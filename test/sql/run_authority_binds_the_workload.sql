-- The server signs a run authority for each workload; workload_execution_context re-verifies it and the snapshot, and answers AUTHORIZATION_DENIED once either is revoked, expired, signed by a retired key, copied from another workload or widened (SPEC section 5).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('a', '{"capability_snapshot": ["render"]}') AS a, t.create('b') AS b \gset
-- the run authority: subject the workload, requester and role as attributes, effective scopes, a day long
SELECT ra #>> '{grant,subject,kind}' AS subject_kind, ra #>> '{grant,subject,id}' = :'a' AS bound,
       ra #> '{grant,constraints,subject_attributes}' AS attributes,
       ra #> '{grant,capabilities}' AS capabilities, ra #>> '{grant,parent_grant}' AS parent,
       ra #>> '{grant,issued_at}' AS issued_at, ra #>> '{grant,expires_at}' AS expires_at,
       ra ? 'signature' AS bearer_signature_stored, ra ? 'signature_sha256' AS digest_stored,
       workload_verify_grant(ra) AS verifies_as_a_bearer_grant
FROM (SELECT run_authority AS ra FROM workload.spec_authority a JOIN workload.specs s USING (tenant_id, workload_seq)
      WHERE s.workload_id = :'a') s;

CREATE FUNCTION pg_temp.claim(id text) RETURNS TABLE(claim_id text, fencing_token bigint) LANGUAGE sql AS $$
    SELECT c.claim_id, c.fencing_token FROM workload_claim_id(id, 'w1', ARRAY['render']) c $$;
SELECT claim_id AS a_claim, fencing_token AS a_tok FROM pg_temp.claim(:'a') \gset
SELECT claim_id AS b_claim, fencing_token AS b_tok FROM pg_temp.claim(:'b') \gset
SELECT workload_execution_context(:'a', :'a_claim', 'w1', :a_tok) -> 'capabilities' AS a_capabilities;

-- a superuser swaps in b's run authority (behind the API's back): refused
CREATE FUNCTION pg_temp.authority_of(id text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT a.run_authority FROM workload.spec_authority a JOIN workload.specs s USING (tenant_id, workload_seq)
    WHERE s.workload_id = id $$;
ALTER TABLE workload.spec_authority DISABLE TRIGGER spec_authority_raw_write_trg;
UPDATE workload.spec_authority a SET run_authority = pg_temp.authority_of(:'b')
FROM workload.specs s WHERE s.workload_id = :'a' AND (a.tenant_id, a.workload_seq) = (s.tenant_id, s.workload_seq);
SELECT workload_execution_context(:'a', :'a_claim', 'w1', :a_tok);
\echo :SQLSTATE
-- widens a's own run authority after signing: refused
UPDATE workload.spec_authority a SET run_authority = jsonb_set(
    pg_temp.authority_of(:'b'), '{grant,subject,id}', to_jsonb(:'a'::text))
FROM workload.specs s WHERE s.workload_id = :'a' AND (a.tenant_id, a.workload_seq) = (s.tenant_id, s.workload_seq);
SELECT workload_execution_context(:'a', :'a_claim', 'w1', :a_tok);
\echo :SQLSTATE
ALTER TABLE workload.spec_authority ENABLE ALWAYS TRIGGER spec_authority_raw_write_trg;

-- b is fine until its grant is revoked
SELECT workload_execution_context(:'b', :'b_claim', 'w1', :b_tok) ->> 'attempt_id' IS NOT NULL AS b_ok;
SELECT workload_revoke_grant('grant-acme-planner');
SELECT workload_execution_context(:'b', :'b_claim', 'w1', :b_tok);
\echo :SQLSTATE

-- a run authority past its ttl: a minute-long one, used after 61 seconds
SET workload.run_authority_ttl = '60s';
SELECT workload_create(t.spec('c', jsonb_build_object('authorization_snapshot', t.grant(subject_id => 'carol'),
    'requested_by', '{"kind": "agent", "id": "carol"}'::jsonb))) ->> 'workload_id' AS c \gset
RESET workload.run_authority_ttl;
SELECT claim_id AS c_claim, fencing_token AS c_tok FROM workload_claim_id(:'c', 'w1', '{}', '5 minutes') \gset
SET workload.clock_override = '2026-01-01 00:00:59+00';
SELECT workload_execution_context(:'c', :'c_claim', 'w1', :c_tok) ->> 'attempt' AS within_ttl;
SET workload.clock_override = '2026-01-01 00:01:01+00';
SELECT workload_execution_context(:'c', :'c_claim', 'w1', :c_tok);
\echo :SQLSTATE

-- the key that signed a workload's snapshot and run authority is retired: refused
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT workload_create(t.spec('d', jsonb_build_object('authorization_snapshot', t.grant(subject_id => 'dave'),
    'requested_by', '{"kind": "agent", "id": "dave"}'::jsonb))) ->> 'workload_id' AS d \gset
SELECT claim_id AS d_claim, fencing_token AS d_tok FROM workload_claim_id(:'d', 'w1', '{}') \gset
SELECT workload_execution_context(:'d', :'d_claim', 'w1', :d_tok) ->> 'attempt' AS before_retire;
SELECT key_id AS first_key FROM workload.signing_keys \gset
SELECT workload_rotate_signing_key() IS NOT NULL AS rotated;
SELECT workload_retire_signing_key(:'first_key');
SELECT workload_execution_context(:'d', :'d_claim', 'w1', :d_tok);
\echo :SQLSTATE
-- none of the refusals wrote anything
SELECT count(*) AS attempts_open FROM workload.attempt_log WHERE finished_at IS NULL;
