-- A schedule's grant over time: workload_schedules says when it expires and marks it grant_expiring within workload.schedule_grant_warning of that; the tick records one schedule.grant_expiring event a grant; workload_schedule_set_grant replaces the grant and nothing else (slots, pause and what ran stay), is refused for a grant that does not hold or belongs elsewhere, and the new grant is warned of afresh (SPEC section 5.1, "Authority over time").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET workload.schedule_grant_warning = '2d';

-- a daily schedule whose grant expires on the 5th at noon
SELECT workload_schedule('acme', 'billing', 'nightly', '0 3 * * *',
    t.tpl(jsonb_build_object('authorization_snapshot',
        t.grant('acme', 'billing', 'planner', ARRAY['*'], 'active', '2026-01-05T12:00:00Z'))),
    overlap => 'allow')
    - 'template' - 'created_at' - 'updated_at' AS created;

-- two days before it expires it is marked, and the tick warns once
SELECT t.tick_at('2026-01-01 03:00:05+00');
SELECT d ->> 'grant_expires_at' AS expires, d -> 'grant_expiring' AS expiring
FROM workload_schedules('acme', 'billing') d;
SELECT (workload_tick() ->> 'schedule_grants_expiring')::int AS warned_early;
SET workload.clock_override = '2026-01-03 12:00:00+00';
SELECT d -> 'grant_expiring' AS expiring FROM workload_schedules('acme', 'billing') d;
SELECT (workload_tick() ->> 'schedule_grants_expiring')::int AS warned;
SELECT (workload_tick() ->> 'schedule_grants_expiring')::int AS warned_again;
SELECT event_type, slot, evidence ->> 'grant_id' AS grant_id, evidence ->> 'expires_at' AS expires,
       evidence -> 'expired' AS expired
FROM workload.schedule_events WHERE event_type = 'schedule.grant_expiring' ORDER BY sequence;

-- paused by its operator; the grant is replaced: the slots, the pause and what ran stay
SELECT workload_schedule_pause('acme', 'billing', 'nightly') -> 'paused' AS paused;
SELECT to_jsonb(s) - 'template' - 'updated_at' - 'grant_expires_at' - 'grant_warned_at' AS before
FROM workload.schedules s \gset
-- the planner's grant for the next two months, under another id
SELECT workload_sign_grant(t.unsigned_grant('acme', 'billing', 'planner', ARRAY['*'], 'active',
    '2026-03-01T00:00:00Z') || '{"id": "grant-acme-planner-2026"}') AS fresh \gset
SELECT d - 'template' - 'created_at' - 'updated_at' AS replaced
FROM workload_schedule_set_grant('acme', 'billing', 'nightly', :'fresh'::jsonb) d;
SELECT to_jsonb(s) - 'template' - 'updated_at' - 'grant_expires_at' - 'grant_warned_at' = :'before'::jsonb AS rest_unchanged,
       s.template -> 'authorization_snapshot' ? 'signature' AS keeps_signature,
       s.template #>> '{authorization_snapshot,grant,id}' AS grant_id,
       s.template - 'authorization_snapshot' = t.tpl() - 'authorization_snapshot' AS template_kept
FROM workload.schedules s;
SELECT event_type, evidence - 'by' AS evidence, evidence ->> 'by' = current_user AS by_caller
FROM workload.schedule_events WHERE event_type = 'schedule.grant_replaced';
SELECT workload_schedule_resume('acme', 'billing', 'nightly') ->> 'next_run_at' AS resumed_next;
SELECT t.tick_at('2026-01-06 03:00:05+00');
SELECT schedule, slot FROM t.fired();
-- the new grant is warned of two days before its own expiry
SELECT (workload_tick() ->> 'schedule_grants_expiring')::int AS not_yet;
SET workload.clock_override = '2026-02-27 00:00:01+00';
SELECT (workload_tick() ->> 'schedule_grants_expiring')::int AS new_grant_warned;

-- refused, changing nothing: an expired grant, another tenant's, a non-object, an unknown
-- schedule, a NULL
SELECT md5(s::text) AS before FROM workload.schedules s \gset
SELECT workload_schedule_set_grant('acme', 'billing', 'nightly',
    t.grant('acme', 'billing', 'planner', ARRAY['*'], 'active', '2026-02-01T00:00:00Z'));
\echo :SQLSTATE
SELECT workload_schedule_set_grant('acme', 'billing', 'nightly', t.grant('globex', 'billing'));
\echo :SQLSTATE
SELECT workload_schedule_set_grant('acme', 'billing', 'nightly', '"a grant"');
\echo :SQLSTATE
SELECT workload_schedule_set_grant('acme', 'billing', 'nope', t.grant());
\echo :SQLSTATE
SELECT workload_schedule_set_grant('acme', 'billing', 'nightly', NULL);
\echo :SQLSTATE
SELECT md5(s::text) = :'before' AS unchanged FROM workload.schedules s;

-- a role that is no member of the tenant may not replace it
CREATE ROLE wl_sched_outsider LOGIN;
GRANT workload_client TO wl_sched_outsider;
SET ROLE wl_sched_outsider;
SELECT workload_schedule_set_grant('acme', 'billing', 'nightly', :'fresh'::jsonb);
\echo :SQLSTATE
RESET ROLE;
DROP ROLE wl_sched_outsider;

-- 0 turns the warnings off
SET workload.schedule_grant_warning = 0;
SELECT d -> 'grant_expiring' AS expiring FROM workload_schedules('acme', 'billing') d;
