-- workload_wait, workload_signal and workload_approve refuse NULLs, unknown kinds, a missing wake key, deadlines not in the future, secrets, stale fences, states that cannot wait, and other tenants' workloads, and then change nothing (SPEC section 7, durable waits; section 5, tenants).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS wr_acme; DROP ROLE IF EXISTS wr_globex;
RESET client_min_messages;
CREATE ROLE wr_acme; CREATE ROLE wr_globex;
GRANT workload_client, workload_worker TO wr_acme, wr_globex;
SELECT workload_add_tenant_member('wr_acme', 'acme', 'billing');
SELECT workload_add_tenant_member('wr_globex', 'globex', 'billing');

-- a RUNNING workload held by w1, and one merely CLAIMED by w2
SELECT t.create('running', '{"priority": 2}') AS id \gset
SELECT t.create('claimed', '{"priority": 1}') AS claimed \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing', '1 minute', start => true) \gset
SELECT claim_id AS c2, fencing_token AS f2 FROM workload_claim('w2', '{}', 'acme', 'billing', '1 hour') \gset
SELECT t.fingerprint() AS before \gset

-- NULLs
SELECT workload_wait(NULL, :'claim_id', 'w1', :fencing_token, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', NULL, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, NULL, 'k', '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'event', 'k', NULL);
\echo :SQLSTATE
-- an unknown kind, an event without a key, a blank key
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'timer', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'event', NULL, '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'schedule', '  ', '2026-01-02');
\echo :SQLSTATE
-- a deadline now, in the past, or infinite
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'schedule', NULL, '2026-01-01 00:00:00+00');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'schedule', NULL, '2025-12-31');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'schedule', NULL, 'infinity');
\echo :SQLSTATE
-- a stale fence, another worker, an unknown workload
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token + 1, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait(:'id', :'claim_id', 'w9', :fencing_token, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT workload_wait('workload_000000000000000000000000', :'claim_id', 'w1', :fencing_token, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
-- a claim not yet started cannot wait (CLAIMED -> WAITING is not in the table)
SELECT workload_wait(:'claimed', :'c2', 'w2', :f2, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- signal: NULLs, blank key, a secret in the payload
SELECT workload_signal(NULL, 'billing', 'k', '{}');
\echo :SQLSTATE
SELECT workload_signal('acme', 'billing', 'k', NULL);
\echo :SQLSTATE
SELECT workload_signal('acme', 'billing', '', '{}');
\echo :SQLSTATE
SELECT workload_signal('acme', 'billing', 'k', '{"card": {"token": "x"}}');
\echo :SQLSTATE
-- approve: NULLs, unknown workload, a credential in the note
SELECT workload_approve(:'id', NULL, true, NULL);
\echo :SQLSTATE
SELECT workload_approve(:'id', 'human:alice', NULL, NULL);
\echo :SQLSTATE
SELECT workload_approve('workload_000000000000000000000000', 'human:alice', true, NULL);
\echo :SQLSTATE
SELECT workload_approve(:'id', 'human:alice', true, 'sk-live-123');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- a run that asked for cancellation cannot wait
SELECT workload_cancel(:'id', 'client:bob');
SELECT t.fingerprint() AS before \gset
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
-- an expired lease cannot wait
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_wait(:'id', :'claim_id', 'w1', :fencing_token, 'event', 'k', '2026-01-02');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- tenants: acme's workload waits for an approval
SELECT workload_start(:'claimed', :'c2', 'w2', :f2);
SELECT workload_wait(:'claimed', :'c2', 'w2', :f2, 'human_approval', 'k', '2026-01-02');
SELECT t.fingerprint() AS before \gset
SET ROLE wr_globex;
-- globex cannot signal acme, and cannot see or approve acme's workload
SELECT workload_signal('acme', 'billing', 'k', '{}');
\echo :SQLSTATE
SELECT workload_approve(:'claimed', 'human:mallory', true, NULL);
\echo :SQLSTATE
-- signalling its own tenant wakes nothing of acme's
SELECT workload_signal('globex', 'billing', 'k', '{}');
RESET ROLE;
SELECT t.fingerprint() = :'before' AS unchanged;
-- acme's own client may approve
SET ROLE wr_acme;
SELECT workload_approve(:'claimed', 'human:alice', true, NULL);
RESET ROLE;
SELECT state FROM workload.workloads WHERE workload_id = :'claimed';

DROP OWNED BY wr_acme, wr_globex;
DROP ROLE wr_acme; DROP ROLE wr_globex;
