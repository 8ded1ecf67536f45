-- A workload whose maintenance step fails is skipped, counted and reported in the tick's answer (with its error), and every other workload is still handled in the same pass; workload_recover_expired skips it with a warning (SPEC section 5, maintenance isolation).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- three claims whose leases lapse; the middle one's events cannot be written (a fault injected
-- by a trigger only a superuser can add)
SELECT t.create('one') AS one \gset
SELECT t.create('two') AS two \gset
SELECT t.create('three') AS three \gset
SELECT * FROM workload_claim_id(:'one', 'w1', '{}', '10 seconds') \gset one_
SELECT * FROM workload_claim_id(:'two', 'w2', '{}', '10 seconds') \gset two_
SELECT * FROM workload_claim_id(:'three', 'w3', '{}', '10 seconds') \gset three_
SELECT seq AS two_seq FROM workload.workloads WHERE workload_id = :'two' \gset
CREATE FUNCTION pg_temp.refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'injected fault for workload %', NEW.workload_seq USING ERRCODE = 'XX123';
END $$;
CREATE TRIGGER injected_fault BEFORE INSERT ON workload.event_rows FOR EACH ROW
    WHEN (NEW.workload_seq = :two_seq AND NEW.actor = 'workload.recovery')
    EXECUTE FUNCTION pg_temp.refuse_event();
SET workload.clock_override = '2026-01-01 00:01:00+00';

SELECT t.recovered, t.failed, t.errors -> 0 ->> 'workload_id' = :'two' AS reported,
       t.errors -> 0 ->> 'sqlstate' AS sqlstate, t.errors -> 0 ->> 'message' LIKE 'injected fault%' AS message
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, errors jsonb);
-- the others were recovered in that pass; the faulty one is untouched, still held
SELECT state, claimed FROM t.st(:'one');
SELECT state, claimed FROM t.st(:'three');
SELECT state, claimed FROM t.st(:'two');
SELECT count(*) AS events_of_two_since_claim FROM workload.event_log
WHERE workload_id = :'two' AND actor = 'workload.recovery';

-- workload_recover_expired skips it the same way, with a warning
SET client_min_messages = warning;
SELECT count(*) AS recovered FROM workload_recover_expired();
RESET client_min_messages;

-- once the fault is gone: the tick's next pass in this session passes it over for 10 s after
-- its failure (deferred, not tried again), the one after that recovers it
DROP TRIGGER injected_fault ON workload.event_rows;
SELECT t.recovered, t.failed, t.deferred, t.more
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int, more boolean);
SET workload.clock_override = '2026-01-01 00:01:10+00';
SELECT t.recovered, t.failed, t.deferred FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int);
SELECT state, claimed FROM t.st(:'two');
