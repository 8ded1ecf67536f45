-- workload_redrive puts the DEAD_LETTER workloads of one tenant and application back to READY, due now, as workload_retry does: oldest first, at most lim, filtered by definition_id and the last failure's kind; a role that is no member of the tenant moves nothing (SPEC section 4, "Scheduling and bulk work").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET timezone = 'UTC';
SET workload.clock_override = '2026-01-01 00:00:00+00';
SET client_min_messages = warning;
DROP ROLE IF EXISTS rd_client; DROP ROLE IF EXISTS rd_other;
RESET client_min_messages;
CREATE ROLE rd_client LOGIN; GRANT workload_client TO rd_client;
CREATE ROLE rd_other LOGIN; GRANT workload_client TO rd_other;
SELECT workload_add_tenant_member('rd_client', 'acme', 'billing');
SELECT workload_add_tenant_member('rd_other', 'globex', 'billing');

-- dead(key, definition, kind): a workload of one attempt that failed with kind
CREATE FUNCTION t.dead(key text, def text, kind text, tenant text DEFAULT 'acme') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    id text := t.create(key, jsonb_build_object('definition_id', def,
        'retry_policy', jsonb_build_object('max_attempts', 1)), tenant);
    c record;
BEGIN
    SELECT * INTO c FROM t.run(id);
    PERFORM workload_fail(id, c.claim_id, 'w1', c.fencing_token, kind, 'it broke');
    RETURN id;
END $$;
-- six dead letters, a minute apart: two definitions, two kinds; one in globex; one READY
SELECT t.dead('d1', 'render', 'worker_failure');
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT t.dead('d2', 'render', 'bad_input');
SET workload.clock_override = '2026-01-01 00:02:00+00';
SELECT t.dead('d3', 'export', 'worker_failure');
SET workload.clock_override = '2026-01-01 00:03:00+00';
SELECT t.dead('d4', 'export', 'bad_input');
SET workload.clock_override = '2026-01-01 00:04:00+00';
SELECT t.dead('d5', 'render', 'worker_failure');
SELECT t.dead('g1', 'render', 'worker_failure', 'globex');
SELECT t.create('ready') IS NOT NULL AS ready;
\set dl 'SELECT s.idempotency_key AS key, s.definition_id, w.last_failure->>''kind'' AS kind, w.state, w.next_attempt_at FROM workload.workloads w JOIN workload.specs s ON s.tenant_id = w.tenant_id AND s.workload_seq = w.seq ORDER BY w.seq'
:dl;

-- a role that is no member of acme moves nothing, and nothing of globex is seen from acme
SET workload.clock_override = '2026-01-01 01:00:00+00';
SELECT t.fingerprint() AS before \gset
SET ROLE rd_other;
SELECT * FROM workload_redrive('acme', 'billing', 'ops');
\echo :SQLSTATE
RESET ROLE;
SELECT t.fingerprint() = :'before' AS unchanged;

SET ROLE rd_client;
-- by definition and kind: only d2
SELECT workload_get(r)->'input'->>'n' AS n FROM workload_redrive('acme', 'billing', 'ops', 'render', 'bad_input') r;
-- by kind, at most 1: the oldest worker_failure (d1)
SELECT workload_get(r)->'input'->>'n' AS n FROM workload_redrive('acme', 'billing', 'ops', failure_kind => 'worker_failure', lim => 1) r;
-- by definition: export's, oldest first (d3, d4)
SELECT workload_get(r)->'input'->>'n' AS n FROM workload_redrive('acme', 'billing', 'ops', definition_id => 'export') r;
-- nothing left that matches
SELECT count(*) FROM workload_redrive('acme', 'billing', 'ops', 'export');
RESET ROLE;
-- each moved one is READY, due now, with the retry's event; d5 is still a dead letter
:dl;
SELECT event_type, from_state, to_state, actor, evidence FROM workload.event_log
WHERE workload_id = (SELECT workload_id FROM workload.specs WHERE idempotency_key = 'd2') ORDER BY sequence DESC LIMIT 1;

-- all the rest: d5 (globex's stays)
SET ROLE rd_client;
SELECT workload_get(r)->'input'->>'n' AS n FROM workload_redrive('acme', 'billing', 'ops') r;
RESET ROLE;
SELECT count(*) FILTER (WHERE state = 'DEAD_LETTER') AS dead_letters FROM workload.workloads;

-- a dead letter whose grant was revoked is passed over (workload_retry refuses it)
CREATE FUNCTION t.dead_as(key text, who text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    id text := t.create(key, jsonb_build_object('retry_policy', jsonb_build_object('max_attempts', 1),
        'requested_by', jsonb_build_object('kind', 'agent', 'id', who),
        'authorization_snapshot', t.grant('acme', 'billing', who)));
    c record;
BEGIN
    SELECT * INTO c FROM t.run(id);
    PERFORM workload_fail(id, c.claim_id, 'w1', c.fencing_token, 'worker_failure', 'it broke');
    RETURN id;
END $$;
SELECT t.dead_as('r1', 'someone') AS revoked \gset
SELECT t.dead_as('r2', 'planner') AS kept \gset
SELECT workload_revoke_grant('grant-acme-someone');
SET ROLE rd_client;
SELECT r = :'kept' AS is_kept FROM workload_redrive('acme', 'billing', 'ops') r;
SELECT workload_retry(:'revoked', 'ops');
\echo :SQLSTATE
RESET ROLE;
SELECT state FROM workload.workloads WHERE workload_id = :'revoked';

-- bad arguments
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_redrive(NULL, 'billing', 'ops');
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', NULL);
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', ' ');
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', 'ops', lim => 0);
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', 'ops', lim => 1001);
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', 'ops', lim => NULL);
\echo :SQLSTATE
SELECT * FROM workload_redrive('acme', 'billing', 'ops', definition_id => '');
\echo :SQLSTATE
SELECT * FROM workload_redrive('ac:me', 'billing', 'ops');
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

DROP OWNED BY rd_client, rd_other;
DROP ROLE rd_client; DROP ROLE rd_other;
