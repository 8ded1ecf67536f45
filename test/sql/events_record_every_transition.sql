-- Every state change appends exactly one event with a strictly increasing sequence, the SPEC event type for its target state, the actor, the calling database role and evidence (SPEC section 6).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET timezone = 'UTC';

-- the event type SPEC names for each target state
CREATE TEMP TABLE spec_event_types(to_state workload_state, event_type text);
INSERT INTO spec_event_types VALUES
  ('CREATED', 'workload.created'), ('READY', 'workload.ready'), ('CLAIMED', 'workload.claimed'),
  ('RUNNING', 'workload.started'), ('CHECKPOINTED', 'workload.checkpointed'),
  ('RECOVERING', 'workload.recovered'), ('CANCELLATION_REQUESTED', 'workload.cancellation_requested'),
  ('WAITING', 'workload.waiting'), ('SUCCEEDED', 'workload.completed'), ('FAILED', 'workload.failed'),
  ('CANCELLED', 'workload.cancelled'), ('TIMED_OUT', 'workload.timed_out'), ('DEAD_LETTER', 'workload.dead_lettered');
-- after each call on workload a: the call, the state it left, how many events a has, the last one's target
CREATE TEMP TABLE seen(n serial, call text, state text, events bigint, last_to text);
CREATE PROCEDURE pg_temp.observe(call text, id text) LANGUAGE sql AS $$
    INSERT INTO seen(call, state, events, last_to)
    SELECT call, workload_get(id)->>'state', count(*),
           (array_agg(e.to_state::text ORDER BY e.sequence DESC))[1]
    FROM workload.event_log e WHERE e.workload_id = id
$$;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ev_caller') THEN
        DROP ROLE ev_caller;
    END IF;
END
$$;
CREATE ROLE ev_caller;
GRANT workload_admin TO ev_caller;

-- a: two attempts, both fail with a retryable kind, max_attempts 2: READY again once, then DEAD_LETTER
SELECT t.create('a', '{"retry_policy": {"max_attempts": 2}}') AS a \gset
CALL pg_temp.observe('create', :'a');
SELECT claim_id, fencing_token FROM workload_claim_id(:'a', 'worker-1', '{}') \gset
CALL pg_temp.observe('claim', :'a');
SELECT workload_start(:'a', :'claim_id', 'worker-1', :fencing_token);
CALL pg_temp.observe('start', :'a');
SELECT workload_checkpoint(:'a', :'claim_id', 'worker-1', :fencing_token, '{"step": 1}')->'sequence' AS checkpoint;
CALL pg_temp.observe('checkpoint', :'a');
SELECT workload_fail(:'a', :'claim_id', 'worker-1', :fencing_token, 'worker_failure', 'segfault');
CALL pg_temp.observe('fail (retried)', :'a');
SET workload.clock_override = '2026-01-01 00:00:05+00';
SELECT claim_id, fencing_token FROM workload_claim_id(:'a', 'worker-2', '{}') \gset
CALL pg_temp.observe('claim', :'a');
SELECT workload_start(:'a', :'claim_id', 'worker-2', :fencing_token);
CALL pg_temp.observe('start', :'a');
SELECT workload_fail(:'a', :'claim_id', 'worker-2', :fencing_token, 'worker_failure', 'segfault again');
CALL pg_temp.observe('fail (exhausted)', :'a');

-- b: two checkpoints (CHECKPOINTED -> CHECKPOINTED), then completed
SELECT t.create('b') AS b \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'b', 'worker-3', '{}') \gset
SELECT workload_start(:'b', :'claim_id', 'worker-3', :fencing_token);
SELECT workload_checkpoint(:'b', :'claim_id', 'worker-3', :fencing_token, '{"step": 1}')->'sequence' AS checkpoint;
SELECT workload_checkpoint(:'b', :'claim_id', 'worker-3', :fencing_token, '{"step": 2}')->'sequence' AS checkpoint;
-- a heartbeat changes no state and records no event
SELECT count(*) AS events_before_heartbeat FROM workload_history(:'b') \gset
SELECT workload_heartbeat(:'b', :'claim_id', 'worker-3', :fencing_token, '30 seconds', '{"pct": 50}')->>'state' AS state;
SELECT count(*) = :events_before_heartbeat AS no_event_for_heartbeat FROM workload_history(:'b');
SELECT workload_complete(:'b', :'claim_id', 'worker-3', :fencing_token, 'rb', '[]')->>'result_id' AS result;

-- c: cancelled while running, by another database role; the worker confirms
SELECT t.create('c') AS c \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'c', 'worker-4', '{}') \gset
SELECT workload_start(:'c', :'claim_id', 'worker-4', :fencing_token);
SET ROLE ev_caller;
SELECT workload_cancel(:'c', 'human:alice');
RESET ROLE;
SELECT workload_confirm_cancel(:'c', :'claim_id', 'worker-4', :fencing_token);

-- a's full history
SELECT event_type, from_state, to_state, actor, evidence
FROM workload_history(:'a') ORDER BY sequence;
-- each call appended one event per state change and left a in its last event's state
SELECT n, call, state, events - coalesce(lag(events) OVER (ORDER BY n), 0) AS new_events, last_to = state AS state_is_last_event
FROM seen ORDER BY n;

-- over all events: one chain per workload, each event moves from the state the previous one reached
SELECT e.workload_id = :'a' AS is_a, e.workload_id = :'b' AS is_b, e.workload_id = :'c' AS is_c,
       count(*) AS events,
       bool_and(e.from_state IS NOT DISTINCT FROM e.prev_to) AS chained,
       bool_and(e.from_state IS NULL OR workload_can_transition(e.from_state, e.to_state)) AS all_legal,
       bool_and(e.sequence > e.prev_seq OR e.prev_seq IS NULL) AS increasing,
       (array_agg(e.to_state ORDER BY e.sequence DESC))[1]::text = workload_get(e.workload_id)->>'state' AS ends_in_current_state
FROM (SELECT *, lag(to_state) OVER w AS prev_to, lag(sequence) OVER w AS prev_seq
      FROM workload.event_log WINDOW w AS (PARTITION BY workload_id ORDER BY sequence)) e
GROUP BY e.workload_id ORDER BY 1 DESC, 2 DESC, 3 DESC;
-- only CREATED has no from_state, and it comes first
SELECT count(*) FILTER (WHERE from_state IS NULL) AS without_from,
       count(*) FILTER (WHERE from_state IS NULL AND to_state = 'CREATED') AS created_events
FROM workload.event_log;
-- sequences are global and strictly increasing across workloads too
SELECT count(*) = count(DISTINCT sequence) AS unique_sequences,
       bool_and(sequence > prev) AS strictly_increasing
FROM (SELECT sequence, lag(sequence) OVER (ORDER BY sequence) AS prev FROM workload.event_log) s
WHERE prev IS NOT NULL;
-- the event type is the one SPEC names for the target state, for every event
SELECT count(*) AS events, count(*) FILTER (WHERE e.event_type = s.event_type) AS spec_type
FROM workload.event_log e JOIN spec_event_types s USING (to_state);
SELECT DISTINCT e.to_state, e.event_type FROM workload.event_log e ORDER BY e.to_state;

-- actors: the requester for create, the worker for worker calls, workload.retry for the automatic retry,
-- the caller's actor for cancel
SELECT to_state, actor, count(*) AS events
FROM workload.event_log GROUP BY to_state, from_state, actor ORDER BY min(sequence);

-- db_role: the calling role, here the session's for everything but the cancel made as ev_caller
SELECT workload_id = :'c' AS is_c, to_state, db_role = 'ev_caller' AS by_ev_caller
FROM workload.event_log WHERE db_role <> session_user ORDER BY sequence;
SELECT count(*) FILTER (WHERE db_role = session_user) AS by_session_user, count(*) AS events FROM workload.event_log;

-- evidence: the fencing token on worker moves, the failure kind on failures, the cause on retries and dead letters
SELECT to_state, evidence->'fencing_token' AS token, evidence->>'kind' AS kind, evidence->>'cause' AS cause
FROM workload.event_log WHERE workload_id = :'a' AND to_state IN ('FAILED', 'READY', 'DEAD_LETTER')
ORDER BY sequence;

DROP OWNED BY ev_caller;
DROP ROLE ev_caller;
