-- A worker silent for timeouts.heartbeat_ms (since its last heartbeat, else since its claim) is timed out by workload_tick even while its lease holds, and the workload is retried (SPEC section 4, workload_tick: heartbeat timeout).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, attempt_count int, claimed boolean, lease_expires_at timestamptz, deadline_at timestamptz)
LANGUAGE sql AS $$
    SELECT w.state::text, w.attempt_count, w.claim_id IS NOT NULL, w.lease_expires_at, w.deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- h must heartbeat every 10 s; its lease is an hour
SELECT t.create('h', '{"timeouts": {"heartbeat_ms": 10000}}') AS h \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', start => true) \gset
-- a heartbeat at 8 s; heartbeats never move the indexed deadline (it stays NULL here)
SET workload.clock_override = '2026-01-01 00:00:08+00';
SELECT workload_heartbeat(:'h', :'claim_id', 'w1', :fencing_token, '1 hour') ->> 'state' AS state;
SELECT * FROM pg_temp.st(:'h');
SET workload.clock_override = '2026-01-01 00:00:17.999+00';
SELECT workload_tick() ->> 'heartbeat_timed_out' AS heartbeat_timed_out;
-- 10 s of silence after the heartbeat: TIMED_OUT, then READY after the backoff
SET workload.clock_override = '2026-01-01 00:00:18+00';
SELECT workload_tick();
SELECT * FROM pg_temp.st(:'h');
SELECT from_state, to_state, actor, evidence - 'fencing_token' AS evidence
FROM workload_history(:'h') WHERE sequence > 4 ORDER BY sequence;
SELECT workload_heartbeat(:'h', :'claim_id', 'w1', :fencing_token, '1 hour');
\echo :SQLSTATE

-- a worker that never heartbeats is silent from its claim (CLAIMED counts too)
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT claim_id, fencing_token FROM workload_claim_id(:'h', 'w2', '{}', '1 hour') \gset
SET workload.clock_override = '2026-01-01 00:01:09.999+00';
SELECT workload_tick() ->> 'heartbeat_timed_out' AS heartbeat_timed_out;
SET workload.clock_override = '2026-01-01 00:01:10+00';
SELECT workload_tick() ->> 'heartbeat_timed_out' AS heartbeat_timed_out;
SELECT state, attempt_count, claimed FROM pg_temp.st(:'h');

-- a worker that keeps heartbeating is never timed out
SET workload.clock_override = '2026-01-01 00:02:00+00';
SELECT claim_id, fencing_token FROM workload_claim_id(:'h', 'w3', '{}', '1 hour') \gset
SELECT workload_start(:'h', :'claim_id', 'w3', :fencing_token);
SET workload.clock_override = '2026-01-01 00:02:09+00';
SELECT workload_heartbeat(:'h', :'claim_id', 'w3', :fencing_token, '1 hour') ->> 'state' AS state;
SET workload.clock_override = '2026-01-01 00:02:18+00';
SELECT workload_heartbeat(:'h', :'claim_id', 'w3', :fencing_token, '1 hour') ->> 'state' AS state;
SET workload.clock_override = '2026-01-01 00:02:27+00';
SELECT workload_tick() ->> 'heartbeat_timed_out' AS heartbeat_timed_out;
SELECT state, attempt_count, claimed FROM pg_temp.st(:'h');
-- the third attempt is the last: silence now dead-letters it
SET workload.clock_override = '2026-01-01 00:02:37+00';
SELECT workload_tick() ->> 'heartbeat_timed_out' AS heartbeat_timed_out;
SELECT state, attempt_count, claimed FROM pg_temp.st(:'h');
SELECT attempt_number, worker_id, outcome, failure_kind FROM workload.attempt_log WHERE workload_id = :'h' ORDER BY attempt_number;
