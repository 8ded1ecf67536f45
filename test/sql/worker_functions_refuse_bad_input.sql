-- Every worker and operator function refuses NULL, unknown ids, oversized ids, bad arrays and bad leases, and changes nothing (SPEC section 4).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- make(key, extra): create a workload in this test's own tenant, apart from other tests' workloads
CREATE FUNCTION pg_temp.make(key text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS
    $$ SELECT t.create(key, extra, 'input-tests') $$;

-- a running workload with a live claim: every call below is valid but for the one argument it spoils
SELECT pg_temp.make('x') AS id \gset
SELECT claim_id, fencing_token FROM workload_claim_id(:'id', 'w1', '{}') \gset
SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);

-- each function's required arguments: names, types and a valid value for each
CREATE TEMP TABLE sig(fn text, names text[], types text[], vals text[]);
INSERT INTO sig VALUES
  ('workload_claim', '{worker_id,capabilities,tenant_id,application_id,lease,max_items,start}',
     '{text,text[],text,text,interval,int,boolean}', ARRAY['w1', '{}', 'input-tests', 'billing', '30 seconds', '1', 'false']),
  ('workload_claim_id', '{id,worker_id,capabilities,lease}',
     '{text,text,text[],interval}', ARRAY[:'id', 'w1', '{}', '30 seconds']),
  ('workload_start', '{workload_id,claim_id,worker_id,fencing_token}',
     '{text,text,text,bigint}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token']),
  ('workload_heartbeat', '{workload_id,claim_id,worker_id,fencing_token,extend}',
     '{text,text,text,bigint,interval}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token', '30 seconds']),
  ('workload_checkpoint', '{workload_id,claim_id,worker_id,fencing_token,state}',
     '{text,text,text,bigint,jsonb}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token', '{"page": 1}']),
  ('workload_complete', '{workload_id,claim_id,worker_id,fencing_token,result_id,output,artifacts,schema_version}',
     '{text,text,text,bigint,text,jsonb,text[],int}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token', 'input-tests-r1', '{}', '{}', '1']),
  ('workload_fail', '{workload_id,claim_id,worker_id,fencing_token,kind,error}',
     '{text,text,text,bigint,text,text}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token', 'worker_failure', 'x']),
  ('workload_confirm_cancel', '{workload_id,claim_id,worker_id,fencing_token}',
     '{text,text,text,bigint}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token']),
  ('workload_execution_context', '{workload_id,claim_id,worker_id,fencing_token,secret_references}',
     '{text,text,text,bigint,text[]}', ARRAY[:'id', :'claim_id', 'w1', :'fencing_token', '{}']),
  ('workload_cancel', '{workload_id,actor}', '{text,text}', ARRAY[:'id', 'ops:alice']),
  ('workload_retry', '{workload_id,actor}', '{text,text}', ARRAY[:'id', 'ops:alice']),
  ('workload_timeout', '{workload_id,actor}', '{text,text}', ARRAY[:'id', 'ops:alice']);

-- call(fn, types, vals): the SQL of one call, every argument a typed literal
CREATE FUNCTION pg_temp.call(fn text, types text[], vals text[]) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s(%s)', fn, string_agg(coalesce(quote_literal(v), 'NULL') || '::' || ty, ', ' ORDER BY i))
    FROM unnest(types, vals) WITH ORDINALITY u(ty, v, i)
$$;
-- try(sql): run the call in its own subtransaction; its SQLSTATE and DETAIL ('00000' if it ran)
CREATE FUNCTION pg_temp.try(sql text, OUT code text, OUT detail text) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'SELECT count(*) FROM ' || sql;
    code := '00000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL;
END $$;
-- spoil(vals, names, which, bad): vals with every argument named in which replaced by bad
CREATE FUNCTION pg_temp.spoil(vals text[], names text[], which text[], bad text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(CASE WHEN n = ANY (which) THEN bad ELSE v END ORDER BY i)
    FROM unnest(vals, names) WITH ORDINALITY u(v, n, i)
$$;

SELECT t.fingerprint() AS before \gset

-- NULL in each required argument: WORKLOAD_INVALID
SELECT s.fn, s.names[i] AS null_argument, r.code, r.detail
FROM sig s, generate_subscripts(s.names, 1) i,
     LATERAL pg_temp.try(pg_temp.call(s.fn, s.types, s.vals[:i - 1] || NULL::text || s.vals[i + 1:])) r
ORDER BY s.fn, i;

-- an unknown workload id: WORKLOAD_NOT_FOUND (the row is looked up before the fence is checked)
SELECT s.fn, r.code, r.detail
FROM sig s, LATERAL pg_temp.try(pg_temp.call(s.fn, s.types,
        pg_temp.spoil(s.vals, s.names, '{workload_id,id}', 'workload_000000000000000000000000'))) r
WHERE s.names && '{workload_id,id}' ORDER BY s.fn;

-- a 300-byte worker_id (or actor): WORKLOAD_INVALID
SELECT s.fn, r.code, r.detail
FROM sig s, LATERAL pg_temp.try(pg_temp.call(s.fn, s.types,
        pg_temp.spoil(s.vals, s.names, '{worker_id,actor}', repeat('w', 300)))) r
WHERE s.names && '{worker_id,actor}' ORDER BY s.fn;

-- a two-dimensional capabilities array: WORKLOAD_INVALID
SELECT s.fn, r.code, r.detail
FROM sig s, LATERAL pg_temp.try(pg_temp.call(s.fn, s.types,
        pg_temp.spoil(s.vals, s.names, '{capabilities}', '{{a},{b}}'))) r
WHERE s.names && '{capabilities}' ORDER BY s.fn;

-- a lease (or extension) that is not above zero and at most 86400 seconds: WORKLOAD_INVALID
SELECT s.fn, l.lease, r.code, r.detail
FROM sig s, (VALUES (1, '-1 second'), (2, '0'), (3, '86401 seconds'), (4, '100 days'), (5, '1 mon')) l(n, lease),
     LATERAL pg_temp.try(pg_temp.call(s.fn, s.types, pg_temp.spoil(s.vals, s.names, '{lease,extend}', l.lease))) r
WHERE s.names && '{lease,extend}' ORDER BY s.fn, l.n;

-- and max_items outside 1..1000, schema_version below 1
SELECT m.max_items, (pg_temp.try(pg_temp.call(s.fn, s.types, pg_temp.spoil(s.vals, s.names, '{max_items}', m.max_items)))).*
FROM sig s, (VALUES ('0'), ('1001'), ('-1')) m(max_items) WHERE s.fn = 'workload_claim' ORDER BY m.max_items;
SELECT (pg_temp.try(pg_temp.call(s.fn, s.types, pg_temp.spoil(s.vals, s.names, '{schema_version}', '0')))).*
FROM sig s WHERE s.fn = 'workload_complete';

-- none of it changed anything; the workload still runs under the same claim
SELECT t.fingerprint() = :'before' AS unchanged;
SELECT workload_get(:'id') ->> 'state' AS state,
       workload_get(:'id') -> 'current_claim' ->> 'claim_id' = :'claim_id' AS same_claim;
-- while the unspoiled calls are accepted (shown with two that only read or extend the lease)
SELECT s.fn, r.code FROM sig s, LATERAL pg_temp.try(pg_temp.call(s.fn, s.types, s.vals)) r
WHERE s.fn IN ('workload_execution_context', 'workload_heartbeat') ORDER BY s.fn;
