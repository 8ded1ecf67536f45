-- A local time that does not exist that day fires when the clocks' jump ends, and one that exists twice fires once, at its first occurrence (SPEC section 4, "Scheduling and bulk work": schedules).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';

-- local(cron, zone, after, n): the first n slots after `after`, in UTC, in local time, and the
-- zone's UTC offset at that instant
CREATE FUNCTION pg_temp.local(cron text, zone text, after timestamptz, n int)
RETURNS TABLE (utc text, local text, utc_offset interval) LANGUAGE sql AS $$
    SELECT to_char(s, 'MM-DD HH24:MI"Z"'), to_char(s AT TIME ZONE zone, 'MM-DD HH24:MI'),
           (s AT TIME ZONE zone) - (s AT TIME ZONE 'UTC')
    FROM workload.cron_slots(cron, zone, after, n) s ORDER BY s
$$;

-- Berlin, 29 March 2026: 02:00 CET jumps to 03:00 CEST, so 02:30 fires at 03:00 CEST (01:00Z)
SELECT * FROM pg_temp.local('30 2 * * *', 'Europe/Berlin', '2026-03-27 12:00+00', 4);
-- Berlin, 25 October 2026: 03:00 CEST goes back to 02:00 CET, so 02:30 is shown twice;
-- it fires once, at the first (CEST, 00:30Z), and 24 hours after the day before
SELECT * FROM pg_temp.local('30 2 * * *', 'Europe/Berlin', '2026-10-23 12:00+00', 4);
SELECT count(*) AS slots_on_25_october
FROM workload.cron_between('30 2 * * *', 'Europe/Berlin', '2026-10-24 12:00+00', '2026-10-25 12:00+00', 10);

-- every 15 minutes through both changes: the missing 02:00-02:45 fire once, when the jump
-- ends (one slot, at 03:00 CEST); the doubled 02:00-02:45 fire once, the first time round,
-- and nothing fires while the clock shows them again
SELECT * FROM pg_temp.local('*/15 * * * *', 'Europe/Berlin', '2026-03-29 00:30+00', 4);
SELECT * FROM pg_temp.local('*/15 * * * *', 'Europe/Berlin', '2026-10-24 23:30+00', 8);
-- asked from inside the second pass (02:10 CET, 01:10Z), the next slot is 03:00 CET: the
-- 02:15-02:45 shown again already fired the first time round
SELECT * FROM pg_temp.local('*/15 * * * *', 'Europe/Berlin', '2026-10-25 01:10+00', 2);

-- New York, 8 March 2026: 02:00 EST jumps to 03:00 EDT; 02:30 fires at 03:00 EDT (07:00Z)
SELECT * FROM pg_temp.local('30 2 * * *', 'America/New_York', '2026-03-06 12:00+00', 4);
-- New York, 1 November 2026: 02:00 EDT goes back to 01:00 EST; 01:30 fires once, at 01:30 EDT
SELECT * FROM pg_temp.local('30 1 * * *', 'America/New_York', '2026-10-30 12:00+00', 4);
-- an hourly cron: 01:00 is shown twice and fires once; the next slot is 02:00 EST
SELECT * FROM pg_temp.local('0 * * * *', 'America/New_York', '2026-11-01 03:30+00', 4);

-- the latest slot at or before a time in the doubled hour is the first 01:30 (EDT)
SELECT workload.cron_prev('30 1 * * *', 'America/New_York', '2026-11-01 06:45+00') AS latest_at_0145_est;
-- and from there the next slot is the next day's: the doubled 01:30 does not fire again
SELECT s AS next_after_0145_est FROM workload.cron_slots('30 1 * * *', 'America/New_York', '2026-11-01 06:45+00', 1) s;

-- a zone whose clocks move by 30 minutes (Lord Howe Island): on 5 April 2026 02:00 goes back
-- to 01:30, so 01:45 is shown twice and fires at the first; on 4 October 02:00 jumps to 02:30,
-- so 02:15 does not exist and fires at 02:30
SELECT * FROM pg_temp.local('45 1 * * *', 'Australia/Lord_Howe', '2026-04-03 12:00+00', 3);
SELECT * FROM pg_temp.local('15 2 * * *', 'Australia/Lord_Howe', '2026-10-02 12:00+00', 3);
-- a day that did not exist at all (Samoa skipped 30 December 2011): its noon fires once,
-- when the skipped day ends
SELECT * FROM pg_temp.local('0 12 * * *', 'Pacific/Apia', '2011-12-28 12:00+00', 3);
