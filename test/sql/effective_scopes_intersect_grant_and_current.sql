-- Effective scopes are granted ∩ current, "*" standing for the other side, an empty side authorizing nothing (SPEC section 5, workload_effective_scopes).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT granted, current, workload_effective_scopes(granted, current) AS effective
FROM (VALUES
    (1, ARRAY['*'],        ARRAY['a', 'b']),
    (2, ARRAY['a', 'b'],   ARRAY['*']),
    (3, ARRAY['a', 'b'],   ARRAY['b', 'c']),
    (4, ARRAY['a', 'b'],   ARRAY['c', 'd']),
    (5, '{}'::text[],      ARRAY['a']),
    (6, ARRAY['a'],        '{}'::text[]),
    (7, '{}'::text[],      ARRAY['*']),
    (8, ARRAY['*'],        '{}'::text[]),
    (9, ARRAY['*'],        ARRAY['*']),
    (10, ARRAY['*', 'a'],  ARRAY['a', 'b']),
    (11, ARRAY['a', 'a', 'b'], ARRAY['a', 'b'])
) v(n, granted, current) ORDER BY n;

-- a wildcard never widens the narrowed side: the result is always within both sides
SELECT bool_and(e <@ (CASE WHEN '*' = ANY (g) THEN c ELSE g END)
            AND e <@ (CASE WHEN '*' = ANY (c) THEN g ELSE c END)) AS never_wider
FROM (VALUES (ARRAY['*'], ARRAY['x', 'y']), (ARRAY['x'], ARRAY['*']), (ARRAY['x', 'y'], ARRAY['y', 'z']),
             (ARRAY['*'], ARRAY['*'])) v(g, c),
     LATERAL workload_effective_scopes(g, c) e;

-- NULL, as an argument or an element, is invalid
SELECT workload_effective_scopes(NULL, ARRAY['a']);
\echo :SQLSTATE
SELECT workload_effective_scopes(ARRAY['a'], NULL);
\echo :SQLSTATE
SELECT workload_effective_scopes(ARRAY['a', NULL], ARRAY['a']);
\echo :SQLSTATE
SELECT workload_effective_scopes(ARRAY['a'], ARRAY[NULL, 'a']);
\echo :SQLSTATE
-- and so are blank items and a two-dimensional array
SELECT workload_effective_scopes(ARRAY[' '], ARRAY['a']);
\echo :SQLSTATE
SELECT workload_effective_scopes(ARRAY[['a'], ['b']], ARRAY['a']);
\echo :SQLSTATE
