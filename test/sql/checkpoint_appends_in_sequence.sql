-- Checkpoints append with sequence 1, 2, 3, their SPEC ids and state hashes; RUNNING -> CHECKPOINTED and stays CHECKPOINTED; the next claim reports the last sequence; a checkpoint before start, with NULL or oversized state, is refused and changes nothing (SPEC 4, "Claiming and running": workload_checkpoint; SPEC 2).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-checkpoint

SELECT t.create('import', '{}', :'tn') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing') \gset

-- claimed but not started: WORKLOAD_TRANSITION_DENIED, nothing written
SELECT t.fingerprint() AS before \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"rows": 0}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);
-- three checkpoints, one second apart
SET workload.clock_override = '2026-01-01 00:00:01+00';
SELECT c->>'sequence' AS sequence, c->>'checkpoint_id' = 'checkpoint_' || :'id' || '_1' AS id_per_spec,
       c->>'attempt' AS attempt, c->>'fencing_token' AS token, c->>'created_at' AS created_at,
       c->>'state_hash' = encode(digest('{"rows": 100}'::jsonb::text, 'sha256'), 'hex') AS hash_per_spec
FROM workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"rows": 100}') c;
SELECT workload_get(:'id')->>'state' AS state;
SET workload.clock_override = '2026-01-01 00:00:02+00';
SELECT c->>'sequence' AS sequence, c->>'checkpoint_id' = 'checkpoint_' || :'id' || '_2' AS id_per_spec
FROM workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"rows": 200, "cursor": "k200"}') c;
SET workload.clock_override = '2026-01-01 00:00:03+00';
SELECT c->>'sequence' AS sequence, c->>'checkpoint_id' = 'checkpoint_' || :'id' || '_3' AS id_per_spec
FROM workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"rows": 300, "cursor": "k300"}') c;

-- the document: CHECKPOINTED, three checkpoints with state and a verifiable hash
SELECT d->>'state' AS state, d->>'checkpoint_sequence' AS checkpoint_sequence FROM workload_get(:'id') d;
SELECT c->>'sequence' AS sequence, c->'state' AS state, c->>'created_at' AS created_at,
       c->>'state_hash' = encode(digest((c->'state')::text, 'sha256'), 'hex') AS hash_ok,
       c->>'checkpoint_id' = 'checkpoint_' || :'id' || '_' || (c->>'sequence') AS id_ok
FROM jsonb_array_elements(workload_get(:'id')->'checkpoints') c ORDER BY (c->>'sequence')::int;
SELECT event_type, from_state, to_state, evidence - 'state_hash' AS evidence
FROM workload_history(:'id') WHERE event_type = 'workload.checkpointed' ORDER BY sequence;

-- refused, nothing changes: NULL state, a 2 MiB state, a secret, a stale fence
SELECT t.fingerprint() AS before \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, NULL);
\echo :SQLSTATE
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token,
                           jsonb_build_object('blob', repeat('x', 2 * 1024 * 1024)));
\echo :SQLSTATE
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"credentials": {"password": "hunter2"}}');
\echo :SQLSTATE
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token + 1, '{"rows": 400}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- the worker fails (retryable); after the backoff the next claim starts from checkpoint 3
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'killed');
SET workload.clock_override = '2026-01-01 00:00:10+00';
SELECT attempt, fencing_token, checkpoint_sequence, claim_id AS claim2
FROM workload_claim('w2', '{}', :'tn', 'billing', start => true) \gset
SELECT :attempt AS attempt, :fencing_token AS fencing_token, :checkpoint_sequence AS checkpoint_sequence;
-- and its next checkpoint is 4, from attempt 2
SELECT c->>'sequence' AS sequence, c->>'attempt' AS attempt, c->>'fencing_token' AS token
FROM workload_checkpoint(:'id', :'claim2', 'w2', :fencing_token, '{"rows": 400}') c;
-- a fresh workload reports checkpoint_sequence 0
SELECT t.create('import-2', '{}', :'tn') IS NOT NULL AS created;
SELECT checkpoint_sequence FROM workload_claim('w3', '{}', :'tn', 'billing');
