-- A restore that the raw-write guard refuses (a dump's COPY into a workload table in a session with row_security off, as pg_restore and every pg_dump script run it, but without session_replication_role = replica) carries a HINT naming the documented command; other refused writes carry none, and nothing is written (SPEC section 5; docs/operations.md, "Backup and restore"; test/t/023 runs a real pg_restore).
\set SHOW_CONTEXT never
SELECT count(*) AS members_before FROM workload.tenant_members \gset
-- as a restore loads a table: row_security off, then COPY into the table itself
SET row_security = off;
COPY workload.tenant_members FROM stdin;
restore_role	acme	billing
\.
-- in the same session an INSERT is refused without the hint: no restore writes so
INSERT INTO workload.tenant_members VALUES ('restore_role', 'acme', 'billing');
\echo :SQLSTATE
RESET row_security;
-- a COPY by hand, outside a restore's settings: refused, without the hint
COPY workload.tenant_members FROM stdin;
restore_role	acme	billing
\.
-- nothing was written
SELECT count(*) = :members_before AS nothing_written FROM workload.tenant_members;
