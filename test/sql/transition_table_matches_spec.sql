-- The transition table: the enum and the C name table agree, and the listed edges are exactly SPEC section 3.
\set SHOW_CONTEXT never
-- the enum labels, in order, equal the C state-name table
SELECT array_agg(s::text ORDER BY s) = (SELECT array_agg(n) FROM workload.state_names() n) AS names_agree,
       count(*) AS states
FROM unnest(enum_range(NULL::workload_state)) s;

-- the spec's table, written out edge by edge
CREATE TEMP TABLE spec_edges(from_state workload_state, to_state workload_state);
INSERT INTO spec_edges VALUES
  ('CREATED','READY'), ('CREATED','CANCELLED'),
  ('READY','CLAIMED'), ('READY','CANCELLED'), ('READY','TIMED_OUT'),
  ('CLAIMED','RUNNING'), ('CLAIMED','CANCELLATION_REQUESTED'), ('CLAIMED','RECOVERING'), ('CLAIMED','TIMED_OUT'),
  ('RUNNING','CHECKPOINTED'), ('RUNNING','SUCCEEDED'), ('RUNNING','FAILED'), ('RUNNING','CANCELLATION_REQUESTED'),
  ('RUNNING','RECOVERING'), ('RUNNING','TIMED_OUT'), ('RUNNING','WAITING'),
  ('CHECKPOINTED','CHECKPOINTED'), ('CHECKPOINTED','SUCCEEDED'), ('CHECKPOINTED','FAILED'),
  ('CHECKPOINTED','CANCELLATION_REQUESTED'), ('CHECKPOINTED','RECOVERING'), ('CHECKPOINTED','TIMED_OUT'),
  ('CHECKPOINTED','WAITING'),
  ('CANCELLATION_REQUESTED','CANCELLED'),
  ('RECOVERING','READY'), ('RECOVERING','DEAD_LETTER'),
  ('WAITING','READY'), ('WAITING','TIMED_OUT'), ('WAITING','CANCELLED'),
  ('FAILED','READY'), ('FAILED','DEAD_LETTER'), ('FAILED','CANCELLED'),
  ('TIMED_OUT','READY'), ('TIMED_OUT','DEAD_LETTER'),
  ('DEAD_LETTER','READY'), ('DEAD_LETTER','CANCELLED');

-- edges the C table has that the spec does not, and the other way round: both empty
SELECT * FROM workload_transitions() EXCEPT SELECT * FROM spec_edges;
SELECT * FROM spec_edges EXCEPT SELECT * FROM workload_transitions();
SELECT count(*) AS edges FROM workload_transitions();

-- workload_can_transition answers from the same table, for every pair of states
SELECT count(*) FILTER (WHERE workload_can_transition(a, b) <> EXISTS (
           SELECT 1 FROM spec_edges e WHERE e.from_state = a AND e.to_state = b)) AS disagreements,
       count(*) AS pairs
FROM unnest(enum_range(NULL::workload_state)) a, unnest(enum_range(NULL::workload_state)) b;

-- final states have no way out
SELECT s FROM unnest(enum_range(NULL::workload_state)) s
WHERE NOT EXISTS (SELECT 1 FROM workload_transitions() t WHERE t.from_state = s) ORDER BY s;

-- NULL is refused, never a silent NULL
SELECT workload_can_transition(NULL, 'READY');
\echo :SQLSTATE
SELECT workload_can_transition('READY', NULL);
\echo :SQLSTATE
