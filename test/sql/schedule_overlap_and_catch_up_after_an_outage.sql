-- overlap "skip" makes no new workload while the previous slot's is unfinished (the skipped slot never runs later), "allow" does; after an outage, catch_up "latest" fires only the most recent missed slot, "all" every missed one (at most 100 a tick, the rest on the next ticks), "none" none of them, while slots reached within a minute still fire (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- overlap: two every-minute schedules, one skip, one allow
SELECT workload_schedule('acme', 'billing', 'skip', '* * * * *', t.tpl()) ->> 'overlap' AS overlap;
SELECT workload_schedule('acme', 'billing', 'allow', '* * * * *', t.tpl(), overlap => 'allow') ->> 'overlap' AS overlap;
SELECT t.tick_at('2026-01-01 00:01:00+00');
-- 00:02: the 00:01 workloads are still READY: skip skips, allow makes another
SELECT t.tick_at('2026-01-01 00:02:00+00');
SELECT schedule, slot FROM t.fired();
SELECT schedule_id, event_type, slot, evidence ->> 'cause' AS cause,
       evidence ->> 'workload_id' = (SELECT w.workload_id FROM workload.workloads w JOIN workload.specs s
           ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
           WHERE s.idempotency_key = 'schedule:skip:2026-01-01T00:01:00Z') AS blocked_by_the_0001_workload
FROM workload.schedule_events ORDER BY sequence;
-- the skip schedule's workload runs to completion; the next slot fires again, the skipped one never
SELECT w.workload_id AS skip_id FROM workload.workloads w JOIN workload.specs s
    ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
    WHERE s.idempotency_key = 'schedule:skip:2026-01-01T00:01:00Z' \gset
SELECT claim_id, fencing_token FROM t.run(:'skip_id') \gset
SELECT workload_complete(:'skip_id', :'claim_id', 'w1', :fencing_token, 'r1', '{}') ->> 'outcome' AS outcome;
SELECT t.tick_at('2026-01-01 00:03:00+00');
SELECT schedule, slot FROM t.fired() WHERE schedule = 'skip';
-- a cancelled or dead-lettered previous workload does not hold the next back either
SELECT workload_cancel(d ->> 'last_workload_id', 'test') AS state
FROM workload_schedules('acme', 'billing') d WHERE d ->> 'schedule_id' = 'skip';
SELECT t.tick_at('2026-01-01 00:04:00+00');
SELECT schedule, slot FROM t.fired() WHERE schedule = 'skip';
SELECT workload_schedule_drop('acme', 'billing', 'skip'), workload_schedule_drop('acme', 'billing', 'allow');

-- catch_up: three every-ten-minutes schedules with overlap allow, made at 00:05;
-- the server is down from 00:05 until 03:00:30 (18 slots: 00:10 ... 03:00)
SET workload.clock_override = '2026-01-01 00:05:00+00';
SELECT d ->> 'schedule_id' AS schedule_id, d ->> 'catch_up' AS catch_up, d ->> 'next_run_at' AS next_run_at
FROM unnest(ARRAY[
    workload_schedule('acme', 'billing', 'latest', '*/10 * * * *', t.tpl(), 'UTC', 'allow', 'latest'),
    workload_schedule('acme', 'billing', 'all', '*/10 * * * *', t.tpl(), 'UTC', 'allow', 'all'),
    workload_schedule('acme', 'billing', 'none', '*/10 * * * *', t.tpl(), 'UTC', 'allow', 'none')]) d ORDER BY 1;
-- 03:00 is 30 seconds old, so not missed: it fires for all three
SELECT t.tick_at('2026-01-01 03:00:30+00');
SELECT schedule, count(*) AS slots, min(slot) AS first, max(slot) AS last
FROM t.fired() WHERE schedule IN ('latest', 'all', 'none') GROUP BY 1 ORDER BY 1;
-- latest: 02:50 (the most recent missed) and 03:00; none: 03:00 only
SELECT schedule, slot FROM t.fired() WHERE schedule IN ('latest', 'none');
-- the slots left out are recorded, as one event each
SELECT schedule_id, event_type, slot, evidence - 'catch_up' AS evidence
FROM workload.schedule_events ORDER BY sequence;
SELECT d ->> 'schedule_id' AS schedule_id, d ->> 'next_run_at' AS next_run_at, d ->> 'last_run_at' AS last_run_at
FROM workload_schedules('acme', 'billing') d ORDER BY 1;

-- all: at most 100 a tick, the rest on the next ticks; after a 20-hour outage (120 slots)
SET workload.clock_override = '2026-01-02 00:00:00+00';
SELECT workload_schedule('acme', 'billing', 'all', '*/10 * * * *', t.tpl(), 'UTC', 'allow', 'all') ->> 'next_run_at' AS next_run_at;
SELECT workload_tick() ->> 'more' AS more_before FROM (SELECT set_config('workload.clock_override', '2026-01-02 20:00:30+00', false)) x;
SELECT count(*) AS slots_after_first_tick FROM t.fired() WHERE schedule = 'all' AND slot >= '2026-01-02';
SELECT t.tick_at('2026-01-02 20:00:31+00');
SELECT count(*) AS slots_after_second_tick, min(slot) AS first, max(slot) AS last
FROM t.fired() WHERE schedule = 'all' AND slot >= '2026-01-02';
SELECT t.tick_at('2026-01-02 20:00:32+00');

-- a schedule's events are bounded: of 150 overlap skips, the latest 100 are kept
SELECT workload_schedule_drop('acme', 'billing', s) FROM unnest(ARRAY['all', 'latest', 'none']) s;
SELECT count(*) AS events_left_by_dropped_schedules FROM workload.schedule_events;
SET workload.clock_override = '2026-02-01 00:00:00+00';
SELECT workload_schedule('acme', 'billing', 'busy', '@every 1 second', t.tpl()) ->> 'overlap' AS overlap;
DO $$ BEGIN
    FOR i IN 1..151 LOOP
        PERFORM t.tick_at(timestamptz '2026-02-01 00:00:00+00' + i * interval '1 second');
    END LOOP;
END $$;
SELECT count(*) AS events, min(slot) AS first, max(slot) AS last
FROM workload.schedule_events WHERE schedule_id = 'busy';
SELECT count(*) AS workloads FROM t.fired() WHERE schedule = 'busy';
