-- A workload left READY and due longer than timeouts.queue_ms is timed out by workload_tick and dead-lettered, never retried (SPEC section 4, workload_tick: queue timeout).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- st(id): state, attempts, whether a claim is held, and the deadline the tick keeps
CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, attempt_count int, claimed boolean, deadline_at timestamptz) LANGUAGE sql AS $$
    SELECT w.state::text, w.attempt_count, w.claim_id IS NOT NULL, w.deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- q may wait 10 s for a worker; "timeout" is in retry_on (the default policy); other has no timeouts
SELECT t.create('q', '{"timeouts": {"queue_ms": 10000}}') AS q \gset
SELECT t.create('other') AS other \gset
SELECT * FROM pg_temp.st(:'q');
SELECT * FROM pg_temp.st(:'other');

-- 9.999 s: not yet; the tick does nothing and says so
SET workload.clock_override = '2026-01-01 00:00:09.999+00';
SELECT workload_tick();
SELECT state FROM pg_temp.st(:'q');

-- 10 s: TIMED_OUT, then DEAD_LETTER at once, although "timeout" is retried
SET workload.clock_override = '2026-01-01 00:00:10+00';
SELECT workload_tick();
SELECT * FROM pg_temp.st(:'q');
SELECT from_state, to_state, actor, evidence FROM workload_history(:'q') ORDER BY sequence;
-- no worker ever held it: no attempt was opened, and it cannot be claimed
SELECT count(*) AS attempts FROM workload.attempt_log WHERE workload_id = :'q';
SELECT count(*) AS claimed FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 10) WHERE workload_id = :'q';
-- the workload without timeouts was not touched (and was claimed just now); a second tick finds nothing
SELECT state FROM pg_temp.st(:'other');
SELECT workload_tick() ->> 'queue_timed_out' AS queue_timed_out;

-- the queue clock starts when the workload is due: a retry waiting out its backoff is not "queued"
SELECT t.create('retried', '{"timeouts": {"queue_ms": 10000},
    "retry_policy": {"initial_delay_ms": 60000, "backoff": "fixed"}}') AS r \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'r', 'w1', '{}', '1 hour') \gset
SELECT workload_start(:'r', :'claim_id', 'w1', :fencing_token);
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_fail(:'r', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'flaky');
-- due at 00:02:00, so the queue timeout comes at 00:02:10
SELECT * FROM pg_temp.st(:'r');
SET workload.clock_override = '2026-01-01 00:02:09+00';
SELECT workload_tick() ->> 'queue_timed_out' AS queue_timed_out;
SET workload.clock_override = '2026-01-01 00:02:10+00';
SELECT workload_tick() ->> 'queue_timed_out' AS queue_timed_out;
SELECT state, attempt_count FROM pg_temp.st(:'r');

-- a workload claimed in time no longer has a queue deadline
SET workload.clock_override = '2026-01-01 00:03:00+00';
SELECT t.create('claimed-in-time', '{"timeouts": {"queue_ms": 10000}}') AS c \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'c', 'w1', '{}', '1 hour') \gset
SET workload.clock_override = '2026-01-01 00:04:00+00';
SELECT workload_tick() ->> 'queue_timed_out' AS queue_timed_out;
SELECT * FROM pg_temp.st(:'c');
