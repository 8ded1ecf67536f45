-- The schedule functions refuse NULLs, an invalid cron, time zone, overlap, catch_up or template, and unknown schedules (WORKLOAD_INVALID, WORKLOAD_SECRET_REJECTED, WORKLOAD_NOT_FOUND) and act only in tenants the caller is a member of (WORKLOAD_UNAUTHORIZED); a refused call writes nothing, and a schedule whose maker has left the tenant makes no more workloads (SPEC section 4, "Scheduling and bulk work"; section 5).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS sc_member; DROP ROLE IF EXISTS sc_outsider;
RESET client_min_messages;
CREATE ROLE sc_member; GRANT workload_client TO sc_member;
CREATE ROLE sc_outsider; GRANT workload_client TO sc_outsider;
SELECT workload_add_tenant_member('sc_member', 'acme', 'billing');
SELECT workload_add_tenant_member('sc_outsider', 'globex', 'billing');
SELECT t.tpl() AS tpl, t.tpl('{}', 'globex', 'billing') AS globex_tpl \gset

-- a member makes, lists, pauses, resumes and drops its tenant's schedules
SET ROLE sc_member;
SELECT d ->> 'schedule_id' AS schedule_id, d ->> 'created_by' AS created_by, d ->> 'next_run_at' AS next_run_at
FROM workload_schedule('acme', 'billing', 'hourly', '@hourly', :'tpl', overlap => 'allow') d;
SELECT workload_schedule('acme', 'billing', 'gone', '@daily', :'tpl') ->> 'schedule_id' AS schedule_id;
SELECT workload_schedule_drop('acme', 'billing', 'gone');
SELECT d ->> 'schedule_id' AS schedule_id, d ->> 'paused' AS paused FROM workload_schedules('acme', 'billing') d;
RESET ROLE;

-- an outsider: every function on acme is refused and changes nothing; its own tenant works
SELECT md5(string_agg(s::text, '|' ORDER BY schedule_id)) AS before FROM workload.schedules s \gset
SET ROLE sc_outsider;
SELECT workload_schedule('acme', 'billing', 'hourly', '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'mine', '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule_pause('acme', 'billing', 'hourly');
\echo :SQLSTATE
SELECT workload_schedule_resume('acme', 'billing', 'hourly');
\echo :SQLSTATE
SELECT workload_schedule_drop('acme', 'billing', 'hourly');
\echo :SQLSTATE
SELECT * FROM workload_schedules('acme', 'billing');
\echo :SQLSTATE
-- naming a schedule that does not exist in acme reveals nothing either
SELECT workload_schedule_pause('acme', 'billing', 'no-such');
\echo :SQLSTATE
SELECT workload_schedule('globex', 'billing', 'own', '@hourly', :'globex_tpl') ->> 'tenant_id' AS tenant_id;
SELECT d ->> 'schedule_id' AS schedule_id FROM workload_schedules('globex', 'billing') d;
RESET ROLE;
SELECT md5(string_agg(s::text, '|' ORDER BY schedule_id)) = :'before' AS acme_unchanged
FROM workload.schedules s WHERE tenant_id = 'acme';
-- PUBLIC cannot call them at all
SELECT has_function_privilege('public', 'workload_schedule(text, text, text, text, jsonb, text, text, text)', 'EXECUTE') AS public_may_schedule;

-- bad input, as a member
SELECT md5(string_agg(s::text, '|' ORDER BY schedule_id)) AS before FROM workload.schedules s WHERE tenant_id = 'acme' \gset
SET ROLE sc_member;
SELECT workload_schedule(NULL, 'billing', 'x', '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', NULL, 'x', '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', NULL, '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', NULL, :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', NULL);
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', NULL);
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', 'UTC', NULL);
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', 'UTC', 'skip', NULL);
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', ' ', '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '61 * * * *', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '* * * *', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '0 0 31 2 *', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@every 0 seconds', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', repeat('*', 5000), :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', 'Mars/Olympus_Mons');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', '');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', 'UTC', 'queue');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', :'tpl', 'UTC', 'skip', 'some');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', '[1, 2]');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', '"text"');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', (:'tpl')::jsonb || '{"idempotency_key": "k"}');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', (:'tpl')::jsonb || '{"tenant_id": "acme"}');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', (:'tpl')::jsonb || '{"application_id": "billing"}');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', (:'tpl')::jsonb - 'definition_id');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', (:'tpl')::jsonb || '{"colour": "blue"}');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'x', '@hourly', (:'tpl')::jsonb || '{"input": {"password": "hunter2"}}');
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', repeat('x', 300), '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule_pause('acme', 'billing', NULL);
\echo :SQLSTATE
SELECT workload_schedule_resume(NULL, 'billing', 'hourly');
\echo :SQLSTATE
SELECT workload_schedule_drop('acme', NULL, 'hourly');
\echo :SQLSTATE
SELECT * FROM workload_schedules(NULL, 'billing');
\echo :SQLSTATE
SELECT workload_schedule_resume('acme', 'billing', 'no-such');
\echo :SQLSTATE
SELECT workload_schedule_drop('acme', 'billing', 'no-such');
\echo :SQLSTATE
RESET ROLE;
SELECT md5(string_agg(s::text, '|' ORDER BY schedule_id)) = :'before' AS unchanged,
       (SELECT count(*) FROM workload.specs) AS workloads
FROM workload.schedules s WHERE tenant_id = 'acme';

-- the tick makes the member's workloads as the member; once it has left the tenant, it makes none
SELECT t.tick_at('2026-01-01 01:00:05+00');
SELECT s.created_by FROM workload.specs s;
SELECT workload_remove_tenant_member('sc_member', 'acme', 'billing');
SELECT t.tick_at('2026-01-01 02:00:05+00');
SELECT d -> 'last_error' ->> 'code' AS code, d -> 'last_error' ->> 'detail' AS detail
FROM workload_schedules('acme', 'billing') d;

DROP OWNED BY sc_member, sc_outsider;
DROP ROLE sc_member; DROP ROLE sc_outsider;
