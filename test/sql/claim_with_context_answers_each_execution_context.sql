-- workload_claim(..., context => true) answers each claimed row's verified execution context, the document workload_execution_context answers for it, so a worker needs no second round trip; a workload whose authority no longer verifies is dead-lettered with its cause rather than handed out; without context the column is NULL (SPEC section 5.1, "A claim never hands out a workload whose run authority has lapsed").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('a', '{"priority": 3, "capability_snapshot": ["invoice.read"]}') AS a \gset
SELECT t.create('b', '{"priority": 2}') AS b \gset
SELECT t.create('c', '{"priority": 1}') AS c \gset

-- with context and start: each row's context is the one workload_execution_context answers
CREATE TEMP TABLE got AS
SELECT * FROM workload_claim('w1', '{invoice.read}', 'acme', 'billing', '5 minutes', 2,
                             start => true, context => true);
SELECT workload_id = :'a' AS a_first, execution_context ->> 'workload_id' = workload_id AS own,
       execution_context ->> 'claim_id' = claim_id AS claim,
       (execution_context ->> 'fencing_token')::bigint = fencing_token AS fence,
       execution_context -> 'capabilities' AS capabilities,
       execution_context -> 'secret_references' AS secret_references,
       execution_context = workload_execution_context(workload_id, claim_id, 'w1', fencing_token) AS same
FROM got ORDER BY workload_id = :'a' DESC;
SELECT count(*) AS running FROM workload.workloads WHERE workload_id IN (:'a', :'b') AND state = 'RUNNING';

-- while a revocation waits for the tick's sweep, claims take another way (they pass over
-- revoked work); the contexts are the same
SELECT workload_revoke_grant('grant-unrelated');
SELECT t.create('a2', '{"priority": 5}') AS a2 \gset
SELECT workload_id = :'a2' AS a2,
       execution_context = workload_execution_context(workload_id, claim_id, 'w1', fencing_token) AS same
FROM workload_claim('w1', '{invoice.read}', 'acme', 'billing', '5 minutes', 1, start => true, context => true);
SELECT (workload_tick() ->> 'failed')::int AS swept_without_failure;

-- without context: the same rows, the column NULL
SELECT workload_id = :'c' AS c, execution_context IS NULL AS no_context
FROM workload_claim('w1', '{}', 'acme', 'billing');

-- a NULL context is refused and changes nothing
SELECT t.create('d', '{}') AS d \gset
SELECT t.fingerprint() AS before \gset
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', context => NULL);
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- the key that signed d's grant and run authority is retired: its authority no longer
-- verifies, so a claim with context dead-letters it (cause authorization_invalid) and hands
-- out e, created under the new key, in the same call
SELECT key_id AS old_key FROM workload.signing_keys WHERE retired_at IS NULL \gset
SELECT workload_rotate_signing_key() <> :'old_key' AS rotated;
SELECT t.create('e', '{}') AS e \gset
SELECT workload_retire_signing_key(:'old_key');
SELECT workload_id = :'e' AS e_only, execution_context IS NOT NULL AS has_context
FROM workload_claim('w2', '{}', 'acme', 'billing', max_items => 5, context => true);
SELECT state FROM workload.workloads WHERE workload_id = :'d';
SELECT h.to_state, h.actor, h.evidence ->> 'cause' AS cause
FROM workload_history(:'d') h ORDER BY h.sequence DESC LIMIT 2;
-- it cannot be retried: no worker would be handed it
\set VERBOSITY terse
SELECT workload_retry(:'d', 'ops');
\echo :SQLSTATE
\set VERBOSITY default

-- the 1.3 declaration of workload_claim (nine columns, no context) still answers through
-- the same library until ALTER EXTENSION UPDATE
SELECT t.create('f', '{}') AS f \gset
CREATE FUNCTION t.claim_1_3(worker_id text, capabilities text[], tenant_id text,
        application_id text, lease interval DEFAULT '30 seconds', max_items integer DEFAULT 1,
        start boolean DEFAULT false)
    RETURNS TABLE(workload_id text, claim_id text, fencing_token bigint,
                  lease_expires_at timestamptz, attempt integer, definition_id text,
                  definition_revision text, input jsonb, checkpoint_sequence integer)
    LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS '$libdir/workload', 'workload_claim';
SELECT workload_id = :'f' AS f, attempt FROM t.claim_1_3('w3', '{}', 'acme', 'billing');
