-- A five-field cron that can never match (a day of the month that none of its months has) is refused, and one that matches rarely finds its slots without a long search (SPEC section 4, "Scheduling and bulk work": schedules).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- never: 31 February, 30 February, the 31st of the 30-day months
SELECT * FROM workload.cron_slots('0 0 31 2 *', 'UTC', '2026-01-01', 1);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('0 0 30 FEB *', 'UTC', '2026-01-01', 1);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('0 0 31 4,6,9,11 *', 'Europe/Berlin', '2026-01-01', 1);
\echo :SQLSTATE
-- a day-of-week field that starts with "*" does not rescue it (the two are ANDed)
SELECT * FROM workload.cron_slots('0 0 30-31 2 */2', 'UTC', '2026-01-01', 1);
\echo :SQLSTATE
SELECT workload.cron_prev('0 0 31 2 *', 'UTC', '2026-01-01');
\echo :SQLSTATE

-- rare but possible: 29 February (none in 2100, which is not a leap year)
SELECT array_agg(s::date ORDER BY s) AS leap_days
FROM workload.cron_slots('0 0 29 2 *', 'UTC', '2090-01-01', 4) s;
-- 29 February on a Sunday: 28 years apart, and 40 across 2100
SELECT array_agg(s::date ORDER BY s) AS leap_sundays
FROM workload.cron_slots('0 0 29 2 */7', 'UTC', '2026-01-01', 5) s;
-- with a restricted day of week, 31 February is not needed: Mondays in February fire
SELECT array_agg(s::date ORDER BY s) AS february_mondays
FROM workload.cron_slots('0 0 31 2 MON', 'UTC', '2026-01-01', 5) s;
-- the 31st where a month has one
SELECT array_agg(s::date ORDER BY s) AS thirty_firsts
FROM workload.cron_slots('0 0 31 * *', 'UTC', '2026-01-01', 7) s;
-- slots near the end of the timestamp range: only those that exist
SELECT array_agg(s ORDER BY s) AS last_leap_days
FROM workload.cron_slots('0 0 29 2 *', 'UTC', '294260-01-01', 10) s;
SELECT count(*) AS none_after_the_last FROM workload.cron_slots('0 0 29 2 *', 'UTC', '294276-03-01', 10);
SELECT workload.cron_prev('0 0 29 2 *', 'UTC', '4713-01-01 BC') AS none_before_the_first;

-- a thousand leap days (four thousand years) come back in one call
SELECT count(*) AS leap_days, min(s AT TIME ZONE 'Europe/Berlin')::date AS first,
       max(s AT TIME ZONE 'Europe/Berlin')::date AS last
FROM workload.cron_slots('0 0 29 2 *', 'Europe/Berlin', '2026-01-01', 1000) s;
