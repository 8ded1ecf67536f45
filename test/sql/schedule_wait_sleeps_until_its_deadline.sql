-- A schedule wait is a durable sleep: the workload stays WAITING, with no claim, until workload_tick finds its deadline has come, then it is READY again; nothing else wakes it (SPEC section 7, durable waits).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
-- the waits below sleep past a day: the run authority must outlive them (a workload whose
-- authority lapsed is not handed out again: claim_dead_letters_a_workload_whose_authority_lapsed)
SET workload.run_authority_ttl = '7d';

CREATE FUNCTION pg_temp.st(id text)
RETURNS TABLE(state text, attempt_count int, wait_count int, claimed boolean, next_attempt_at timestamptz, deadline_at timestamptz)
LANGUAGE sql AS $$
    SELECT w.state::text, w.attempt_count, w.wait_count, w.claim_id IS NOT NULL, w.next_attempt_at, w.deadline_at
    FROM workload.workloads w WHERE w.workload_id = id
$$;

-- send a reminder, then sleep until the next morning (no wake key needed); "timeout" is not even retried
SELECT t.create('reminder', '{"retry_policy": {"retry_on": []}}') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"reminders_sent": 1}') ->> 'sequence' AS sequence;
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'schedule', NULL, '2026-01-02 09:00:00+00');
SELECT * FROM pg_temp.st(:'id');

-- before the deadline: ticks, signals and approvals leave it asleep
SET workload.clock_override = '2026-01-02 08:59:59+00';
SELECT workload_tick() ->> 'schedules_woken' AS schedules_woken;
SELECT workload_approve(:'id', 'human:alice', true, 'wake up');
SELECT workload_signal('acme', 'billing', 'nightly', '{"wake": "up"}');
SELECT state FROM pg_temp.st(:'id');
SELECT count(*) AS claimed FROM workload_claim('w2', '{}', 'acme', 'billing');

-- at the deadline the tick wakes it: READY, due now, and not timed out
SET workload.clock_override = '2026-01-02 09:00:00+00';
SELECT workload_tick();
SELECT * FROM pg_temp.st(:'id');
SELECT from_state, to_state, actor, evidence FROM workload_history(:'id') ORDER BY sequence DESC LIMIT 1;

-- the next run picks up where it left off
SELECT claim_id, fencing_token, attempt FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour', start => true) \gset
SELECT r -> 'checkpoint' -> 'state' AS checkpoint_state, r -> 'wake' AS wake
FROM workload_resume(:'id', :'claim_id', 'w2', :fencing_token) r;

-- a sleep can follow a sleep: the second one counts as the second wait
SELECT workload_wait(:'id', :'claim_id', 'w2', :fencing_token, 'schedule', 'nightly', '2026-01-03 09:00:00+00');
SET workload.clock_override = '2026-01-03 12:00:00+00';
SELECT workload_tick() ->> 'schedules_woken' AS schedules_woken;
SELECT state, attempt_count, wait_count FROM pg_temp.st(:'id');
SELECT wait_number, kind, wake_key, deadline, outcome, resolved_at FROM workload.waits WHERE workload_id = :'id' ORDER BY wait_number;
