-- Grants are HMAC-signed under server keys: a grant widened, re-addressed or copied after signing, signed under a retired key, or revoked does not verify and cannot create work; rotation keeps earlier grants valid until their key is retired (SPEC section 5).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- one key exists after CREATE EXTENSION: 32 bytes, not retired
SELECT count(*) AS keys, bool_and(length(secret) = 32) AS thirty_two_bytes, bool_and(retired_at IS NULL) AS active
FROM workload.signing_keys;

-- the signature is pgcrypto's HMAC-SHA256 of the grant's text under that key
SELECT t.grant(caps => ARRAY['render']) AS signed \gset
SELECT (:'signed'::jsonb ->> 'signature') = encode(hmac(convert_to((:'signed'::jsonb -> 'grant')::text, 'UTF8'), k.secret, 'sha256'), 'hex') AS pgcrypto_agrees,
       (:'signed'::jsonb ->> 'key_id') = k.key_id AS names_its_key
FROM workload.signing_keys k;
SELECT workload_verify_grant(:'signed') AS verifies;

-- an attacker widens the capabilities to ["*"] after signing
SELECT workload_verify_grant(jsonb_set(:'signed', '{grant,capabilities}', '["*"]')) AS widened_verifies;
SELECT workload_create(t.spec('w1', jsonb_build_object('capability_snapshot', '["admin"]'::jsonb,
    'authorization_snapshot', jsonb_set(:'signed', '{grant,capabilities}', '["*"]'))));
\echo :SQLSTATE
-- swaps the principal to someone else
SELECT workload_create(t.spec('w2', jsonb_build_object('requested_by', '{"kind": "agent", "id": "mallory"}'::jsonb,
    'authorization_snapshot', jsonb_set(:'signed', '{grant,subject,id}', '"mallory"'))));
\echo :SQLSTATE
-- copies a valid grant of tenant "acme" into a spec for tenant "globex"
SELECT workload_create(t.spec('w3', jsonb_build_object('authorization_snapshot', :'signed'::jsonb), 'globex'));
\echo :SQLSTATE
-- and re-addresses it to globex after signing
SELECT workload_create(t.spec('w4', jsonb_build_object('authorization_snapshot',
    jsonb_set(:'signed', '{grant,tenant_id}', '"globex"')), 'globex'));
\echo :SQLSTATE
-- forges a signature, or names a key that does not exist
SELECT workload_create(t.spec('w5', jsonb_build_object('authorization_snapshot',
    jsonb_set(:'signed', '{signature}', to_jsonb(repeat('0', 64))))));
\echo :SQLSTATE
SELECT workload_create(t.spec('w6', jsonb_build_object('authorization_snapshot',
    jsonb_set(:'signed', '{key_id}', '"key_0000000000000000"'))));
\echo :SQLSTATE
-- sends the grant without its envelope, or with an extra field
SELECT workload_create(t.spec('w7', jsonb_build_object('authorization_snapshot', :'signed'::jsonb -> 'grant')));
\echo :SQLSTATE
SELECT workload_create(t.spec('w8', jsonb_build_object('authorization_snapshot', :'signed'::jsonb || '{"note": 1}')));
\echo :SQLSTATE
SELECT count(*) AS workloads FROM workload.workloads;

-- rotation: a new key signs from now on, the old one still verifies
SELECT :'signed'::jsonb ->> 'key_id' AS old_key \gset
SELECT workload_rotate_signing_key() AS new_key \gset
SELECT (t.grant() ->> 'key_id') = :'new_key' AS new_grants_use_new_key,
       workload_verify_grant(:'signed') AS old_grant_still_verifies;
SELECT workload_create(t.spec('r1', jsonb_build_object('capability_snapshot', '["render"]'::jsonb,
    'authorization_snapshot', :'signed'::jsonb))) ->> 'state' AS created_under_old_key;
-- retiring the old key: what it signed stops verifying, new grants still work
SELECT workload_retire_signing_key(:'old_key');
SELECT workload_verify_grant(:'signed') AS old_grant_verifies;
SELECT workload_create(t.spec('r2', jsonb_build_object('capability_snapshot', '["render"]'::jsonb,
    'authorization_snapshot', :'signed'::jsonb)));
\echo :SQLSTATE
SELECT workload_create(t.spec('r3')) ->> 'state' AS created_under_new_key;
-- retiring again, an unknown key, or the last active key is refused (key ids are
-- random, so these show the message without the detail that names them)
\set VERBOSITY terse
SELECT workload_retire_signing_key(:'old_key');
\echo :SQLSTATE
SELECT workload_retire_signing_key('key_nope');
\echo :SQLSTATE
SELECT workload_retire_signing_key(:'new_key');
\echo :SQLSTATE
\set VERBOSITY default
SELECT workload_retire_signing_key(NULL);
\echo :SQLSTATE

-- revocation: a revoked grant stops verifying and creating, by id, immediately
SELECT t.grant(subject_id => 'revokee') AS revokee \gset
SELECT workload_verify_grant(:'revokee') AS before_revoke;
SELECT workload_revoke_grant(:'revokee'::jsonb #>> '{grant,id}');
SELECT workload_revoke_grant(:'revokee'::jsonb #>> '{grant,id}');   -- idempotent
SELECT workload_verify_grant(:'revokee') AS after_revoke;
SELECT workload_create(t.spec('v1', jsonb_build_object('requested_by', '{"kind": "agent", "id": "revokee"}'::jsonb,
    'authorization_snapshot', :'revokee'::jsonb)));
\echo :SQLSTATE

-- verify_grant answers false, never an error, for anything that is not a good signed grant
SELECT workload_verify_grant('{}') AS empty, workload_verify_grant('[1]') AS array_,
       workload_verify_grant('"text"') AS string_, workload_verify_grant(t.grant(status => 'suspended')) AS suspended,
       workload_verify_grant(t.grant(expires => '2025-01-01T00:00:00Z')) AS expired;
SELECT workload_verify_grant(NULL);
\echo :SQLSTATE

-- sign_grant refuses a grant that is not of the documented shape
SELECT workload_sign_grant(NULL);
\echo :SQLSTATE
SELECT workload_sign_grant('[]');
\echo :SQLSTATE
SELECT workload_sign_grant(t.unsigned_grant() || '{"extra": true}');
\echo :SQLSTATE
SELECT workload_sign_grant(t.unsigned_grant() - 'subject');
\echo :SQLSTATE
SELECT workload_sign_grant(jsonb_set(t.unsigned_grant(), '{subject,kind}', '"robot"'));
\echo :SQLSTATE
SELECT workload_sign_grant(jsonb_set(t.unsigned_grant(), '{status}', '"maybe"'));
\echo :SQLSTATE
SELECT workload_sign_grant(jsonb_set(t.unsigned_grant(), '{issued_at}', '"yesterday-ish"'));
\echo :SQLSTATE
SELECT workload_sign_grant(jsonb_set(t.unsigned_grant(), '{capabilities}', '[1, 2]'));
\echo :SQLSTATE
SELECT workload_sign_grant(jsonb_set(t.unsigned_grant(), '{revision}', '"1"'));
\echo :SQLSTATE
