-- The schedule time-rule functions the cron_* tests call (included with \i after
-- helpers.sql, not a test itself).  The install script of the next version is to
-- declare them the same way, with AS 'MODULE_PATHNAME'; until then this file does.
CREATE OR REPLACE FUNCTION workload.cron_slots(cron text, timezone text, after timestamptz, n integer)
    RETURNS SETOF timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS '$libdir/workload', 'workload_cron_slots';
CREATE OR REPLACE FUNCTION workload.cron_between(cron text, timezone text, after timestamptz,
        until timestamptz, lim integer)
    RETURNS SETOF timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS '$libdir/workload', 'workload_cron_between';
CREATE OR REPLACE FUNCTION workload.cron_prev(cron text, timezone text, at timestamptz)
    RETURNS timestamptz LANGUAGE C IMMUTABLE PARALLEL SAFE
    AS '$libdir/workload', 'workload_cron_prev';
