-- In a read-only transaction (as every session on a standby is) a call that writes is refused with PostgreSQL's own error, 25006 read_only_sql_transaction, whether or not a row would match, and nothing is written: the claim (from the start of the queue and from the session's points), start, heartbeat, complete and a batch of completions, create. The hot path writes its rows without a plan on a single node (store_direct.c, store_fenced.c, store_claim_direct.c); it asks what the executor asks before a statement writes. Read-only calls still answer.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
SELECT count(t.create('ro-' || g)) AS created FROM generate_series(1, 4) g;
-- a claim from the start, then one from the session's points
SELECT input->>'n' AS claimed FROM workload_claim('w1', '{}', 'acme', 'billing');
SELECT workload_id AS id, claim_id AS claim, fencing_token AS token
FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT t.fingerprint() AS before \gset

\set VERBOSITY sqlstate
BEGIN READ ONLY;
SELECT count(*) FROM workload_claim('w1', '{}', 'acme', 'billing');
ROLLBACK;
BEGIN READ ONLY;
SELECT count(*) FROM workload_claim('w1', '{}', 'nobody-here', 'billing');
ROLLBACK;
BEGIN READ ONLY;
SELECT workload_start(:'id', :'claim', 'w1', :token);
ROLLBACK;
BEGIN READ ONLY;
SELECT workload_start(:'id', :'claim', 'w1', :token + 1);
ROLLBACK;
\set VERBOSITY default
SELECT t.fingerprint() = :'before' AS claims_and_start_wrote_nothing;
\set VERBOSITY sqlstate
SELECT workload_start(:'id', :'claim', 'w1', :token) AS started;
SELECT t.fingerprint() AS before \gset
BEGIN READ ONLY;
SELECT workload_heartbeat(:'id', :'claim', 'w1', :token, '30 seconds');
ROLLBACK;
BEGIN READ ONLY;
SELECT workload_complete(:'id', :'claim', 'w1', :token, 'ro-result', '{"ok": true}');
ROLLBACK;
BEGIN READ ONLY;
SELECT count(*) FROM workload_complete_many('w1', jsonb_build_array(jsonb_build_object(
    'workload_id', :'id', 'claim_id', :'claim', 'fencing_token', :token,
    'result_id', 'ro-result', 'output', '{"ok": true}')));
ROLLBACK;
BEGIN READ ONLY;
SELECT t.create('ro-new');
ROLLBACK;
\set VERBOSITY default

-- nothing was written; reads still answer in a read-only transaction
SELECT t.fingerprint() = :'before' AS nothing_written;
BEGIN READ ONLY;
SELECT workload_get(:'id') ->> 'state' AS state;
ROLLBACK;
-- and the same calls write outside one
SELECT workload_complete(:'id', :'claim', 'w1', :token, 'ro-result', '{"ok": true}') ->> 'outcome' AS outcome;
