-- test/clients/setup.sql: the database the client library tests run against
-- (loaded by test/clients/lib.sh; not a test itself).  The extension, and
-- login roles as an application would have them: wlc_app (workload_client),
-- wlc_worker (workload_worker), and wlc_other (another workload_worker, which
-- the tests of the channel's renaming add to a tenant and remove).  Each test
-- makes its own tenant and adds wlc_app and wlc_worker to it (as the
-- superuser the tests also sign grants as).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS workload CASCADE;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'wlc_app') THEN
        CREATE ROLE wlc_app LOGIN IN ROLE workload_client;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'wlc_worker') THEN
        CREATE ROLE wlc_worker LOGIN IN ROLE workload_worker;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'wlc_other') THEN
        CREATE ROLE wlc_other LOGIN IN ROLE workload_worker;
    END IF;
END
$$;
