-- workload_create refuses (WORKLOAD_UNAUTHORIZED) an authorization snapshot that does not bind the requester, tenant and application, is not active, not yet valid or expired, or does not cover capability_snapshot (SPEC section 5; each variant is properly signed, so the refusal is for the reason named, not the signature).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT t.create('seed') IS NOT NULL AS seeded;
SELECT t.fingerprint() AS before \gset

-- the grant's subject is someone else: another id, or the same id of another kind
SELECT workload_create(t.spec('a1', jsonb_build_object('authorization_snapshot', t.grant(subject_id => 'intruder'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('a2', '{"requested_by": {"kind": "agent", "id": "intruder"}}'));
\echo :SQLSTATE
SELECT workload_create(t.spec('a3', jsonb_build_object('authorization_snapshot',
    workload_sign_grant(jsonb_set(t.unsigned_grant(), '{subject,kind}', '"human"')))));
\echo :SQLSTATE
SELECT workload_create(t.spec('a4', '{"requested_by": {"kind": "service", "id": "planner"}}'));
\echo :SQLSTATE
-- a grant without a subject binds no one
SELECT workload_create(t.spec('a5', jsonb_build_object('authorization_snapshot', t.grant() #- '{grant,subject}')));
\echo :SQLSTATE

-- the grant is for another tenant or another application
SELECT workload_create(t.spec('b1', jsonb_build_object('authorization_snapshot', t.grant(tenant => 'globex'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('b2', jsonb_build_object('authorization_snapshot', t.grant(app => 'shipping'))));
\echo :SQLSTATE
-- ids are compared exactly, not case-insensitively
SELECT workload_create(t.spec('b3', jsonb_build_object('authorization_snapshot', t.grant(tenant => 'ACME'))));
\echo :SQLSTATE

-- the grant is not active
SELECT workload_create(t.spec('c1', jsonb_build_object('authorization_snapshot', t.grant(status => 'suspended'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('c2', jsonb_build_object('authorization_snapshot', t.grant(status => 'revoked'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('c3', jsonb_build_object('authorization_snapshot', t.grant() #- '{grant,status}')));
\echo :SQLSTATE

-- expired (the clock is 2026-01-01 00:00:00+00): before now, exactly now, missing, unparsable
SELECT workload_create(t.spec('d1', jsonb_build_object('authorization_snapshot', t.grant(expires => '2025-12-31T23:59:59Z'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('d2', jsonb_build_object('authorization_snapshot', t.grant(expires => '2026-01-01T00:00:00Z'))));
\echo :SQLSTATE
SELECT workload_create(t.spec('d3', jsonb_build_object('authorization_snapshot', t.grant() #- '{grant,expires_at}')));
\echo :SQLSTATE
SELECT workload_create(t.spec('d4', jsonb_build_object('authorization_snapshot', jsonb_set(t.grant(), '{grant,expires_at}', '"someday"'))));
\echo :SQLSTATE

-- not yet valid: issued after now
SELECT workload_create(t.spec('e1', jsonb_build_object('authorization_snapshot',
    workload_sign_grant(jsonb_set(t.unsigned_grant(), '{issued_at}', '"2026-01-01T00:00:01Z"')))));
\echo :SQLSTATE
SELECT workload_create(t.spec('e2', jsonb_build_object('authorization_snapshot', t.grant() #- '{grant,issued_at}')));
\echo :SQLSTATE

-- the grant's capabilities do not cover capability_snapshot
SELECT workload_create(t.spec('f1', jsonb_build_object('capability_snapshot', '["render", "email"]'::jsonb,
    'authorization_snapshot', t.grant(caps => ARRAY['render']))));
\echo :SQLSTATE
SELECT workload_create(t.spec('f2', jsonb_build_object('capability_snapshot', '["render"]'::jsonb,
    'authorization_snapshot', t.grant(caps => ARRAY[]::text[]))));
\echo :SQLSTATE
SELECT workload_create(t.spec('f3', jsonb_build_object('capability_snapshot', '["render"]'::jsonb,
    'authorization_snapshot', t.grant(caps => ARRAY['Render', 'render:*']))));
\echo :SQLSTATE
-- capabilities that are not a list of strings cover nothing
SELECT workload_create(t.spec('f4', jsonb_build_object('authorization_snapshot',
    jsonb_set(t.grant(), '{grant,capabilities}', '"*"'))));
\echo :SQLSTATE

-- none of the refusals changed anything
SELECT t.fingerprint() = :'before' AS unchanged;

-- accepted: "*" covers everything; an exact cover; a wider grant; an empty snapshot under an empty grant
SELECT workload_create(t.spec('ok1', jsonb_build_object('capability_snapshot', '["render", "email"]'::jsonb,
    'authorization_snapshot', t.grant(caps => ARRAY['*']))))->>'state' AS star;
SELECT workload_create(t.spec('ok2', jsonb_build_object('capability_snapshot', '["render", "email"]'::jsonb,
    'authorization_snapshot', t.grant(caps => ARRAY['email', 'render']))))->>'state' AS exact;
SELECT workload_create(t.spec('ok3', jsonb_build_object('capability_snapshot', '["render"]'::jsonb,
    'authorization_snapshot', t.grant(caps => ARRAY['render', 'email', 'pdf']))))->>'state' AS wider;
SELECT workload_create(t.spec('ok4', jsonb_build_object('authorization_snapshot', t.grant(caps => ARRAY[]::text[]))))->>'state' AS nothing_asked;
-- valid from the very instant it was issued, until just before it expires
SELECT workload_create(t.spec('ok5', jsonb_build_object('authorization_snapshot',
    workload_sign_grant(jsonb_set(t.unsigned_grant(expires => '2026-01-01T00:00:00.000001Z'), '{issued_at}', '"2026-01-01T00:00:00Z"')))))->>'state' AS window_edges;
-- a human requester with a grant whose subject is that human
SELECT workload_create(t.spec('ok6', '{"requested_by": {"kind": "human", "id": "planner"}}' ||
    jsonb_build_object('authorization_snapshot', workload_sign_grant(jsonb_set(t.unsigned_grant(), '{subject,kind}', '"human"')))))->>'state' AS human;
-- the same grant later in time: expired once the clock passes expires_at
SET workload.clock_override = '2100-01-01 00:00:00+00';
SELECT workload_create(t.spec('late'));
\echo :SQLSTATE
SELECT (SELECT count(*) FROM workload.workloads) AS workloads;
