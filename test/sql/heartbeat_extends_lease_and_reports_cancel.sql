-- A heartbeat extends the lease to now + extend, keeps the latest progress for workload_get, and tells the worker whether cancellation was requested; bad extends or progress are refused and change nothing (SPEC 4, "Claiming and running": workload_heartbeat).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-heartbeat

SELECT t.create('long-run', '{}', :'tn') AS id \gset
SELECT claim_id, fencing_token, lease_expires_at
FROM workload_claim('w1', '{}', :'tn', 'billing', lease => '30 seconds', start => true) \gset
\echo :lease_expires_at

-- 20 s in: the lease now runs to now + 30 s, past the first lease
SET workload.clock_override = '2026-01-01 00:00:20+00';
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds', '{"done": 10, "of": 100}') AS answer;
SELECT lease_expires_at, last_heartbeat_at, progress FROM workload.workloads WHERE workload_id = :'id';
-- 40 s in, after the first lease would have ended: still held
SET workload.clock_override = '2026-01-01 00:00:40+00';
SELECT a->>'lease_expires_at' AS lease_expires_at, a->'cancellation_requested' AS cancellation_requested
FROM workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '1 minute', '{"done": 40, "of": 100}') a;
-- extend is from now, not from the old expiry: a shorter one shortens the lease
SELECT a->>'lease_expires_at' AS lease_expires_at
FROM workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '5 seconds') a;
-- a heartbeat without progress keeps the last one; workload_get shows it
SELECT d->'progress' AS progress, d->'current_claim'->>'lease_expires_at' AS lease_expires_at, d->>'state' AS state
FROM workload_get(:'id') d;
-- heartbeats are not transitions: no events
SELECT event_type FROM workload_history(:'id') ORDER BY sequence;
-- the largest extend allowed is a day
SELECT a->>'lease_expires_at' AS lease_expires_at
FROM workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '86400 seconds') a;

-- refused, and nothing changes: extend not above zero or over a day or NULL, progress too big or with a secret
SELECT t.fingerprint() AS before \gset
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '0 seconds');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '-10 seconds');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '2 days');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '1 month');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '86400.001 seconds');
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, NULL);
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds',
                          jsonb_build_object('log', repeat('x', 8 * 1024)));
\echo :SQLSTATE
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds',
                          '{"step": {"api_key": "abc"}}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- progress just under 8 KiB is kept
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds',
                          jsonb_build_object('log', repeat('x', 8000)))->>'state' AS state;
SELECT length(workload_get(:'id')->'progress'->>'log') AS progress_log_length;

-- a cancel request: the next heartbeat says so
SELECT workload_cancel(:'id', 'operator');
SELECT a->>'state' AS state, a->'cancellation_requested' AS cancellation_requested
FROM workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds') a;
SELECT workload_confirm_cancel(:'id', :'claim_id', 'w1', :fencing_token);
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds');
\echo :SQLSTATE

-- a heartbeat after completion: the claim is gone, WORKLOAD_CLAIM_INVALID
SELECT t.create('short-run', '{}', :'tn') AS id2 \gset
SELECT claim_id AS claim2, fencing_token AS token2
FROM workload_claim('w2', '{}', :'tn', 'billing', start => true) \gset
SELECT workload_heartbeat(:'id2', :'claim2', 'w2', :token2, '30 seconds')->'cancellation_requested' AS cancellation_requested;
SELECT workload_complete(:'id2', :'claim2', 'w2', :token2, 'hb-result-short', '{}') IS NOT NULL AS completed;
SELECT t.fingerprint() AS before \gset
SELECT workload_heartbeat(:'id2', :'claim2', 'w2', :token2, '30 seconds');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
