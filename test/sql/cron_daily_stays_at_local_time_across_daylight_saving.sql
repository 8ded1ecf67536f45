-- A daily 09:00 schedule in Europe/Berlin or America/New_York fires at 09:00 local time on every day of 2026, across both daylight-saving changes (SPEC section 4, "Scheduling and bulk work": cron slots are computed in the time zone).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the slots of 2026 against PostgreSQL's own reading of "that day, 09:00, in that zone"
WITH zones(zone) AS (VALUES ('Europe/Berlin'), ('America/New_York')),
ours AS (SELECT zone, s FROM zones,
           workload.cron_between('0 9 * * *', zone, '2026-01-01 00:00+00', '2027-01-01 00:00+00', 1000) s),
want AS (SELECT zone, (d + time '09:00') AT TIME ZONE zone AS s FROM zones,
           generate_series(0, 364) i, LATERAL (SELECT date '2026-01-01' + i AS d) x)
SELECT zone, (SELECT count(*) FROM ours o WHERE o.zone = z.zone) AS slots,
       (SELECT count(*) FROM ((SELECT s FROM ours o WHERE o.zone = z.zone EXCEPT ALL SELECT s FROM want w WHERE w.zone = z.zone)
                              UNION ALL
                              (SELECT s FROM want w WHERE w.zone = z.zone EXCEPT ALL SELECT s FROM ours o WHERE o.zone = z.zone)) d
       ) AS not_at_0900_local
FROM zones z ORDER BY zone;

-- in UTC that is two clock times a year, changing on the days the clocks change:
-- Berlin 08:00Z in winter (CET) and 07:00Z in summer (CEST, 29 March to 24 October);
-- New York 14:00Z in winter (EST) and 13:00Z in summer (EDT, 8 March to 31 October)
SELECT z AS zone, to_char(s, 'HH24:MI') AS utc, count(*) AS days,
       min(s)::date AS first_day, max(s)::date AS last_day
FROM unnest(ARRAY['Europe/Berlin', 'America/New_York']) z,
     workload.cron_between('0 9 * * *', z, '2026-01-01 00:00+00', '2027-01-01 00:00+00', 1000) s
GROUP BY z, to_char(s, 'HH24:MI') ORDER BY z, first_day;

-- the days around each change, UTC and local
SELECT s AS utc, s AT TIME ZONE 'Europe/Berlin' AS berlin
FROM workload.cron_slots('0 9 * * *', 'Europe/Berlin', '2026-03-27 00:00+00', 4) s ORDER BY s;
SELECT s AS utc, s AT TIME ZONE 'Europe/Berlin' AS berlin
FROM workload.cron_slots('0 9 * * *', 'Europe/Berlin', '2026-10-23 00:00+00', 4) s ORDER BY s;
SELECT s AS utc, s AT TIME ZONE 'America/New_York' AS new_york
FROM workload.cron_slots('0 9 * * *', 'America/New_York', '2026-03-06 00:00+00', 4) s ORDER BY s;
SELECT s AS utc, s AT TIME ZONE 'America/New_York' AS new_york
FROM workload.cron_slots('0 9 * * *', 'America/New_York', '2026-10-30 00:00+00', 4) s ORDER BY s;

-- the zone name is read as SET TIME ZONE reads it, so its case does not matter
SELECT (SELECT array_agg(s) FROM workload.cron_slots('0 9 * * *', 'europe/berlin', '2026-03-27 00:00+00', 4) s)
     = (SELECT array_agg(s) FROM workload.cron_slots('0 9 * * *', 'Europe/Berlin', '2026-03-27 00:00+00', 4) s)
       AS zone_name_in_any_case;
