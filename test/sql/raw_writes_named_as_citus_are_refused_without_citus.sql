-- A session that names itself as Citus's (application_name 'citus_internal gpid=...' or 'citus_rebalancer gpid=...') writes nothing raw where Citus is not installed, whatever its rights: any session may set that name (SPEC section 5.1, "The raw-write guard admits Citus's internal sessions only where Citus is installed and the session is really Citus's").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS rc_writer;
RESET client_min_messages;
SELECT t.create('k1') AS id \gset
SELECT count(*) AS citus_installed FROM pg_extension WHERE extname = 'citus';
-- a role that may write every table (pg_write_all_data), naming itself as Citus
CREATE ROLE rc_writer;
GRANT pg_write_all_data, pg_read_all_data TO rc_writer;
SELECT t.fingerprint() AS before \gset
SET ROLE rc_writer;
SET application_name = 'citus_internal gpid=10000000001';
UPDATE workload.workload_rows SET priority = 99;
\echo :SQLSTATE
DELETE FROM workload.queue;
\echo :SQLSTATE
SET application_name = 'citus_rebalancer gpid=10000000001';
UPDATE workload.runs SET state = 'SUCCEEDED';
\echo :SQLSTATE
RESET application_name;
RESET ROLE;
-- a superuser naming itself as Citus, too
SET application_name = 'citus_internal gpid=10000000001';
UPDATE workload.workload_rows SET priority = 99;
\echo :SQLSTATE
INSERT INTO workload.tenant_members (role, tenant_id, application_id, role_oid)
VALUES ('rc_writer', 'acme', 'billing', 'rc_writer'::regrole);
\echo :SQLSTATE
RESET application_name;
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT state FROM workload.workloads WHERE workload_id = :'id';
SET client_min_messages = warning;
DROP ROLE rc_writer;
