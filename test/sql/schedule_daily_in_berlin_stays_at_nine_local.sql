-- A daily 09:00 schedule in Europe/Berlin fires at 09:00 local every day across both daylight-saving changes of a year (08:00 UTC in winter, 07:00 UTC in summer); a 02:30 that does not exist fires at 03:00 and one that happens twice fires once; pause stops it and resume starts again from the next slot after now (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
-- t.follow: tick n times, each ten seconds after the schedule's next slot
CREATE FUNCTION t.follow(id text, n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    nxt timestamptz;
BEGIN
    FOR i IN 1..n LOOP
        SELECT (d ->> 'next_run_at')::timestamptz INTO nxt
        FROM workload_schedules('acme', 'billing') d WHERE d ->> 'schedule_id' = id;
        PERFORM t.tick_at(nxt + interval '10 seconds');
    END LOOP;
END
$$;

-- spring: made on Friday 2026-03-27; the clocks go forward on Sunday 2026-03-29
SET workload.clock_override = '2026-03-27 12:00:00+00';
SELECT workload_schedule('acme', 'billing', 'berlin', '0 9 * * *', t.tpl(), 'Europe/Berlin', 'allow') ->> 'next_run_at' AS first_slot;
SELECT t.follow('berlin', 5);
SELECT workload_schedule_pause('acme', 'billing', 'berlin') ->> 'paused' AS paused;
-- while paused, nothing fires
SELECT t.tick_at('2026-06-01 07:00:10+00');

-- autumn: resumed on Friday 2026-10-23 at 12:00 UTC; the clocks go back on Sunday 2026-10-25
SET workload.clock_override = '2026-10-23 12:00:00+00';
SELECT d ->> 'paused' AS paused, d ->> 'next_run_at' AS next_run_at
FROM workload_schedule_resume('acme', 'billing', 'berlin') d;
SELECT t.follow('berlin', 5);

-- every slot at 09:00 in Berlin: 08:00 UTC in winter time, 07:00 UTC in summer time
SELECT slot, to_char(slot::timestamptz AT TIME ZONE 'Europe/Berlin', 'Dy YYYY-MM-DD HH24:MI') AS berlin
FROM t.fired() WHERE schedule = 'berlin';
SELECT d ->> 'next_run_at' AS next_run_at FROM workload_schedules('acme', 'billing') d;

-- 02:30 does not exist in Berlin on 2026-03-29 (02:00 jumps to 03:00): that slot fires
-- at 03:00 local; on 2026-10-25 02:30 happens twice and fires once
SET workload.clock_override = '2026-03-27 12:00:00+00';
SELECT workload_schedule('acme', 'billing', 'night', '30 2 * * *', t.tpl(), 'Europe/Berlin', 'allow') ->> 'next_run_at' AS first_slot;
SELECT t.follow('night', 3);
SET workload.clock_override = '2026-10-23 12:00:00+00';
SELECT workload_schedule('acme', 'billing', 'night', '30 2 * * *', t.tpl(), 'Europe/Berlin', 'allow') ->> 'next_run_at' AS first_slot;
SELECT t.follow('night', 2);
-- the second 02:30 of 2026-10-25 (01:30 UTC) fires nothing: the next slot is the 26th's
SELECT t.tick_at('2026-10-25 01:30:10+00');
SELECT d ->> 'next_run_at' AS next_run_at FROM workload_schedules('acme', 'billing') d WHERE d ->> 'schedule_id' = 'night';
SELECT t.follow('night', 1);
SELECT slot, to_char(slot::timestamptz AT TIME ZONE 'Europe/Berlin', 'Dy YYYY-MM-DD HH24:MI') AS berlin
FROM t.fired() WHERE schedule = 'night';
