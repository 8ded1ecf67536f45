-- A workload with timeouts is claimed (its run row appended; its workload row neither locked nor written), started and heartbeated by updates of its run row in place (HOT: the deadline those calls move is not an indexed column, so no index of workload.runs grows) and completed by an update that releases the claim (its new version leaves runs_held_idx, the claimed workloads, so it is not HOT), and the tick still finds every deadline: a held row's by its lease, the deadline of a row nobody holds by the deadline index (SPEC section 4, workload_tick).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- rows whose indexed deadline is not their deadline while no claim is held (NULL while one is)
CREATE FUNCTION pg_temp.disagree() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM workload.workloads w
    WHERE w.unheld_deadline_at IS DISTINCT FROM CASE WHEN w.claim_id IS NULL THEN w.deadline_at END
$$;
CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, claimed boolean, deadline_at timestamptz, unheld_deadline_at timestamptz)
LANGUAGE sql AS $$
    SELECT w.state::text, w.claim_id IS NOT NULL, w.deadline_at, w.unheld_deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- claim, start, heartbeat and complete of a workload with claim, execution and
-- heartbeat timeouts: the run row appended, then three updates, the start and
-- the heartbeat in place, the completion (claim_id cleared: out of
-- runs_held_idx) not; nothing written to the workload row
SELECT t.create('hot', '{"timeouts": {"claim_ms": 5000, "execution_ms": 60000, "heartbeat_ms": 30000}}') AS h \gset
BEGIN;
SELECT claim_id, fencing_token FROM workload_claim_id(:'h', 'w1', '{}', '1 hour') \gset
SELECT * FROM pg_temp.st(:'h');
SELECT workload_start(:'h', :'claim_id', 'w1', :fencing_token) IS NOT NULL AS started;
SELECT * FROM pg_temp.st(:'h');
SELECT workload_heartbeat(:'h', :'claim_id', 'w1', :fencing_token, '30 seconds') IS NOT NULL AS beat;
SELECT workload_complete(:'h', :'claim_id', 'w1', :fencing_token, 'r-hot', '{}') IS NOT NULL AS completed;
SELECT * FROM pg_temp.st(:'h');
SELECT pg_stat_get_xact_tuples_updated('workload.workload_rows'::regclass) AS row_updates,
       pg_stat_get_xact_tuples_inserted('workload.runs'::regclass) AS run_inserts,
       pg_stat_get_xact_tuples_updated('workload.runs'::regclass) AS run_updates,
       pg_stat_get_xact_tuples_hot_updated('workload.runs'::regclass) AS in_place;
COMMIT;

-- q waits at most 10 s in READY and, once claimed, 5 s for its start
SELECT t.create('q', '{"timeouts": {"queue_ms": 10000, "claim_ms": 5000}}') AS q \gset
SELECT * FROM pg_temp.st(:'q');
SELECT claim_id, fencing_token FROM workload_claim_id(:'q', 'w1', '{}', '1 hour') \gset
SELECT * FROM pg_temp.st(:'q');
SELECT pg_temp.disagree() AS disagree;
-- 5 s: the held row's claim deadline is found (by its lease) and it is READY again
-- after the backoff (1 s), with a queue deadline nobody holds
SET workload.clock_override = '2026-01-01 00:00:05+00';
SELECT workload_tick() ->> 'claim_timed_out' AS claim_timed_out;
SELECT * FROM pg_temp.st(:'q');
SELECT pg_temp.disagree() AS disagree;
-- its queue deadline (10 s after it was due again) is found by the index
SET workload.clock_override = '2026-01-01 00:00:16+00';
SELECT workload_tick() ->> 'queue_timed_out' AS queue_timed_out;
SELECT * FROM pg_temp.st(:'q');
SELECT pg_temp.disagree() AS disagree;
