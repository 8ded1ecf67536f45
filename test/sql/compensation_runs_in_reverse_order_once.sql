-- workload_compensate turns the undo steps a failed saga recorded (workload_add_compensation) into compensation workloads that run last-registered first, chained by dependencies, under the saga's run authority; compensating again creates nothing and returns the same ids (SPEC section 7, compensation).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- a trip booking: its capability_snapshot covers the steps and their undos
\set caps '["flight.book", "flight.cancel", "hotel.book", "hotel.cancel", "card.charge", "card.refund"]'
SELECT t.create('trip-7', jsonb_build_object('capability_snapshot', :'caps'::jsonb,
    'retry_policy', jsonb_build_object('max_attempts', 2, 'initial_delay_ms', 0))) AS trip \gset
\set worker_caps '{flight.book,flight.cancel,hotel.book,hotel.cancel,card.charge,card.refund}'

-- the first attempt books the flight, records its undo, and loses a transient connection
SELECT claim_id, fencing_token FROM workload_claim('w1', :'worker_caps', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_add_compensation(:'trip', :'claim_id', 'w1', :fencing_token, 'flight.cancel', '{"pnr": "XK42"}') - 'created_at' - 'authorization_digest' AS step;
SELECT workload_fail(:'trip', :'claim_id', 'w1', :fencing_token, 'transient_connection', 'reset by peer');
-- the second books the hotel and charges the card, recording both undos, then fails for good
SELECT claim_id, fencing_token FROM workload_claim('w1', :'worker_caps', 'acme', 'billing', '1 hour', start => true) \gset
SELECT workload_add_compensation(:'trip', :'claim_id', 'w1', :fencing_token, 'hotel.cancel', '{"booking": "H-9"}') ->> 'step' AS step;
SELECT workload_add_compensation(:'trip', :'claim_id', 'w1', :fencing_token, 'card.refund', '{"amount": 1250}') ->> 'step' AS step;
SELECT workload_fail(:'trip', :'claim_id', 'w1', :fencing_token, 'no_seats', 'connection flight sold out');
SELECT state FROM workload.workloads WHERE workload_id = :'trip';
-- each step is bound to the digest of the saga's authorization snapshot
SELECT step, capability_id, attempt_number,
       authorization_digest = (SELECT encode(digest(a.authorization_snapshot::text, 'sha256'), 'hex')
                               FROM workload.specs s JOIN workload.spec_authority a USING (tenant_id, workload_seq)
                               WHERE s.workload_id = :'trip') AS bound
FROM workload.compensations ORDER BY step;

-- compensate: three workloads, the card refund first, the flight cancellation last
SET workload.clock_override = '2026-01-01 00:05:00+00';
CREATE TEMP TABLE undo AS
SELECT row_number() OVER () AS run_order, id FROM workload_compensate(:'trip', 'ops:alice') id;
SELECT u.run_order, d ->> 'definition_id' AS definition_id, d -> 'input' AS input, d ->> 'state' AS state,
       d -> 'requested_by' AS requested_by, d -> 'capability_snapshot' AS capability_snapshot,
       d ->> 'idempotency_key' AS idempotency_key, d ->> 'trigger' AS trigger
FROM undo u, workload_get(u.id) d ORDER BY u.run_order;
-- chained: each waits for the success of the one before it
SELECT u.run_order, (SELECT p.run_order FROM undo p WHERE p.id = d.depends_on) AS waits_for, d.required_state
FROM undo u LEFT JOIN workload.dependencies d ON d.workload_id = u.id ORDER BY u.run_order;
-- each runs on the saga's run authority: requested by the saga, tenant and application kept
SELECT bool_and(d -> 'authorization_snapshot' -> 'grant' = s2.run_authority -> 'grant'
                AND NOT d -> 'authorization_snapshot' ?| ARRAY['signature', 'signature_sha256']) AS saga_authority,
       bool_and(d ->> 'tenant_id' = 'acme' AND d ->> 'application_id' = 'billing') AS same_tenant
FROM undo u, workload_get(u.id) d, workload.specs s JOIN workload.spec_authority s2 USING (tenant_id, workload_seq)
WHERE s.workload_id = :'trip';
-- the steps now name their compensation, who asked and when
SELECT p.step, u.run_order, p.compensated_by, p.compensated_at
FROM workload.compensations p JOIN undo u ON u.id = p.compensation_id ORDER BY p.step;

-- compensating again creates nothing and returns the same ids, in the same order
SELECT t.fingerprint() AS before \gset
SELECT array_agg(id) = (SELECT array_agg(id ORDER BY run_order) FROM undo) AS same_ids
FROM workload_compensate(:'trip', 'ops:bob') id;
SELECT t.fingerprint() = :'before' AS unchanged;

-- a worker holding every capability can only take the refund; once it succeeded, only the hotel
SELECT u.run_order, c.definition_id, c.input, c.workload_id AS refund, c.claim_id, c.fencing_token
FROM workload_claim('w2', :'worker_caps', 'acme', 'billing', '1 hour', 10, true) c JOIN undo u ON u.id = c.workload_id \gset
SELECT :run_order AS run_order, :'definition_id' AS definition_id, :'input' AS input;
-- its execution context is the refund alone, under a verified run authority of its own
SELECT workload_execution_context(:'refund', :'claim_id', 'w2', :fencing_token) -> 'capabilities' AS capabilities;
SELECT workload_complete(:'refund', :'claim_id', 'w2', :fencing_token, 'refund-done', '{}') ->> 'outcome' AS outcome;
SELECT u.run_order, c.definition_id FROM workload_claim('w2', :'worker_caps', 'acme', 'billing', '1 hour', 10) c
JOIN undo u ON u.id = c.workload_id;

-- a workload that recorded no step compensates to nothing
SELECT t.create('no-steps') AS plain \gset
SELECT workload_cancel(:'plain', 'ops:alice');
SELECT count(*) AS compensations FROM workload_compensate(:'plain', 'ops:alice');
