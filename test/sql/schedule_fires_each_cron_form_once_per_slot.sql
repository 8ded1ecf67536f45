-- A schedule fires each slot of its cron once, whatever the form (five fields with lists, ranges, steps and names; @hourly, @daily, @weekly, @monthly, @yearly; @every), with idempotency_key schedule:<id>:<slot> and trigger "schedule"; a second tick at the same time fires nothing (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- made on Thursday 2026-01-01 at 00:00 UTC; catch_up none, so a slot more than a
-- minute old when a tick first sees it is left out (shown in test schedule_catch_up_after_an_outage)
SELECT d ->> 'schedule_id' AS schedule_id, d ->> 'next_run_at' AS first_slot, d ->> 'paused' AS paused
FROM unnest(ARRAY[
    workload_schedule('acme', 'billing', 'fields', '0,30 9-17/4 * JAN-MAR mon-fri', t.tpl(), 'UTC', 'allow', 'none'),
    workload_schedule('acme', 'billing', 'monthdays', '15 10 1,15 * *', t.tpl(), 'UTC', 'allow', 'none'),
    workload_schedule('acme', 'billing', 'hourly', '@hourly', t.tpl(), 'UTC', 'allow', 'none'),
    workload_schedule('acme', 'billing', 'daily', '@daily', t.tpl(), 'UTC', 'allow', 'none'),
    workload_schedule('acme', 'billing', 'weekly', '@WEEKLY', t.tpl(), 'UTC', 'allow', 'none'),
    workload_schedule('acme', 'billing', 'monthly', '@monthly', t.tpl(), 'UTC', 'allow', 'none'),
    workload_schedule('acme', 'billing', 'yearly', '@yearly', t.tpl('{"trigger": "api"}'), 'UTC', 'allow', 'none')]) d
ORDER BY 1;

-- nothing is due yet
SELECT t.tick_at('2026-01-01 00:59:59+00');
SELECT t.tick_at('2026-01-01 01:00:10+00');
SELECT t.tick_at('2026-01-01 01:00:20+00');
SELECT t.tick_at('2026-01-01 09:00:30+00');
SELECT t.tick_at('2026-01-01 10:15:00+00');
SELECT t.tick_at('2026-01-02 00:00:20+00');
SELECT t.tick_at('2026-01-04 00:00:05+00');
SELECT t.tick_at('2026-02-01 00:00:00+00');
SELECT t.tick_at('2027-01-01 00:00:30+00');
-- the same moment again: every slot is already handled
SELECT t.tick_at('2027-01-01 00:00:30+00');

-- each slot once, with its key and trigger "schedule" (the yearly template said "api")
SELECT schedule, slot, trigger FROM t.fired();
SELECT count(*) AS workloads, count(DISTINCT s.idempotency_key) AS keys,
       bool_and(w.state = 'READY') AS all_ready, bool_and(s.definition_id = 'invoice.render') AS from_template
FROM workload.specs s JOIN workload.workloads w ON w.tenant_id = s.tenant_id AND w.seq = s.workload_seq;

-- each schedule shows its last slot, the workload it made and its next slot
SELECT d ->> 'schedule_id' AS schedule_id, d ->> 'last_run_at' AS last_run_at,
       d ->> 'next_run_at' AS next_run_at, d ->> 'last_error' AS last_error,
       (d ->> 'last_workload_id') = (SELECT w.workload_id FROM workload.workloads w JOIN workload.specs s
            ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq
            WHERE s.idempotency_key = 'schedule:' || (d ->> 'schedule_id') || ':' ||
                  to_char((d ->> 'last_run_at')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) AS last_workload_is_that_slots
FROM workload_schedules('acme', 'billing') d ORDER BY 1;

-- @every: the multiples of its interval since the epoch, whatever the tick's phase;
-- every slot reached within a minute fires, whatever catch_up says
SET workload.clock_override = '2026-03-01 00:00:01+00';
SELECT workload_schedule('acme', 'billing', 'every5s', '@every 5 seconds', t.tpl(), 'UTC', 'allow', 'none') ->> 'next_run_at' AS first_slot;
SELECT t.tick_at('2026-03-01 00:00:04+00');
SELECT t.tick_at('2026-03-01 00:00:05+00');
SELECT t.tick_at('2026-03-01 00:00:05+00');
SELECT t.tick_at('2026-03-01 00:00:12.5+00');
SELECT t.tick_at('2026-03-01 00:00:31+00');
SELECT slot FROM t.fired() WHERE schedule = 'every5s';
SELECT d ->> 'next_run_at' AS next_run_at FROM workload_schedules('acme', 'billing') d WHERE d ->> 'schedule_id' = 'every5s';
