-- A schedule's cron takes the five standard fields with lists, ranges, steps and names, and the @-macros; when both day fields are restricted a day matches if either does (SPEC section 4, "Scheduling and bulk work": schedules).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- slots(cron, n): the first n slots after Thursday 2026-01-01 00:00 UTC, in UTC, with the weekday
CREATE FUNCTION pg_temp.slots(cron text, n int DEFAULT 6) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(to_char(s, 'Dy YYYY-MM-DD HH24:MI'), ', ' ORDER BY s)
    FROM workload.cron_slots(cron, 'UTC', '2026-01-01 00:00+00', n) s
$$;

-- single values, lists, ranges, steps
SELECT pg_temp.slots('5 4 * * *', 3) AS daily_04_05;
SELECT pg_temp.slots('0,20,40 * * * *') AS list;
SELECT pg_temp.slots('0 9-11 * * *') AS range;
SELECT pg_temp.slots('*/15 * * * *') AS star_step;
SELECT pg_temp.slots('1-10/3 0 * * *', 5) AS range_step;
SELECT pg_temp.slots('50/4 0 * * *', 4) AS start_step_runs_to_the_field_end;
SELECT pg_temp.slots('0 0 1,15 */5 *', 5) AS list_of_days_every_fifth_month;
SELECT pg_temp.slots('0 0 29-31 1 *') AS days_29_to_31_of_january;
SELECT pg_temp.slots('59 23 31 12 *', 2) AS last_minute_of_the_year;
SELECT pg_temp.slots('  0   12 * *  *  ', 2) AS extra_white_space;

-- names: months JAN-DEC and days SUN-SAT, in any case, alone, in ranges and lists
SELECT pg_temp.slots('0 0 1 mar,Sep,DEC *', 3) AS month_names;
SELECT pg_temp.slots('0 0 1 FEB-apr *', 3) AS month_name_range;
SELECT pg_temp.slots('0 8 * * MON-FRI', 6) AS weekday_range;
SELECT pg_temp.slots('0 8 * * sat,Sun', 4) AS weekend;
SELECT pg_temp.slots('0 8 * * 2-4', 3) = pg_temp.slots('0 8 * * TUE-THU', 3) AS numbers_equal_names;
-- day of week 0 and 7 are both Sunday
SELECT pg_temp.slots('0 8 * * 0', 3) = pg_temp.slots('0 8 * * 7', 3) AS seven_is_sunday,
       pg_temp.slots('0 8 * * 7', 2) AS sundays;
SELECT pg_temp.slots('0 8 * * 5-7', 3) AS friday_to_sunday;
SELECT pg_temp.slots('0 8 * * 0-7', 7) = pg_temp.slots('0 8 * * *', 7) AS zero_to_seven_is_every_day;
SELECT pg_temp.slots('0 8 * * */2', 4) AS every_other_weekday_from_sunday;

-- day of month and day of week: both restricted, a day matches if either does
-- (the 13th of each month, and every Friday)
SELECT pg_temp.slots('0 0 13 * FRI', 6) AS the_13th_or_a_friday;
-- one of them "*": only the other restricts
SELECT pg_temp.slots('0 0 * * FRI', 3) AS every_friday;
SELECT pg_temp.slots('0 0 13 * *', 3) AS every_13th;
-- a field that starts with "*" counts as unrestricted, also with a step (Vixie cron's rule):
-- odd days of the month that are Mondays, not odd days or Mondays
SELECT pg_temp.slots('0 0 */2 * MON', 4) AS odd_days_that_are_mondays;
SELECT pg_temp.slots('0 0 1-31/2 * MON', 4) AS odd_days_or_mondays;

-- the @-macros, in any case, equal to their five fields
SELECT m AS macro, pg_temp.slots(m, 3) = pg_temp.slots(f, 3) AS same_as_fields, pg_temp.slots(m, 3) AS slots
FROM (VALUES ('@hourly', '0 * * * *'), ('@daily', '0 0 * * *'), ('@midnight', '0 0 * * *'),
             ('@weekly', '0 0 * * 0'), ('@monthly', '0 0 1 * *'), ('@yearly', '0 0 1 1 *'),
             ('@annually', '0 0 1 1 *'), ('@DAILY', '0 0 * * *'), ('  @Hourly  ', '0 * * * *')) v(m, f)
ORDER BY 1;

-- slots are strictly after the given time: at a slot, the next one is returned
SELECT s FROM workload.cron_slots('0 * * * *', 'UTC', '2026-01-01 05:00+00', 1) s;
SELECT s FROM workload.cron_slots('0 * * * *', 'UTC', '2026-01-01 04:59:59.999999+00', 1) s;
