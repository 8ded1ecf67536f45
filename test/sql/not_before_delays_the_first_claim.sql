-- A spec's not_before makes the workload READY but not due before then: no claim (batch or by id) returns it earlier, it is claimable from that moment, and an idempotent replay compares not_before like the rest of the spec (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- due at 01:00 UTC, given with another offset; READY, due then, with both events
SELECT workload_create(t.spec('later', '{"not_before": "2026-01-01T02:00:00+01:00"}')) AS doc \gset
SELECT (:'doc'::jsonb)->>'workload_id' AS id \gset
SELECT (:'doc'::jsonb)->>'state' AS state, (:'doc'::jsonb)->>'not_before' AS not_before,
       (:'doc'::jsonb)->>'next_attempt_at' AS next_attempt_at;
SELECT event_type, from_state, to_state FROM workload_history(:'id') ORDER BY sequence;
-- a not_before already past is due now
SELECT d->>'next_attempt_at' AS next_attempt_at, d->>'not_before' AS not_before
FROM workload_create(t.spec('past', '{"not_before": "2025-06-01T00:00:00Z"}')) d;
SELECT workload_id AS past_claim FROM workload_claim('w0', '{}', 'acme', 'billing') \gset

-- before 01:00 no claim returns it, and a claim by id is refused as not due
SET workload.clock_override = '2026-01-01 00:59:59.999+00';
SELECT t.fingerprint() AS before \gset
SELECT count(*) AS claimed FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10);
SELECT * FROM workload_claim_id(:'id', 'w1', '{}');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- from 01:00 it is claimed
SET workload.clock_override = '2026-01-01 01:00:00+00';
SELECT workload_id = :'id' AS is_later, attempt FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10);

-- the idempotent replay: the same not_before (in any offset) is the same workload;
-- another one, or none, under the same key is a conflict
SELECT t.fingerprint() AS before \gset
SELECT d->>'workload_id' = :'id' AS same_id, d->>'state' AS state
FROM workload_create(t.spec('later', '{"not_before": "2026-01-01T01:00:00Z"}')) d;
SELECT workload_create(t.spec('later', '{"not_before": "2026-01-01T01:00:01Z"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('later'));
\echo :SQLSTATE
-- and a workload created without one does not replay with one
SELECT workload_create(t.spec('past', '{"not_before": "2026-01-01T00:00:00Z"}'));
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- a queue timeout counts from when the workload is due, not from its creation
SET workload.clock_override = '2026-01-01 02:00:00+00';
SELECT t.create('timed', '{"not_before": "2026-01-01T03:00:00Z", "timeouts": {"queue_ms": 60000}}') AS timed \gset
SELECT deadline_at FROM workload.workloads WHERE workload_id = :'timed';

-- not_before is refused when it is no RFC 3339 timestamp with an offset
SELECT t.fingerprint() AS before \gset
SELECT workload_create(t.spec('bad', '{"not_before": "2026-01-01 01:00:00"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('bad', '{"not_before": "tomorrow"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('bad', '{"not_before": "2026-13-01T00:00:00Z"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('bad', '{"not_before": "2026-02-30T00:00:00Z"}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('bad', '{"not_before": 1767229200}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('bad', '{"not_before": {"at": "2026-01-01T01:00:00Z"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('bad', jsonb_build_object('not_before', repeat('9', 100000))));
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- null is the same as absent
SELECT d->>'not_before' IS NULL AS no_not_before, d->>'next_attempt_at' AS next_attempt_at
FROM workload_create(t.spec('null-nb', '{"not_before": null}')) d;
