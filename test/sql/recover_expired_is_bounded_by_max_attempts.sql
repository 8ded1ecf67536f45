-- Expired leases are recovered: back to READY with backoff while attempts remain, DEAD_LETTER after max_attempts, never a loop (SPEC section 4, workload_recover_expired).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'recover-tests') $$;


-- recovery is global: first let any lease other tests left behind lapse and be recovered, so none is held
SET workload.clock_override = '2100-01-01 00:00:00+00';
SELECT NULL AS drained FROM (SELECT count(*) FROM workload_recover_expired()) q;
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT count(*) AS claims_held FROM workload.workloads WHERE claim_id IS NOT NULL;

-- nothing has expired: nothing is recovered and nothing changes
SELECT pg_temp.make('live') AS live \gset
SELECT * FROM workload_claim_id(:'live', 'w-live', '{}', '1 hour') \gset live_
SELECT pg_temp.make('x') AS x \gset
SELECT * FROM workload_claim_id(:'x', 'w1', '{}', '10 seconds') \gset x_
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_recover_expired();
SELECT t.fingerprint() = :'before' AS unchanged;

-- x's worker dies (CLAIMED, never started); 11 s later its lease is over: RECOVERING, then READY after 1 s
SET workload.clock_override = '2026-01-01 00:00:11+00';
SELECT id = :'x' AS recovered_x FROM workload_recover_expired() id;
SELECT * FROM t.st(:'x');
-- the live lease was not touched
SELECT state, claimed FROM t.st(:'live');
SELECT (workload_get(:'live') -> 'current_claim' ->> 'claim_id') = :'live_claim_id' AS same_claim;
-- the lost worker is fenced off
SELECT workload_heartbeat(:'x', :'x_claim_id', 'w1', :x_fencing_token, '10 seconds');
\echo :SQLSTATE

-- the second worker dies too (RUNNING this time): READY after 2 s
SET workload.clock_override = '2026-01-01 00:00:12+00';
SELECT * FROM t.run(:'x', 'w2', '10 seconds') \gset
SET workload.clock_override = '2026-01-01 00:00:23+00';
SELECT id = :'x' AS recovered_x FROM workload_recover_expired() id;
SELECT * FROM t.st(:'x');

-- the third and last attempt dies: DEAD_LETTER, not READY again
SET workload.clock_override = '2026-01-01 00:00:25+00';
SELECT * FROM t.run(:'x', 'w3', '10 seconds') \gset
SET workload.clock_override = '2026-01-01 00:00:36+00';
SELECT id = :'x' AS recovered_x FROM workload_recover_expired() id;
SELECT * FROM t.st(:'x');
-- and it stays there: no more recovery, no more claims
SELECT * FROM workload_recover_expired();
SELECT count(*) AS claimed FROM workload_claim('w4', '{}', 'recover-tests', 'billing');
-- every attempt was WORKER_LOST
SELECT attempt_number, worker_id, outcome, finished_at IS NOT NULL AS finished
FROM workload.attempt_log WHERE workload_id = :'x' ORDER BY attempt_number;
SELECT from_state, to_state, actor, evidence - 'fencing_token' - 'worker_id' AS evidence
FROM workload_history(:'x') WHERE actor = 'workload.recovery' ORDER BY sequence;

-- a workload whose cancellation was requested and whose worker died is CANCELLED
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT pg_temp.make('cancel') AS c \gset
SELECT * FROM t.run(:'c', 'w1', '10 seconds') \gset
SELECT workload_cancel(:'c', 'ops:alice');
SET workload.clock_override = '2026-01-01 00:01:11+00';
SELECT id = :'c' AS recovered_c FROM workload_recover_expired() id;
SELECT * FROM t.st(:'c');
SELECT outcome FROM workload.attempt_log WHERE workload_id = :'c' ORDER BY attempt_number;
SELECT from_state, to_state, actor FROM workload_history(:'c') ORDER BY sequence DESC LIMIT 1;

-- many at once: 250 leases lapse together and one call recovers them all
SET workload.clock_override = '2026-01-01 00:02:00+00';
SELECT count(t.create('bulk-' || i, '{}', 'recover-bulk', 'billing')) AS created FROM generate_series(1, 250) i;
SELECT count(*) AS claimed FROM workload_claim('wb', '{}', 'recover-bulk', 'billing', '5 seconds', 250);
SET workload.clock_override = '2026-01-01 00:02:06+00';
SELECT count(*) AS recovered, count(DISTINCT id) AS distinct_ids FROM workload_recover_expired() id;
SELECT state, count(*) FROM workload_list('recover-bulk', 'billing', NULL, 1000) d, LATERAL (SELECT d->>'state') s(state)
GROUP BY state ORDER BY state;
SELECT count(*) AS worker_lost FROM workload.attempt_log a JOIN workload.workloads w USING (workload_id)
WHERE w.tenant_id = 'recover-bulk' AND a.outcome = 'WORKER_LOST';
-- the live lease (one hour from 00:00) is still untouched
SELECT state, claimed FROM t.st(:'live');
