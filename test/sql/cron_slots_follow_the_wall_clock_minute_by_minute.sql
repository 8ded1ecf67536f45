-- Every cron slot is the first instant at which the zone's wall clock, as AT TIME ZONE reads it, shows a matching minute: checked minute by minute around the clock changes of six zones (SPEC section 4, "Scheduling and bulk work": schedules).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- matches(l, ...): the cron's rule for a local minute l, written out in SQL (both day
-- fields restricted: either may match; otherwise both must)
CREATE FUNCTION pg_temp.matches(l timestamp, mins int[], hrs int[], doms int[], dows int[],
        either_day boolean) RETURNS boolean LANGUAGE sql AS $$
    SELECT extract(minute FROM l)::int = ANY (mins) AND extract(hour FROM l)::int = ANY (hrs)
       AND CASE WHEN either_day
                THEN extract(day FROM l)::int = ANY (doms) OR extract(dow FROM l)::int = ANY (dows)
                ELSE extract(day FROM l)::int = ANY (doms) AND extract(dow FROM l)::int = ANY (dows) END
$$;
-- model(zone, a, b, ...): the slots in (a, b] found by walking every UTC minute: minute t
-- is a slot when a matching local minute lies after the latest wall-clock minute shown
-- before t and at or before the one shown at t (a jump forward passes several; a
-- doubled stretch passes none until the clock is past what it showed before)
CREATE FUNCTION pg_temp.model(zone text, a timestamptz, b timestamptz, mins int[], hrs int[],
        doms int[], dows int[], either_day boolean) RETURNS SETOF timestamptz LANGUAGE sql AS $$
    WITH walk AS (
        SELECT t, t AT TIME ZONE zone AS w,
               max(t AT TIME ZONE zone) OVER (ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS shown
        FROM generate_series(a - interval '1 day', b, interval '1 minute') t)
    SELECT t FROM walk
    WHERE t > a AND EXISTS (
        SELECT 1 FROM generate_series(shown + interval '1 minute', w, interval '1 minute') l
        WHERE pg_temp.matches(l, mins, hrs, doms, dows, either_day))
$$;

CREATE TEMP TABLE cases (zone text, a timestamptz, b timestamptz, cron text, mins int[], hrs int[],
                         doms int[], dows int[], either_day boolean);
INSERT INTO cases
SELECT zone, a, b, cron, mins, coalesce(hrs, array(SELECT generate_series(0, 23))),
       coalesce(doms, array(SELECT generate_series(1, 31))), coalesce(dows, array(SELECT generate_series(0, 6))),
       coalesce(either, false)
FROM (VALUES
    -- Berlin: 02:00 -> 03:00 on 29 March, 03:00 -> 02:00 on 25 October 2026
    ('Europe/Berlin', '2026-03-28 18:00+00'::timestamptz, '2026-03-29 06:00+00'::timestamptz, '*/15 * * * *', '{0,15,30,45}'::int[], NULL::int[], NULL::int[], NULL::int[], NULL::boolean),
    ('Europe/Berlin', '2026-10-24 18:00+00', '2026-10-25 06:00+00', '*/15 * * * *', '{0,15,30,45}', NULL, NULL, NULL, NULL),
    ('Europe/Berlin', '2026-10-24 18:00+00', '2026-10-25 06:00+00', '7 1-3 * * *', '{7}', '{1,2,3}', NULL, NULL, NULL),
    -- New York: 8 March and 1 November 2026
    ('America/New_York', '2026-03-08 00:00+00', '2026-03-08 12:00+00', '*/20 * * * *', '{0,20,40}', NULL, NULL, NULL, NULL),
    ('America/New_York', '2026-11-01 00:00+00', '2026-11-01 12:00+00', '*/20 * * * *', '{0,20,40}', NULL, NULL, NULL, NULL),
    -- Lord Howe Island moves its clocks by 30 minutes
    ('Australia/Lord_Howe', '2026-04-04 12:00+00', '2026-04-05 00:00+00', '*/10 * * * *', '{0,10,20,30,40,50}', NULL, NULL, NULL, NULL),
    ('Australia/Lord_Howe', '2026-10-03 12:00+00', '2026-10-04 00:00+00', '*/10 * * * *', '{0,10,20,30,40,50}', NULL, NULL, NULL, NULL),
    -- Troll station moves its clocks by two hours
    ('Antarctica/Troll', '2026-03-28 22:00+00', '2026-03-29 04:00+00', '5,35 * * * *', '{5,35}', NULL, NULL, NULL, NULL),
    ('Antarctica/Troll', '2026-10-24 22:00+00', '2026-10-25 04:00+00', '5,35 * * * *', '{5,35}', NULL, NULL, NULL, NULL),
    -- Havana changes at midnight, so whole days' first minutes are missing or doubled
    ('America/Havana', '2026-03-07 12:00+00', '2026-03-09 00:00+00', '*/30 * * * *', '{0,30}', NULL, NULL, NULL, NULL),
    ('America/Havana', '2026-10-31 12:00+00', '2026-11-02 00:00+00', '0 0 * * *', '{0}', '{0}', NULL, NULL, NULL),
    -- Samoa skipped 30 December 2011 altogether
    ('Pacific/Apia', '2011-12-29 00:00+00', '2011-12-31 12:00+00', '0 * * * *', '{0}', NULL, NULL, NULL, NULL),
    ('Pacific/Apia', '2011-12-28 00:00+00', '2012-01-01 00:00+00', '30 9 30 12 FRI', '{30}', '{9}', '{30}', '{5}', true)
) v(zone, a, b, cron, mins, hrs, doms, dows, either);

-- counts are not shown: they follow the zone data the server has; the model and the C agree
-- whatever that data says
SELECT c.zone, c.cron, c.a::date AS day, count(o) > 0 AS found_slots,
       count(o) = (SELECT count(*) FROM pg_temp.model(c.zone, c.a, c.b, c.mins, c.hrs, c.doms, c.dows, c.either_day)) AS as_many_as_the_model,
       (SELECT count(*) FROM ((SELECT s FROM workload.cron_between(c.cron, c.zone, c.a, c.b, 1000) s
                               EXCEPT ALL SELECT * FROM pg_temp.model(c.zone, c.a, c.b, c.mins, c.hrs, c.doms, c.dows, c.either_day))
                              UNION ALL
                              (SELECT * FROM pg_temp.model(c.zone, c.a, c.b, c.mins, c.hrs, c.doms, c.dows, c.either_day)
                               EXCEPT ALL SELECT s FROM workload.cron_between(c.cron, c.zone, c.a, c.b, 1000) s)) d) AS differ
FROM cases c LEFT JOIN LATERAL workload.cron_between(c.cron, c.zone, c.a, c.b, 1000) o ON true
GROUP BY c.zone, c.cron, c.a, c.b, c.mins, c.hrs, c.doms, c.dows, c.either_day
ORDER BY c.zone, c.a, c.cron;
