-- Cancelling a running workload wins over its completion; cancel elsewhere, finality and the cascade to dependents (SPEC section 4, workload_cancel and workload_confirm_cancel).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'cancel-tests') $$;


-- a running workload: cancel only requests it; the worker hears of it on its next heartbeat
SELECT pg_temp.make('run') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_cancel(:'id', 'ops:alice');
SELECT from_state, to_state, actor, evidence - 'fencing_token' AS evidence FROM workload_history(:'id') WHERE event_type = 'workload.cancellation_requested';
SELECT h->>'state' AS state, h->'cancellation_requested' AS cancellation_requested
FROM workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds') h;
-- cancelling again changes nothing: same answer, no new event
SELECT t.fingerprint() AS before \gset
SELECT workload_cancel(:'id', 'ops:bob');
SELECT t.fingerprint() = :'before' AS unchanged;
-- the worker cannot complete, checkpoint or fail it any more: cancellation wins
SELECT t.fingerprint() AS before \gset
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'cancel-tests-result-run', '{"ok": true}');
\echo :SQLSTATE
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"page": 3}');
\echo :SQLSTATE
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- it confirms instead: CANCELLED, the attempt ends CANCELLED, the claim is released
SELECT workload_confirm_cancel(:'id', :'claim_id', 'w1', :fencing_token);
SELECT * FROM t.st(:'id');
SELECT attempt_number, outcome, finished_at IS NOT NULL AS finished FROM workload.attempt_log WHERE workload_id = :'id' ORDER BY attempt_number;
SELECT count(*) AS results FROM workload.results WHERE workload_id = :'id';
SELECT event_type, from_state, to_state, actor FROM workload_history(:'id') ORDER BY sequence;

-- CLAIMED and CHECKPOINTED are held by a worker too: cancellation is requested
SELECT pg_temp.make('claimed') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'id', 'w1', '{}') \gset
SELECT workload_cancel(:'id', 'ops:alice');
SELECT pg_temp.make('checkpointed') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"page": 1}') IS NOT NULL AS checkpointed;
SELECT workload_cancel(:'id', 'ops:alice');

-- READY and DEAD_LETTER hold no worker: CANCELLED at once, with the actor as the event's actor
SELECT pg_temp.make('ready') AS ready \gset
SELECT workload_cancel(:'ready', 'ops:alice');
SELECT from_state, to_state, actor, evidence FROM workload_history(:'ready') WHERE to_state = 'CANCELLED';
SELECT pg_temp.make('dead', '{"retry_policy": {"max_attempts": 1}}') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'x');
SELECT workload_cancel(:'id', 'ops:alice');
SELECT from_state, to_state FROM workload_history(:'id') WHERE to_state = 'CANCELLED';

-- final states stay final: SUCCEEDED and CANCELLED refuse a cancel and nothing changes
SELECT pg_temp.make('done') AS id \gset
SELECT * FROM t.run(:'id') \gset
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'cancel-tests-result-done', '{"ok": true}') ->> 'result_id' AS result_id;
SELECT t.fingerprint() AS before \gset
SELECT workload_cancel(:'id', 'ops:alice');
\echo :SQLSTATE
SELECT workload_cancel(:'ready', 'ops:alice');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- the cascade: b needs a to succeed, c needs b, d needs c; e needs a to be CANCELLED
SELECT pg_temp.make('a') AS a \gset
SELECT pg_temp.make('b', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'a', 'required_state', 'SUCCEEDED')))) AS b \gset
SELECT pg_temp.make('c', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'b')))) AS c \gset
SELECT pg_temp.make('d', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'c', 'required_state', 'SUCCEEDED')))) AS d \gset
SELECT pg_temp.make('e', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'a', 'required_state', 'CANCELLED')))) AS e \gset
-- e cannot run while a is not CANCELLED
SELECT * FROM workload_claim_id(:'e', 'w1', '{}');
\echo :SQLSTATE
SELECT workload_cancel(:'a', 'ops:alice');
SELECT w.name, s.state
FROM (VALUES ('a', :'a'), ('b', :'b'), ('c', :'c'), ('d', :'d'), ('e', :'e')) w(name, id),
     LATERAL t.st(w.id) s ORDER BY w.name;
-- each dependent says why, naming the dependency that can no longer succeed
SELECT w.name, h.from_state, h.actor, h.evidence - 'dependency' AS evidence,
       h.evidence ->> 'dependency' = w.dep AS names_its_dependency
FROM (VALUES ('b', :'b', :'a'), ('c', :'c', :'b'), ('d', :'d', :'c')) w(name, id, dep),
     LATERAL workload_history(w.id) h WHERE h.to_state = 'CANCELLED' ORDER BY w.name;
-- e's dependency is now met: it can be claimed
SELECT workload_id = :'e' AS claimed_e FROM workload_claim_id(:'e', 'w1', '{}');

-- a dependent on a workload that later SUCCEEDS becomes claimable; one that needed it CANCELLED is cancelled
SELECT pg_temp.make('f') AS f \gset
SELECT pg_temp.make('g', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'f', 'required_state', 'SUCCEEDED')))) AS g \gset
SELECT pg_temp.make('h', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'f', 'required_state', 'CANCELLED')))) AS h \gset
SELECT * FROM workload_claim_id(:'g', 'w1', '{}');
\echo :SQLSTATE
SELECT * FROM t.run(:'f') \gset
SELECT workload_complete(:'f', :'claim_id', 'w1', :fencing_token, 'cancel-tests-result-f', '{"ok": true}') ->> 'result_id' AS result_id;
SELECT workload_id = :'g' AS claimed_g FROM workload_claim_id(:'g', 'w1', '{}');
SELECT state FROM t.st(:'h');
SELECT evidence - 'dependency' AS evidence, evidence ->> 'dependency' = :'f' AS names_f
FROM workload_history(:'h') WHERE to_state = 'CANCELLED';
