-- A dependency must exist in the same tenant and application (else WORKLOAD_NOT_FOUND, nothing changed); a valid one is recorded with required_state defaulting to SUCCEEDED; a dependency already final in another state cancels the new dependent at once (SPEC section 4, "Creating and reading").
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('parent') AS parent \gset
SELECT t.create('other-tenant', '{}', 'globex', 'billing') AS other_tenant \gset
SELECT t.create('other-app', '{}', 'acme', 'shipping') AS other_app \gset
SELECT t.fingerprint() AS before \gset

-- no such workload
SELECT workload_create(t.spec('child-1', '{"dependencies": [{"workload_id": "workload_000000000000000000000000"}]}'));
\echo :SQLSTATE
-- it exists, but in another tenant, or in another application: as if it did not
SELECT workload_create(t.spec('child-2', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'other_tenant')))));
\echo :SQLSTATE
SELECT workload_create(t.spec('child-3', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'other_app')))));
\echo :SQLSTATE
-- one good dependency does not excuse a missing one
SELECT workload_create(t.spec('child-4', jsonb_build_object('dependencies', jsonb_build_array(
    jsonb_build_object('workload_id', :'parent'), jsonb_build_object('workload_id', 'workload_missing')))));
\echo :SQLSTATE
-- ids are exact: another case is another id
SELECT workload_create(t.spec('child-5', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', upper(:'parent'))))));
\echo :SQLSTATE
SELECT t.fingerprint() = :'before' AS unchanged;

-- a valid dependency: recorded, required_state defaults to SUCCEEDED
SELECT workload_create(t.spec('child', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'parent'))))) AS child_doc \gset
SELECT (:'child_doc'::jsonb)->>'workload_id' AS child \gset
SELECT (:'child_doc'::jsonb)->>'state' AS state,
       (:'child_doc'::jsonb)->'dependencies' = jsonb_build_array(jsonb_build_object('workload_id', :'parent', 'required_state', 'SUCCEEDED')) AS recorded_with_default;
SELECT workload_get(:'child')->'dependencies'->0->>'required_state' AS required_state_in_get;
SELECT depends_on = :'parent' AS depends_on_parent, required_state FROM workload.dependencies WHERE workload_id = :'child';
-- an explicit required_state is kept
SELECT d->'dependencies'->0->>'required_state' AS required_state
FROM workload_create(t.spec('child-on-failure', jsonb_build_object('dependencies',
    jsonb_build_array(jsonb_build_object('workload_id', :'parent', 'required_state', 'FAILED'))))) d;
-- several dependencies are all recorded, in the order given
SELECT t.create('parent-2') AS parent2 \gset
SELECT jsonb_array_length(d->'dependencies') AS deps,
       d->'dependencies'->0->>'workload_id' = :'parent2' AS first_is_parent2,
       d->'dependencies'->1->>'workload_id' = :'parent' AS second_is_parent
FROM workload_create(t.spec('child-two', jsonb_build_object('dependencies', jsonb_build_array(
    jsonb_build_object('workload_id', :'parent2'), jsonb_build_object('workload_id', :'parent'))))) d;

-- a dependency already CANCELLED: the dependent is created and cancelled at once
SELECT t.create('doomed') AS doomed \gset
SELECT workload_cancel(:'doomed', 'human:ops');
SELECT workload_create(t.spec('orphan', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'doomed'))))) AS orphan_doc \gset
SELECT (:'orphan_doc'::jsonb)->>'workload_id' AS orphan \gset
SELECT (:'orphan_doc'::jsonb)->>'state' AS state_returned, workload_get(:'orphan')->>'state' AS state_stored;
SELECT event_type, from_state, to_state, actor, evidence->>'cause' AS cause,
       evidence->>'dependency' = :'doomed' AS names_dependency, evidence->>'dependency_state' AS dependency_state
FROM workload_history(:'orphan') ORDER BY sequence;
-- it is never claimable
SELECT count(*) AS claimed FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 100) c WHERE c.workload_id = :'orphan';
-- creating it again returns the same cancelled workload, and records nothing more
SELECT t.fingerprint() AS before \gset
SELECT workload_create(t.spec('orphan', jsonb_build_object('dependencies', jsonb_build_array(jsonb_build_object('workload_id', :'doomed')))))->>'state' AS state_again,
       t.fingerprint() = :'before' AS unchanged;

-- a CANCELLED dependency that was required to be CANCELLED is reachable: the dependent stays READY
SELECT d->>'state' AS state FROM workload_create(t.spec('after-cancel', jsonb_build_object('dependencies',
    jsonb_build_array(jsonb_build_object('workload_id', :'doomed', 'required_state', 'CANCELLED'))))) d;
