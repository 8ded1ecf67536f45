-- The tick's missed-slot helpers: the latest slot at or before a time, and the slots in (a, b] oldest first up to a limit, so catch_up can take the most recent or at most 100 a tick (SPEC section 4, "Scheduling and bulk work": catch_up).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the latest slot at or before: a slot itself counts, a microsecond earlier does not
SELECT workload.cron_prev('*/5 * * * *', 'UTC', '2026-01-01 10:05+00') AS at_a_slot,
       workload.cron_prev('*/5 * * * *', 'UTC', '2026-01-01 10:04:59.999999+00') AS just_before,
       workload.cron_prev('@every 5 seconds', 'UTC', '2026-01-01 10:05:04.5+00') AS every_5_s,
       workload.cron_prev('0 0 29 2 *', 'UTC', '2026-06-01 00:00+00') AS last_leap_day,
       workload.cron_prev('30 2 * * *', 'Europe/Berlin', '2026-03-29 01:30+00') AS berlin_gap_day;

-- a minutely schedule down for three hours: 180 missed slots; catch_up "all" takes at most
-- 100 a tick, oldest first, and the next tick goes on from the last one it took
SELECT count(*) AS first_tick, min(s) AS oldest, max(s) AS newest
FROM workload.cron_between('* * * * *', 'UTC', '2026-01-01 09:00+00', '2026-01-01 12:00+00', 100) s;
SELECT count(*) AS second_tick, min(s) AS oldest, max(s) AS newest
FROM workload.cron_between('* * * * *', 'UTC', '2026-01-01 10:40+00', '2026-01-01 12:00+00', 100) s;
-- the interval is (after, until]: a slot at `until` is in, one at `after` is not
SELECT array_agg(s ORDER BY s) AS half_open
FROM workload.cron_between('0 * * * *', 'UTC', '2026-01-01 09:00+00', '2026-01-01 11:00+00', 100) s;
SELECT count(*) AS empty_when_until_is_before_after
FROM workload.cron_between('* * * * *', 'UTC', '2026-01-01 12:00+00', '2026-01-01 09:00+00', 100) s;
-- catch_up "latest" after a long outage: one step back from now, however many were missed
SELECT workload.cron_prev('* * * * *', 'UTC', '2026-03-01 08:30:30+00') AS latest_minutely,
       workload.cron_prev('0 9 * * MON', 'Europe/Berlin', '2026-03-01 08:30+00') AS latest_monday_0900;

-- at each of 1001 instants across Berlin's autumn change, for three crons: the latest slot
-- at or before t (p) and the first after it (n) surround t, nothing lies between them, and
-- p is the latest slot before n
SELECT cron, count(*) AS instants,
       count(*) FILTER (WHERE NOT (p <= t AND t < n)) AS not_around,
       count(*) FILTER (WHERE (SELECT s FROM workload.cron_slots(cron, 'Europe/Berlin', p, 1) s) <> n) AS slot_between,
       count(*) FILTER (WHERE workload.cron_prev(cron, 'Europe/Berlin', n) <> n) AS next_not_a_slot
FROM (SELECT cron, t, workload.cron_prev(cron, 'Europe/Berlin', t) AS p,
             (SELECT s FROM workload.cron_slots(cron, 'Europe/Berlin', t, 1) s) AS n
      FROM unnest(ARRAY['*/15 * * * *', '30 2 * * *', '@every 7 minutes']) cron,
           generate_series(timestamptz '2026-10-23 00:00+00', '2026-10-27 00:00+00', interval '4 days' / 1000) t) x
GROUP BY cron ORDER BY cron;
