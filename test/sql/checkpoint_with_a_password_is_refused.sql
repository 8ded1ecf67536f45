-- A checkpoint whose state carries a password, at any depth and in any case, is refused and changes nothing (SPEC sections 4 and 5, workload_checkpoint).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'checkpoint-tests') $$;


SELECT pg_temp.make('cp') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT t.fingerprint() AS before \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"password": "hunter2"}');
\echo :SQLSTATE
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"a": {"b": [{"Password": "x"}]}}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- still RUNNING, no checkpoint stored, the sequence where it was
SELECT d->>'state' AS state, d->'checkpoint_sequence' AS checkpoint_sequence,
       jsonb_array_length(d->'checkpoints') AS checkpoints
FROM workload_get(:'id') d;
-- the refusal does not end the run: the same fence checkpoints a clean state as sequence 1
SELECT sequence, state_hash = encode(digest('{"page": 1}'::jsonb::text, 'sha256'), 'hex') AS hash_ok
FROM jsonb_to_record(workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"page": 1}'))
     AS c(sequence int, state_hash text);
-- and a refused one after it leaves CHECKPOINTED at sequence 1
SELECT t.fingerprint() AS before \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"a": {"b": [{"Password": "x"}]}}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT d->>'state' AS state, d->'checkpoint_sequence' AS checkpoint_sequence,
       jsonb_array_length(d->'checkpoints') AS checkpoints
FROM workload_get(:'id') d;
