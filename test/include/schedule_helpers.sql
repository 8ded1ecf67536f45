-- Helpers for the schedule tests (included with \i after helpers.sql).
-- t.tpl: a schedule template (a create spec without the fields the schedule
-- supplies); t.tick_at: set the clock and tick, saying what the schedule
-- pass did; t.fired: the workloads schedules made, by schedule and slot.
SET TimeZone = 'UTC';
CREATE FUNCTION t.tpl(extra jsonb DEFAULT '{}', tenant text DEFAULT 'acme', app text DEFAULT 'billing')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT (t.spec('scheduled', '{}', tenant, app) - 'idempotency_key' - 'tenant_id' - 'application_id') || extra
$$;
CREATE FUNCTION t.tick_at(at timestamptz) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r jsonb;
BEGIN
    PERFORM set_config('workload.clock_override', at::text, false);
    r := workload_tick();
    RETURN format('fired %s, skipped %s, failed %s', r -> 'schedule_slots_fired',
                  r -> 'schedule_slots_skipped', r -> 'schedule_slots_failed');
END
$$;
CREATE FUNCTION t.fired() RETURNS TABLE(schedule text, slot text, trigger text, tenant_id text)
LANGUAGE sql AS $$
    SELECT substring(s.idempotency_key FROM '^schedule:([^:]+):'),
           substring(s.idempotency_key FROM '^schedule:[^:]+:(.*)$'), s.trigger, s.tenant_id
    FROM workload.specs s WHERE s.idempotency_key LIKE 'schedule:%'
    ORDER BY 1, 2
$$;
