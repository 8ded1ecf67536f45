-- A claim and a batch of completions write their events (and a claim its lease rows) together when the call ends, one multi-insert a page (store_direct.c, held appenders), 64 rows at most at a time: every event is there, in transition order, with its own sequence, and every lease row, also when a call writes more than 64. A row trigger that a superuser puts on workload.events (an audit, say) still fires once for each event, in the same order, and a trigger that refuses an event still aborts the call and leaves nothing behind.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT count(t.create('e' || g)) AS created FROM generate_series(1, 6) g;

-- without a trigger: a claim of three with start, then their batch of completions
CREATE TEMP TABLE c1 AS
SELECT workload_id, claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 3, start => true);
SELECT count(*) AS claimed FROM c1;
SELECT count(*) AS leases FROM workload.leases l JOIN workload.workloads w USING (tenant_id, seq)
WHERE w.workload_id IN (SELECT workload_id FROM c1);
SELECT outcome, count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', 'r-' || workload_id, 'output', '{}')) FROM c1)) GROUP BY outcome;
-- each workload: READY, CLAIMED, RUNNING, SUCCEEDED, in sequence order, the sequence unique
SELECT w.workload_id IN (SELECT workload_id FROM c1) AS batch,
       string_agg(e.to_state::text, ' ' ORDER BY e.sequence) AS states, count(*) AS events
FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
GROUP BY w.workload_id ORDER BY 1 DESC, 2;
SELECT count(DISTINCT sequence) = count(*) AS sequences_unique FROM workload.events;
SELECT count(*) AS leases_left FROM workload.leases;

-- with a row trigger on events
CREATE FUNCTION t.audit_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'event: % -> %', NEW.from_state, NEW.to_state;
    IF NEW.evidence ->> 'result_id' = 'r-refused' THEN
        RAISE EXCEPTION 'audit refuses this event';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER audit_event AFTER INSERT ON workload.event_rows
    FOR EACH ROW EXECUTE FUNCTION t.audit_event();
CREATE TEMP TABLE c2 AS
SELECT workload_id, claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 2, start => true);
SELECT outcome, count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', 'r-' || workload_id, 'output', '{}')) FROM c2)) GROUP BY outcome;
-- the trigger refuses one event of a batch: the whole call is undone
CREATE TEMP TABLE c3 AS
SELECT workload_id, claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 1, start => true);
SELECT count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', 'r-refused', 'output', '{}')) FROM c3));
SELECT workload_get(workload_id) ->> 'state' AS still_running,
       (SELECT count(*) FROM workload.results WHERE result_id = 'r-refused') AS results
FROM c3;
SELECT count(*) AS events_of_c3 FROM workload.events e JOIN workload.workloads w
    ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
WHERE w.workload_id IN (SELECT workload_id FROM c3);

DROP TRIGGER audit_event ON workload.event_rows;
DROP FUNCTION t.audit_event();

-- more rows than an appender holds at once (64): a claim of 70 with start writes
-- 140 events and 70 leases, their batch of completions 70 events
SELECT count(t.create('big' || g)) AS created FROM generate_series(1, 70) g;
CREATE TEMP TABLE c4 AS
SELECT workload_id, claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 70, start => true);
CREATE TEMP VIEW c4_leases AS SELECT count(*) AS n FROM workload.leases l
    JOIN workload.workloads w USING (tenant_id, seq) WHERE w.workload_id IN (SELECT workload_id FROM c4);
SELECT count(*) AS claimed, (SELECT n FROM c4_leases) AS leases FROM c4;
SELECT outcome, count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object(
    'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
    'result_id', 'r-' || workload_id, 'output', '{}')) FROM c4)) GROUP BY outcome;
SELECT states, count(*) AS workloads FROM (
    SELECT string_agg(e.to_state::text, ' ' ORDER BY e.sequence) AS states
    FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
    WHERE w.workload_id IN (SELECT workload_id FROM c4)
    GROUP BY w.workload_id) x
GROUP BY states;
SELECT count(DISTINCT sequence) = count(*) AS sequences_unique, (SELECT n FROM c4_leases) AS leases_left
FROM workload.events;
