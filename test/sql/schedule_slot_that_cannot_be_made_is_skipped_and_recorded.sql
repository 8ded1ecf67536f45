-- A slot whose workload cannot be made (the template's grant has expired or was revoked) is skipped, recorded on the schedule (last_error) and in a schedule.failed event, and the schedule goes on: once the template is replaced, the next slot fires and last_error is cleared; a template whose grant does not hold is refused when it is given (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\i test/include/schedule_helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- the template's grant expires at 00:30
SELECT workload_schedule('acme', 'billing', 'report', '*/10 * * * *',
    t.tpl(jsonb_build_object('authorization_snapshot',
        t.grant('acme', 'billing', 'planner', ARRAY['*'], 'active', '2026-01-01T00:30:00Z'))),
    overlap => 'allow') ->> 'next_run_at' AS first_slot;
-- what is kept is no bearer credential: no signature, only its digest (not shown)
SELECT template -> 'authorization_snapshot' ? 'signature' AS keeps_signature,
       template -> 'authorization_snapshot' ? 'signature_sha256' AS keeps_digest
FROM workload.schedules;
SELECT t.tick_at('2026-01-01 00:10:05+00');
SELECT t.tick_at('2026-01-01 00:20:05+00');
-- 00:30 and 00:40: the grant has expired; each slot is skipped and recorded
SELECT t.tick_at('2026-01-01 00:30:05+00');
SELECT t.tick_at('2026-01-01 00:40:05+00');
SELECT d ->> 'last_run_at' AS last_run_at, d ->> 'next_run_at' AS next_run_at,
       d -> 'last_error' ->> 'slot' AS error_slot, d -> 'last_error' ->> 'code' AS code,
       d -> 'last_error' ->> 'sqlstate' AS sqlstate, d -> 'last_error' ->> 'detail' AS detail
FROM workload_schedules('acme', 'billing') d;
SELECT schedule_id, event_type, slot, evidence ->> 'code' AS code, evidence ->> 'slot' AS evidence_slot
FROM workload.schedule_events ORDER BY sequence;
SELECT schedule, slot FROM t.fired();

-- a replacement whose grant has expired is refused, and changes nothing
SET workload.clock_override = '2026-01-01 00:45:00+00';
SELECT md5(s::text) AS before FROM workload.schedules s \gset
SELECT workload_schedule('acme', 'billing', 'report', '*/10 * * * *',
    t.tpl(jsonb_build_object('authorization_snapshot',
        t.grant('acme', 'billing', 'planner', ARRAY['*'], 'active', '2026-01-01T00:30:00Z'))));
\echo :SQLSTATE
SELECT md5(s::text) = :'before' AS unchanged FROM workload.schedules s;
-- so is one for another tenant's grant, or another requester's
SELECT workload_schedule('acme', 'billing', 'report', '*/10 * * * *', t.tpl(jsonb_build_object('authorization_snapshot', t.grant('globex', 'billing'))));
\echo :SQLSTATE
SELECT workload_schedule('acme', 'billing', 'report', '*/10 * * * *', t.tpl(jsonb_build_object('authorization_snapshot', t.grant('acme', 'billing', 'someone-else'))));
\echo :SQLSTATE

-- replaced with a valid grant: the next slot (00:50) fires, and last_error is cleared
SELECT d ->> 'next_run_at' AS next_run_at, d -> 'last_error' ->> 'code' AS code_kept_until_a_slot_is_made
FROM workload_schedule('acme', 'billing', 'report', '*/10 * * * *', t.tpl(), overlap => 'allow') d;
SELECT t.tick_at('2026-01-01 00:50:05+00');
SELECT d ->> 'last_run_at' AS last_run_at, d ->> 'last_error' AS last_error
FROM workload_schedules('acme', 'billing') d;
SELECT schedule, slot FROM t.fired();

-- a revoked grant: the next slot is skipped and recorded the same way
SET workload.clock_override = '2026-01-01 00:55:00+00';
SELECT workload_revoke_grant('grant-acme-planner');
SELECT t.tick_at('2026-01-01 01:00:05+00');
SELECT d ->> 'last_run_at' AS last_run_at, d -> 'last_error' ->> 'slot' AS error_slot,
       d -> 'last_error' ->> 'code' AS code, d -> 'last_error' ->> 'detail' AS detail
FROM workload_schedules('acme', 'billing') d;
