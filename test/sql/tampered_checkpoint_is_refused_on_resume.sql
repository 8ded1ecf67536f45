-- A checkpoint row edited behind the API's back (by a superuser who disabled the raw-write trigger) is refused by workload_resume with WORKLOAD_CHECKPOINT_TAMPERED, and nothing of it is returned: its state, its hash, its tag, its id, or a missing latest row (SPEC section 7, authenticated checkpoints).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('ledger') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"paid_out": 100}') ->> 'sequence' AS sequence;
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"paid_out": 200}') ->> 'sequence' AS sequence;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token) -> 'checkpoint' -> 'state' AS genuine;
-- keep the genuine rows to put them back between cases
CREATE TEMP TABLE genuine AS SELECT * FROM workload.checkpoints WHERE workload_id = :'id';

-- a raw write is refused while the trigger is on
UPDATE workload.checkpoints SET state = '{"paid_out": 0}' WHERE workload_id = :'id' AND sequence = 2;
\echo :SQLSTATE

-- the superuser disables the trigger and edits the state: its hash no longer matches
ALTER TABLE workload.checkpoints DISABLE TRIGGER checkpoints_raw_write_trg;
UPDATE workload.checkpoints SET state = '{"paid_out": 0}' WHERE workload_id = :'id' AND sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- ... and recomputes state_hash too: the tag no longer verifies
UPDATE workload.checkpoints SET state_hash = encode(digest(state::text, 'sha256'), 'hex')
WHERE workload_id = :'id' AND sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- ... or keeps the genuine state and hash but forges a tag, or names a key that does not exist
UPDATE workload.checkpoints c SET state = g.state, state_hash = g.state_hash, tag = repeat('0', 64)
FROM genuine g WHERE c.workload_id = g.workload_id AND c.sequence = g.sequence AND g.sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE
UPDATE workload.checkpoints c SET tag = g.tag, key_id = 'key_forged'
FROM genuine g WHERE c.workload_id = g.workload_id AND c.sequence = g.sequence AND g.sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- ... or copies the first checkpoint over the second (its own tag, but another sequence's)
UPDATE workload.checkpoints c SET state = f.state, state_hash = f.state_hash, tag = f.tag, key_id = f.key_id
FROM workload.checkpoints f WHERE f.workload_id = c.workload_id AND f.sequence = 1 AND c.workload_id = :'id' AND c.sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- ... or renames the checkpoint
UPDATE workload.checkpoints c SET state = g.state, state_hash = g.state_hash, tag = g.tag, key_id = g.key_id,
       checkpoint_id = 'checkpoint_forged'
FROM genuine g WHERE c.workload_id = g.workload_id AND c.sequence = g.sequence AND g.sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- ... or deletes the latest checkpoint, to replay from the first
DELETE FROM workload.checkpoints WHERE workload_id = :'id' AND sequence = 2;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE
-- ... or deletes them all
DELETE FROM workload.checkpoints WHERE workload_id = :'id';
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token);
\echo :SQLSTATE

-- put the genuine rows back and the trigger on: resume answers again, and the run goes on
INSERT INTO workload.checkpoints SELECT * FROM genuine;
ALTER TABLE workload.checkpoints ENABLE ALWAYS TRIGGER checkpoints_raw_write_trg;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token) -> 'checkpoint' -> 'state' AS state;
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"paid_out": 300}') ->> 'sequence' AS sequence;
SELECT workload_resume(:'id', :'claim_id', 'w1', :fencing_token) -> 'checkpoint' -> 'state' AS state;
