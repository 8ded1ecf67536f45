-- A READY workload is claimed only once it is due (next_attempt_at after a failure's backoff) and all its dependencies are in their required state (SPEC 4, "Claiming and running": workload_claim).
\set SHOW_CONTEXT never
\set ECHO none
SET client_min_messages = warning;
\i test/include/helpers.sql
RESET client_min_messages;
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
\set tn hb-due-deps

-- due time: a failure with a 60 s backoff makes the workload READY but not due
SELECT t.create('flaky', '{"retry_policy": {"initial_delay_ms": 60000, "backoff": "fixed"}}', :'tn') AS flaky \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', :'tn', 'billing', start => true) \gset
SELECT workload_fail(:'flaky', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'connection reset');
SELECT state, next_attempt_at FROM workload.workloads WHERE workload_id = :'flaky';
SELECT t.fingerprint() AS before \gset
SELECT count(*) AS claimed FROM workload_claim('w2', '{}', :'tn', 'billing');
SET workload.clock_override = '2026-01-01 00:00:59.999+00';
SELECT count(*) AS claimed FROM workload_claim('w2', '{}', :'tn', 'billing');
SELECT t.fingerprint() = :'before' AS unchanged;
-- at next_attempt_at it is due
SET workload.clock_override = '2026-01-01 00:01:00+00';
SELECT workload_id = :'flaky' AS is_flaky, attempt, fencing_token FROM workload_claim('w2', '{}', :'tn', 'billing');

-- dependencies: child waits for parent; grandchild for parent and other-parent.
-- Both outrank their dependencies.
SET workload.clock_override = '2026-01-01 00:10:00+00';
SELECT t.create('parent', '{}', :'tn') AS parent \gset
SELECT t.create('other-parent', '{}', :'tn') AS other_parent \gset
SELECT t.create('child', jsonb_build_object('priority', 10,
         'dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'parent'))), :'tn') AS child \gset
SELECT t.create('grandchild', jsonb_build_object('priority', 20,
         'dependencies', jsonb_build_array(
            jsonb_build_object('workload_id', :'parent', 'required_state', 'SUCCEEDED'),
            jsonb_build_object('workload_id', :'other_parent', 'required_state', 'SUCCEEDED'))), :'tn') AS grandchild \gset
-- required_state defaults to SUCCEEDED
SELECT depends_on = :'parent' AS on_parent, required_state FROM workload.dependencies
WHERE workload_id = :'child';
\set keys 'SELECT s.input->>''n'' AS key, w.state FROM workload.workloads w JOIN workload.specs s USING (workload_id) WHERE w.tenant_id = :''tn'' AND s.input->>''n'' IN (''parent'', ''other-parent'', ''child'', ''grandchild'') ORDER BY w.priority DESC, key'
:keys;

-- the claimer passes over grandchild and child and takes parent
SET workload.clock_override = '2026-01-01 00:10:01+00';
SELECT claim_id AS parent_claim, fencing_token AS parent_token, workload_id = :'parent' AS is_parent
FROM workload_claim('w3', '{}', :'tn', 'billing') \gset
\echo :is_parent
SELECT workload_start(:'parent', :'parent_claim', 'w3', :parent_token);
-- parent RUNNING is not SUCCEEDED: only other-parent can be claimed
SELECT input->>'n' AS key FROM workload_claim('w4', '{}', :'tn', 'billing', max_items => 10) ORDER BY 1;
SELECT claim_id AS other_claim, fencing_token AS other_token FROM workload.workloads
WHERE workload_id = :'other_parent' \gset
:keys;

-- right after parent completes, child is claimable; grandchild still waits for other-parent
SELECT workload_complete(:'parent', :'parent_claim', 'w3', :parent_token, 'hb-result-parent', '{}') IS NOT NULL AS completed;
SELECT input->>'n' AS key FROM workload_claim('w5', '{}', :'tn', 'billing', max_items => 10) ORDER BY 1;
SELECT workload_start(:'other_parent', :'other_claim', 'w4', :other_token);
SELECT workload_complete(:'other_parent', :'other_claim', 'w4', :other_token, 'hb-result-other', '{}') IS NOT NULL AS completed;
SELECT input->>'n' AS key FROM workload_claim('w5', '{}', :'tn', 'billing', max_items => 10) ORDER BY 1;
:keys;

-- required_state DEAD_LETTER: cleanup runs only once doomed is dead-lettered;
-- on-success (needs SUCCEEDED) stays unclaimable (DEAD_LETTER can still be retried)
SET workload.clock_override = '2026-01-01 00:20:00+00';
SELECT t.create('doomed', '{"retry_policy": {"max_attempts": 1}}', :'tn') AS doomed \gset
SELECT t.create('cleanup', jsonb_build_object('priority', 5,
         'dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'doomed', 'required_state', 'DEAD_LETTER'))), :'tn') AS cleanup \gset
SELECT t.create('on-success', jsonb_build_object('priority', 5,
         'dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'doomed'))), :'tn') AS on_success \gset
SELECT claim_id AS doomed_claim, fencing_token AS doomed_token, workload_id = :'doomed' AS is_doomed
FROM workload_claim('w6', '{}', :'tn', 'billing', start => true) \gset
\echo :is_doomed
SELECT count(*) AS claimed FROM workload_claim('w7', '{}', :'tn', 'billing', max_items => 10);
SELECT workload_fail(:'doomed', :'doomed_claim', 'w6', :doomed_token, 'worker_failure', 'out of memory');
SELECT input->>'n' AS key FROM workload_claim('w7', '{}', :'tn', 'billing', max_items => 10) ORDER BY 1;
SELECT s.input->>'n' AS key, w.state FROM workload.workloads w JOIN workload.specs s USING (workload_id)
WHERE w.workload_id IN (:'doomed', :'cleanup', :'on_success') ORDER BY key;
