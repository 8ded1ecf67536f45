CREATE FUNCTION probe_run(tenant text, sql text, opts int, args text[] DEFAULT '{}') RETURNS text
    LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'probe_run';
-- same C, a second name so one can be distributed and the other not
CREATE FUNCTION probe_deleg(tenant text, sql text, opts int, args text[] DEFAULT '{}') RETURNS text
    LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'probe_run';
CREATE FUNCTION probe_where() RETURNS text LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'probe_where';
CREATE FUNCTION probe_guard() RETURNS trigger LANGUAGE C AS 'MODULE_PATHNAME', 'probe_guard';
CREATE FUNCTION probe_run_many(tenant text, sqls text[], opts int, args text[] DEFAULT '{}') RETURNS text
    LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'probe_run_many';
CREATE FUNCTION probe_deleg_many(tenant text, sqls text[], opts int, args text[] DEFAULT '{}') RETURNS text
    LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'probe_run_many';
CREATE FUNCTION probe_notify_deferred(channel text, payload text) RETURNS void
    LANGUAGE C STRICT VOLATILE AS 'MODULE_PATHNAME', 'probe_notify_deferred';
