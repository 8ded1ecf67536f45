-- workload_resume gives the run holding the claim its latest checkpoint, after checking its state hash and its HMAC tag (checkpoint_id:workload_id:sequence:state_hash under the server key); it writes nothing (SPEC section 7, authenticated checkpoints).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('resumable') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 minute', start => true) \gset
-- no checkpoint yet, no wait yet
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);

-- three checkpoints: resume returns the third, with its state
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, jsonb_build_object('rows', n)) ->> 'sequence' AS sequence
FROM generate_series(100, 300, 100) n;
SELECT r ->> 'workload_id' = :'id' AS same_workload, r ->> 'attempt' AS attempt, r ->> 'fencing_token' AS fencing_token,
       r -> 'checkpoint' ->> 'sequence' AS sequence, r -> 'checkpoint' -> 'state' AS state,
       r -> 'checkpoint' ->> 'checkpoint_id' = 'checkpoint_' || :'id' || '_3' AS checkpoint_id_ok
FROM workload_resume(:'id', :'claim_id', 'w1', :fencing_token) r;

-- every stored tag is the HMAC-SHA256 the SPEC names, under the key the row names (checked with pgcrypto)
SELECT c.sequence,
       c.state_hash = encode(digest(c.state::text, 'sha256'), 'hex') AS state_hash_ok,
       c.tag = encode(hmac(convert_to(c.checkpoint_id || ':' || c.workload_id || ':' || c.sequence || ':' || c.state_hash, 'UTF8'),
                           k.secret, 'sha256'), 'hex') AS tag_ok
FROM workload.checkpoints c JOIN workload.signing_keys k USING (key_id) ORDER BY c.sequence;
-- the checkpoint document shows the tag and its key
SELECT (workload_get(:'id') -> 'checkpoints' -> 2) ?& ARRAY['tag', 'key_id', 'state_hash'] AS shows_tag;

-- after a key rotation, new checkpoints are signed with the new key and old ones still verify
SELECT workload_rotate_signing_key() AS new_key \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"rows": 400}') ->> 'key_id' = :'new_key' AS signed_with_new_key;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token) -> 'checkpoint' -> 'state' AS state;
SELECT count(DISTINCT key_id) AS keys_used FROM workload.checkpoints;

-- resume writes nothing
SELECT t.fingerprint() AS before \gset
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token) -> 'checkpoint' ->> 'sequence' AS sequence;
SELECT t.fingerprint() = :'before' AS unchanged;

-- it needs the current fence: NULLs, a stale token, another worker, an expired lease
SELECT workload_resume(NULL, :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w1', NULL);
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token - 1);
\echo :SQLSTATE
SELECT workload_resume(:'id', :'claim_id', 'w2', :fencing_token);
\echo :SQLSTATE
SELECT workload_resume('workload_000000000000000000000000', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- the next attempt resumes from the same checkpoint
SET workload.clock_override = '2026-01-01 00:01:01+00';
SELECT workload_recover_expired() = :'id' AS recovered;
SET workload.clock_override = '2026-01-01 00:01:02+00';
SELECT claim_id, fencing_token, attempt, checkpoint_sequence FROM workload_claim('w2', '{}', 'acme', 'billing', '1 minute') \gset
SELECT :attempt AS attempt, :checkpoint_sequence AS checkpoint_sequence,
       workload_resume(:'id', :'claim_id', 'w2', :fencing_token) -> 'checkpoint' -> 'state' AS state;

-- retiring the key that signed the latest checkpoint makes it unverifiable: nothing is returned
SELECT workload_retire_signing_key(:'new_key');
SELECT workload_resume(:'id', :'claim_id', 'w2', :fencing_token);
\echo :SQLSTATE
