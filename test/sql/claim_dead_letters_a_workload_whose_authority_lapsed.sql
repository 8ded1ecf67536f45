-- A claim never hands out a workload whose authority has lapsed (its grant's expires_at, or its run authority's, workload.run_authority_ttl after create): a claim that takes one moves it to DEAD_LETTER with evidence {"cause": "authorization_expired"} and hands out the others; a claim of it by name is AUTHORIZATION_DENIED; it cannot be retried (SPEC section 5.1, "A claim never hands out a workload whose run authority has lapsed").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- a grant that expires at noon; a run authority that lives an hour
SELECT t.grant(expires => '2026-01-01T12:00:00Z') AS noon \gset
SELECT workload_create(t.spec('grant-noon', '{"priority": 3}') || jsonb_build_object('authorization_snapshot', :'noon'::jsonb)) ->> 'workload_id' AS noon_id \gset
SET workload.run_authority_ttl = '1h';
SELECT t.create('ttl-hour', '{"priority": 2}') AS hour_id \gset
RESET workload.run_authority_ttl;
SELECT t.create('healthy', '{"priority": 1}') AS healthy_id \gset
SELECT (d ->> 'authority_expires_at')::timestamptz AS lapses_at, w.workload_id = :'noon_id' AS noon
FROM workload.workloads w, LATERAL (SELECT to_jsonb(w) AS d) x
WHERE w.workload_id IN (:'noon_id', :'hour_id') ORDER BY 1;

-- before they lapse they are handed out as any other (the first claim takes the noon one)
SELECT workload_id = :'noon_id' AS noon_first FROM workload_claim('w1', '{}', 'acme', 'billing', '10 minutes');
SELECT workload_id, claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '10 minutes') \gset
SELECT :'workload_id' = :'hour_id' AS hour_second;
SELECT workload_start(:'workload_id', :'claim_id', 'w1', :fencing_token);
SELECT workload_fail(:'workload_id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'crash') AS state;

-- at 13:00 both have lapsed; the noon one's lease ends and the tick puts it back
SET workload.clock_override = '2026-01-01 13:00:00+00';
SELECT (workload_tick() ->> 'recovered')::int AS recovered;
SELECT workload_id, state FROM workload.workloads
WHERE workload_id IN (:'noon_id', :'hour_id', :'healthy_id') ORDER BY priority DESC;
-- once their retry delay has passed, a claim of three takes the healthy one only; the lapsed
-- ones are dead-lettered
SET workload.clock_override = '2026-01-01 13:01:00+00';
SELECT workload_id = :'healthy_id' AS healthy
FROM workload_claim('w2', '{}', 'acme', 'billing', '10 minutes', 3);
SELECT priority, state FROM workload.workloads
WHERE workload_id IN (:'noon_id', :'hour_id', :'healthy_id') ORDER BY priority DESC;
SELECT h.to_state, h.actor, h.evidence ->> 'cause' AS cause
FROM workload_history(:'noon_id') h ORDER BY h.sequence DESC LIMIT 2;
-- the attempt it was claimed for is closed as such
SELECT attempt_number, outcome, failure_kind FROM workload.attempts a
JOIN workload.workloads w ON w.seq = a.workload_seq AND w.tenant_id = a.tenant_id
WHERE w.workload_id = :'hour_id' ORDER BY attempt_number;

-- by name: refused; retry: refused, it would never be handed out
SELECT t.create('lapsing', '{}') AS lapsing_id \gset
SET workload.clock_override = '2026-01-03 00:00:00+00';
SELECT * FROM workload_claim_id(:'lapsing_id', 'w3', '{}');
\echo :SQLSTATE
SELECT workload_retry(:'noon_id', 'ops');
\echo :SQLSTATE
