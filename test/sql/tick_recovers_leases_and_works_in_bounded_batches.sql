-- workload_tick recovers expired leases, answers what it did as counts, and does at most 1000 rows of each kind per call, saying "more" when some are left (SPEC section 4, workload_tick).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- nothing to do: every count is zero
SELECT key, value FROM jsonb_each(workload_tick()) ORDER BY key;

-- a lease that lapses is recovered by the tick, as by workload_recover_expired
SELECT t.create('lost') AS lost \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '10 seconds', start => true) \gset
SET workload.clock_override = '2026-01-01 00:00:09.999+00';
SELECT workload_tick() ->> 'recovered' AS recovered;
SET workload.clock_override = '2026-01-01 00:00:10.001+00';
SELECT workload_tick() ->> 'recovered' AS recovered;
SELECT state, attempt_count, claim_id IS NULL AS released FROM workload.workloads WHERE workload_id = :'lost';
SELECT outcome FROM workload.attempt_log WHERE workload_id = :'lost';
SELECT from_state, to_state, actor FROM workload_history(:'lost') WHERE sequence > 4 ORDER BY sequence;

-- 1100 leases and 1100 queue timeouts fall due at once: one call does 1000 of each and says more
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT count(t.create('bulk-' || i, '{}', 'tick-bulk', 'billing')) AS created FROM generate_series(1, 1100) i;
SELECT count(*) AS claimed FROM workload_claim('wb', '{}', 'tick-bulk', 'billing', '5 seconds', 1000);
SELECT count(*) AS claimed FROM workload_claim('wb', '{}', 'tick-bulk', 'billing', '5 seconds', 1000);
SELECT count(t.create('queued-' || i, '{"timeouts": {"queue_ms": 1000}}', 'tick-queue', 'billing')) AS created
FROM generate_series(1, 1100) i;
SET workload.clock_override = '2026-01-01 00:01:06+00';
SELECT workload_tick() - 'skipped' AS first;
SELECT workload_tick() - 'skipped' AS second;
SELECT workload_tick() - 'skipped' AS third;
SELECT w.tenant_id, w.state, count(*) FROM workload.workloads w
WHERE w.tenant_id IN ('tick-bulk', 'tick-queue') GROUP BY 1, 2 ORDER BY 1, 2;
