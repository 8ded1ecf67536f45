-- What one workload, and one batch call, can store is bounded: at most 1000 checkpoints per workload, and at most 16 MB of items in one workload_complete_many or workload_heartbeat_many call; each limit is a WORKLOAD_INVALID that names it and changes nothing (SPEC section 4; since 1.2).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT t.create('many-checkpoints') AS id \gset
SELECT claim_id, fencing_token FROM t.run(:'id') \gset
-- 1000 checkpoints are kept
SELECT count(workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, jsonb_build_object('n', g)))
FROM generate_series(1, 1000) g;
-- the 1001st is refused, and nothing changes
SELECT t.fingerprint() AS before \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"n": 1001}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged, max(sequence) AS last_checkpoint
FROM workload.checkpoints WHERE workload_id = :'id';
-- the workload still completes
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'r1', '{}') ->> 'outcome' AS outcome;

-- a batch call whose items are over 16 MB is refused whole, before any item is read
SELECT t.fingerprint() AS before \gset
SELECT jsonb_build_array(jsonb_build_object('workload_id', 'x', 'claim_id', 'y', 'fencing_token', 1,
    'result_id', 'r', 'output', repeat('a', 17 * 1024 * 1024))) AS big \gset
SELECT * FROM workload_complete_many('w1', :'big');
\echo :SQLSTATE
SELECT * FROM workload_heartbeat_many('w1', :'big', '1 minute');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
