-- Revocation reaches every descendant of a revoked grant at any depth: a compensation of a compensation carries the chain of the workload it undoes, so once the root grant is revoked it is neither created, nor handed to a worker, nor given an execution context (SPEC section 5.1, "Revocation reaches every descendant of a revoked grant").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- a root grant and a grant derived from it; the saga runs on the derived one
SELECT workload_sign_grant(t.unsigned_grant() || '{"id": "root"}') AS root \gset
SELECT workload_sign_grant(t.unsigned_grant() || '{"id": "child", "parent_grant": "root"}') AS child \gset
\set caps '["pay", "refund", "undo_refund", "undo_undo"]'
\set worker_caps '{pay,refund,undo_refund,undo_undo}'
SELECT workload_create(t.spec('saga') || jsonb_build_object('authorization_snapshot', :'child'::jsonb,
    'capability_snapshot', :'caps'::jsonb)) ->> 'workload_id' AS saga \gset

-- the saga records an undo step and fails for good
SELECT claim_id AS c, fencing_token AS f FROM workload_claim('w1', :'worker_caps', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_add_compensation(:'saga', :'c', 'w1', :f, 'refund', '{"amount": 10}') ->> 'step' AS step;
SELECT workload_fail(:'saga', :'c', 'w1', :f, 'declined', 'card declined');
-- its compensation runs, records an undo of its own, and fails for good
SELECT id AS comp1 FROM workload_compensate(:'saga', 'ops') id \gset
SELECT claim_id AS c, fencing_token AS f FROM workload_claim('w1', '{refund}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_add_compensation(:'comp1', :'c', 'w1', :f, 'refund', '{"amount": 10, "again": true}') ->> 'step' AS step;
SELECT workload_fail(:'comp1', :'c', 'w1', :f, 'declined', 'refund declined');
-- the compensation's chain holds the grants of the workload it undoes, root included
SELECT s.workload_id = :'comp1' AS comp1, s.grant_ids @> ARRAY['root', 'child', 'run_' || :'saga'] AS carries_the_root
FROM workload.specs s WHERE s.workload_id = :'comp1';

-- a compensation of the compensation, made while the root holds, carries it too
SELECT id AS comp2 FROM workload_compensate(:'comp1', 'ops') id \gset
SELECT grant_ids @> ARRAY['root'] AS comp2_carries_the_root FROM workload.specs WHERE workload_id = :'comp2';

-- a second saga goes as far as a failed compensation with an undo step of its own
SELECT workload_create(t.spec('saga-b') || jsonb_build_object('authorization_snapshot', :'child'::jsonb,
    'capability_snapshot', :'caps'::jsonb)) ->> 'workload_id' AS saga_b \gset
SELECT claim_id AS c, fencing_token AS f FROM workload_claim_id(:'saga_b', 'w1', :'worker_caps', '1 hour') \gset
SELECT workload_start(:'saga_b', :'c', 'w1', :f);
SELECT workload_add_compensation(:'saga_b', :'c', 'w1', :f, 'refund', '{"amount": 20}') ->> 'step' AS step;
SELECT workload_fail(:'saga_b', :'c', 'w1', :f, 'declined', 'card declined');
SELECT id AS comp1b FROM workload_compensate(:'saga_b', 'ops') id \gset
SELECT claim_id AS c, fencing_token AS f FROM workload_claim_id(:'comp1b', 'w1', :'worker_caps', '1 hour') \gset
SELECT workload_start(:'comp1b', :'c', 'w1', :f);
SELECT workload_add_compensation(:'comp1b', :'c', 'w1', :f, 'refund', '{"amount": 20, "again": true}') ->> 'step' AS step;
SELECT workload_fail(:'comp1b', :'c', 'w1', :f, 'declined', 'refund declined');

-- the root grant is revoked: the compensation of the compensation is never handed out
SELECT workload_revoke_grant('root');
SELECT count(*) AS claimed FROM workload_claim('w1', :'worker_caps', 'acme', 'billing', '1 hour');
SELECT workload_claim_id(:'comp2', 'w1', :'worker_caps');
\echo :SQLSTATE
-- the tick's sweep dead-letters it as revoked
SELECT (workload_tick() ->> 'revoked_dead_lettered')::int >= 1 AS swept;
SELECT state FROM workload.workloads WHERE workload_id = :'comp2';
SELECT evidence ->> 'cause' AS cause FROM workload_history(:'comp2') ORDER BY sequence DESC LIMIT 1;
-- retrying it does not bring it back
SELECT workload_retry(:'comp2', 'ops');
\echo :SQLSTATE

-- and the second saga's compensation of its compensation, asked for after the revocation,
-- is not created
SELECT t.fingerprint() AS before \gset
SELECT workload_compensate(:'comp1b', 'ops');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
