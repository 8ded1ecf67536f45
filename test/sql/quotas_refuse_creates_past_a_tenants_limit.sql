-- Per-tenant quotas (settings, unlimited by default): a create past workload.max_active_per_tenant workloads not final, or past workload.max_stored_kb_per_tenant bytes stored, and a new schedule past workload.max_schedules_per_tenant, are WORKLOAD_QUOTA_EXCEEDED and write nothing; other tenants, idempotent replays and a replaced schedule are not held back; a workload that reaches a final state frees its place (SPEC section 5.1, "Quotas").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SHOW workload.max_active_per_tenant;
SHOW workload.max_stored_kb_per_tenant;
SHOW workload.max_schedules_per_tenant;

-- three workloads not final for quota-a
SET workload.max_active_per_tenant = 3;
SELECT t.create('q1', '{}', 'quota-a') AS q1, t.create('q2', '{}', 'quota-a') AS q2,
       t.create('q3', '{}', 'quota-a') AS q3 \gset
SELECT t.fingerprint() AS before \gset
SELECT t.create('q4', '{}', 'quota-a');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;
-- an idempotent replay is no new workload: it answers
SELECT t.create('q1', '{}', 'quota-a') = :'q1' AS replayed;
-- another tenant is not held back
SELECT t.create('g1', '{}', 'quota-b') IS NOT NULL AS other_tenant;
-- a batch: each item past the quota is refused on its own
SELECT workload_cancel(:'q3', 'ops');
SELECT ord, outcome, code FROM workload_create_many(jsonb_build_array(
    t.spec('m1', '{}', 'quota-a'), t.spec('m2', '{}', 'quota-a'), t.spec('m3', '{}', 'quota-b')))
ORDER BY ord;
-- a workload that succeeds frees its place
SELECT claim_id, fencing_token FROM t.run(:'q1') \gset
SELECT workload_complete(:'q1', :'claim_id', 'w1', :fencing_token, 'r1', '{}') ->> 'outcome' AS outcome;
SELECT t.create('q5', '{}', 'quota-a') IS NOT NULL AS room_again;
SELECT t.create('q6', '{}', 'quota-a');
\echo :SQLSTATE
-- a dead letter is not final: it keeps its place until it is cancelled (or purged)
SELECT claim_id, fencing_token FROM t.run(:'q2') \gset
SELECT workload_fail(:'q2', :'claim_id', 'w1', :fencing_token, 'bad_input', 'no') AS state;
SELECT t.create('q6', '{}', 'quota-a');
\echo :SQLSTATE
SELECT workload_cancel(:'q2', 'ops');
SELECT t.create('q6', '{}', 'quota-a') IS NOT NULL AS room_after_cancel;
RESET workload.max_active_per_tenant;
SELECT t.create('q7', '{}', 'quota-a') IS NOT NULL AS unlimited_again;
-- what a session with no quota made still counts where another has one: m1, q5, q6 and q7
SET workload.max_active_per_tenant = 4;
SELECT t.create('q8', '{}', 'quota-a');
\echo :SQLSTATE
RESET workload.max_active_per_tenant;

-- bytes stored: inputs count
SET workload.max_stored_kb_per_tenant = 4;
SELECT t.create('big1', jsonb_build_object('input', jsonb_build_object('blob', repeat('x', 2500))), 'quota-c') IS NOT NULL AS first_fits;
SELECT t.create('big2', jsonb_build_object('input', jsonb_build_object('blob', repeat('y', 2500))), 'quota-c');
\echo :SQLSTATE
SELECT t.create('small', '{}', 'quota-c') IS NOT NULL AS small_fits;
RESET workload.max_stored_kb_per_tenant;

-- schedules: a new one past the quota is refused; replacing one is not
SET workload.max_schedules_per_tenant = 1;
SELECT t.tpl('{}', 'quota-a', 'billing') AS tpl \gset
SELECT workload_schedule('quota-a', 'billing', 's1', '@hourly', :'tpl') ->> 'schedule_id' AS made;
SELECT workload_schedule('quota-a', 'billing', 's2', '@hourly', :'tpl');
\echo :SQLSTATE
SELECT workload_schedule('quota-a', 'billing', 's1', '@daily', :'tpl') ->> 'cron' AS replaced;
SELECT count(*) AS schedules FROM workload.schedules WHERE tenant_id = 'quota-a';
RESET workload.max_schedules_per_tenant;

-- the quotas are a superuser's to set: a client role cannot raise its own
SET client_min_messages = warning;
DROP ROLE IF EXISTS qt_client;
RESET client_min_messages;
CREATE ROLE qt_client;
SET ROLE qt_client;
SET workload.max_active_per_tenant = 0;
\echo :SQLSTATE
RESET ROLE;
DROP ROLE qt_client;
