-- "@every <interval>" fires on the multiples of its interval since the Unix epoch, whatever the time asked from and whatever the time zone; days count as 86400 seconds (SPEC section 4, "Scheduling and bulk work": schedules).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- slots(cron, after, n, tz): the first n slots after `after`, as UTC clock times
CREATE FUNCTION pg_temp.slots(cron text, after timestamptz, n int DEFAULT 4, tz text DEFAULT 'UTC')
RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(to_char(s, 'YYYY-MM-DD HH24:MI:SS'), ', ' ORDER BY s)
    FROM workload.cron_slots(cron, tz, after, n) s
$$;

-- @every 5 seconds fires at :00, :05, :10, ... from any starting phase
SELECT a AS after, pg_temp.slots('@every 5 seconds', a) AS slots
FROM unnest(ARRAY['2026-01-01 00:00:00+00', '2026-01-01 00:00:00.000001+00', '2026-01-01 00:00:03.7+00',
                  '2026-01-01 00:00:04.999999+00', '2026-01-01 00:00:05+00', '2026-01-01 00:00:59+00']::timestamptz[]) a
ORDER BY a;
-- every slot is a multiple of the interval since 1970-01-01 00:00:00 UTC
SELECT count(*) AS slots, bool_and(extract(epoch FROM s)::bigint % 5 = 0) AS multiples_of_5_s
FROM workload.cron_slots('@every 5 seconds', 'UTC', '2026-03-29 00:59:58.25+00', 1000) s;
SELECT bool_and(extract(epoch FROM s)::bigint % 5400 = 0) AS multiples_of_90_min,
       pg_temp.slots('@every 90 minutes', '2026-01-01 00:00+00') AS slots
FROM workload.cron_slots('@every 90 minutes', 'UTC', '2026-01-01 00:00+00', 100) s;
SELECT bool_and(extract(epoch FROM s)::bigint % 7 = 0) AS multiples_of_7_s,
       pg_temp.slots('@every 7 seconds', '2026-01-01 00:00+00') AS slots
FROM workload.cron_slots('@every 7 seconds', 'UTC', '2026-01-01 00:00+00', 100) s;

-- the time zone does not move them: @every 1 day is 00:00 UTC in Berlin too, also across
-- the change to summer time; @every 1 week fires on Thursdays (1970-01-01 was one)
SELECT pg_temp.slots('@every 1 day', '2026-03-27 12:00+00', 4, 'Europe/Berlin') AS every_day_in_berlin;
SELECT pg_temp.slots('@every 1 day', '2026-03-27 12:00+00', 4, 'UTC') AS every_day_in_utc;
SELECT string_agg(to_char(s, 'Dy YYYY-MM-DD HH24:MI'), ', ' ORDER BY s) AS every_week
FROM workload.cron_slots('@every 1 week', 'America/New_York', '2026-01-01 00:00+00', 3) s;
-- a day is 86400 seconds: "1 day" and "24 hours" name the same slots
SELECT pg_temp.slots('@every 1 day', '2026-10-24 00:00+00', 5, 'Europe/Berlin')
     = pg_temp.slots('@every 24 hours', '2026-10-24 00:00+00', 5, 'Europe/Berlin') AS day_is_24_hours;

-- any PostgreSQL interval spelling, ISO 8601 included, and the keyword in any case
SELECT iv AS every, pg_temp.slots('@every ' || iv, '2026-01-01 00:00:01+00', 3) AS slots
FROM unnest(ARRAY['1 second', '30 seconds', 'PT30S', '1 minute 30 seconds', '00:02:00', '1.5 minutes',
                  '2 hours', '1 day 12 hours', '0.5 days']) iv;
SELECT pg_temp.slots('@EVERY 10 seconds', '2026-01-01 00:00:01+00', 3) AS upper_case_keyword;
SELECT pg_temp.slots('  @every    10 seconds  ', '2026-01-01 00:00:01+00', 3) AS extra_white_space;

-- before the epoch too
SELECT pg_temp.slots('@every 7 seconds', '1969-12-31 23:59:50+00', 4) AS around_the_epoch;
