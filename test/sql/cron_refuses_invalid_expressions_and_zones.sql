-- An invalid cron, time zone or argument is refused with WORKLOAD_INVALID and a detail that says what is wrong (SPEC section 4, "Scheduling and bulk work": schedules; section 4: a NULL argument is WORKLOAD_INVALID).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- try(cron, zone): the SQLSTATE and DETAIL of asking for the first slot ('00000' if it ran)
CREATE FUNCTION pg_temp.try(cron text, zone text DEFAULT 'UTC', OUT code text, OUT detail text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM * FROM workload.cron_slots(cron, zone, '2026-01-01 00:00+00', 1);
    code := '00000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL;
END $$;

-- field counts, empty text, unknown macros
SELECT c AS cron, r.* FROM unnest(ARRAY['', '   ', '* * * *', '* * * * * *', '0 0 * * * 2026', '*',
                                         '@reboot', '@dailyy', '@daily 0', '@every', '@every   ', '@ every 5 seconds',
                                         'every 5 seconds']) c, pg_temp.try(c) r;
-- values out of range, in each field
SELECT c AS cron, r.* FROM unnest(ARRAY['60 * * * *', '0 24 * * *', '0 0 0 * *', '0 0 32 * *', '0 0 * 0 *',
                                         '0 0 * 13 *', '0 0 * * 8', '99999999999999999999 * * * *',
                                         '0 0 1-32 * *', '5,60 * * * *']) c, pg_temp.try(c) r;
-- not numbers, unknown or misplaced names, empty items, bad ranges
SELECT c AS cron, r.* FROM unnest(ARRAY['x * * * *', '-5 * * * *', '+5 * * * *', '5.0 * * * *',
                                         '0 0 * JANUARY *', '0 0 * FOO *', '0 0 * MON *', '0 0 * * JAN',
                                         '0 0 * * MONDAY', 'MON * * * *', '0 0 JAN * *', '1,,2 * * * *',
                                         '1, * * * *', ',1 * * * *', '5- * * * *', '-5- * * * *',
                                         '1-2-3 * * * *', '30-10 * * * *', '0 0 * * FRI-MON', '0 0 * DEC-JAN *',
                                         '** * * * *', '*-5 * * * *']) c, pg_temp.try(c) r;
-- bad steps
SELECT c AS cron, r.* FROM unnest(ARRAY['*/0 * * * *', '*/60 * * * *', '0 */24 * * *', '0 0 */32 * *',
                                         '0 0 * */13 *', '0 0 * * */8', '*/ * * * *', '*/x * * * *',
                                         '*/-1 * * * *', '/5 * * * *', '1-10/0 * * * *', '*/5/2 * * * *',
                                         '*/99999999999 * * * *']) c, pg_temp.try(c) r;
-- @every: not an interval, months or years, shorter than a second, not whole seconds, too long
SELECT c AS cron, r.* FROM unnest(ARRAY['@every 0 seconds', '@every 0', '@every 0.5 seconds',
                                         '@every 999 milliseconds', '@every 1.5 seconds', '@every -5 minutes',
                                         '@every 5 minutes ago', '@every 1 month', '@every 1 year',
                                         '@every P1M', '@every 1 mon -30 days', '@every 36526 days',
                                         '@every 876625 hours', '@every 9999999999 hours', '@every 5 fortnights',
                                         '@every soon']) c, pg_temp.try(c) r;
-- the edges that are allowed: 1 second and 36525 days; a bare number is seconds, as in
-- PostgreSQL's interval input
SELECT c AS cron, r.* FROM unnest(ARRAY['@every 1 second', '@every 36525 days', '@every 876600 hours',
                                         '@every 5']) c, pg_temp.try(c) r;

-- time zones: unknown, empty, an abbreviation, white space around a name, too long
SELECT z AS zone, r.* FROM unnest(ARRAY['Mars/Olympus', 'Europe/Berlín', '', 'CEST', ' Europe/Berlin',
                                         'Europe/Berlin ', 'Europe//Berlin', '../../etc/passwd']) z,
    pg_temp.try('0 9 * * *', z) r;
SELECT length(repeat('x', 256)) AS zone_bytes, r.* FROM pg_temp.try('0 9 * * *', repeat('x', 256)) r;
-- POSIX zone specifications are no IANA names (SPEC section 5.1): refused,
-- however PostgreSQL's SET TIME ZONE would read them
SELECT z AS zone, r.code FROM unnest(ARRAY['BBB0:01', 'BBB0:02', 'EST5EDT,M3.2.0,M11.1.0', '<+03>-3',
                                            'UTC+5', 'XXX-3']) z,
    pg_temp.try('0 9 * * *', z) r;
-- an IANA name in any case is the zone pg_timezone_names spells
SELECT z AS zone, r.code FROM unnest(ARRAY['europe/berlin', 'UTC', 'utc', 'America/New_York', 'EST5EDT']) z,
    pg_temp.try('0 9 * * *', z) r;
-- an unknown zone is refused for @every too, although its slots do not depend on it
SELECT r.* FROM pg_temp.try('@every 5 seconds', 'Mars/Olympus') r;

-- huge strings: refused by length, without echoing them
SELECT r.* FROM pg_temp.try(repeat('*', 1000000)) r;
SELECT r.* FROM pg_temp.try('@every ' || repeat('1', 994)) r;
SELECT r.* FROM pg_temp.try(repeat(' ', 2000) || '0 9 * * *') r;
-- 1000 bytes is allowed
SELECT r.* FROM pg_temp.try(rpad('0 9 * * *', 1000)) r;

-- NULL in each argument, an infinite time, a count out of 1-1000
SELECT * FROM workload.cron_slots(NULL, 'UTC', '2026-01-01', 1);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('* * * * *', NULL, '2026-01-01', 1);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('* * * * *', 'UTC', NULL, 1);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('* * * * *', 'UTC', '2026-01-01', NULL);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('* * * * *', 'UTC', 'infinity', 1);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('* * * * *', 'UTC', '2026-01-01', 0);
\echo :SQLSTATE
SELECT * FROM workload.cron_slots('* * * * *', 'UTC', '2026-01-01', 1001);
\echo :SQLSTATE
SELECT * FROM workload.cron_between('* * * * *', 'UTC', '2026-01-01', NULL, 10);
\echo :SQLSTATE
SELECT * FROM workload.cron_between('* * * * *', 'UTC', '2026-01-01', '-infinity', 10);
\echo :SQLSTATE
SELECT * FROM workload.cron_between('* * * * *', 'UTC', '2026-01-01', '2026-01-02', -1);
\echo :SQLSTATE
SELECT workload.cron_prev('* * * * *', 'UTC', NULL);
\echo :SQLSTATE
SELECT workload.cron_prev(NULL, 'UTC', '2026-01-01');
\echo :SQLSTATE
SELECT workload.cron_prev('* * * * *', NULL, '2026-01-01');
\echo :SQLSTATE
