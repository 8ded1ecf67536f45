-- Every refusal code is listed once, with its own SQLSTATE WL001..WL018 and a PostgreSQL-style message (SPEC section 4, workload_error_codes).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

SELECT * FROM workload_error_codes() ORDER BY sqlstate;

-- 18 codes, 18 distinct tokens, 18 distinct SQLSTATEs, exactly WL001..WL018
SELECT count(*) AS codes, count(DISTINCT code) AS tokens, count(DISTINCT sqlstate) AS sqlstates,
       array_agg(sqlstate ORDER BY sqlstate) = (SELECT array_agg(format('WL%s', lpad(n::text, 3, '0')) ORDER BY n)
                                                FROM generate_series(1, 18) n) AS wl001_to_wl018
FROM workload_error_codes();

-- the tokens SPEC section 4 names, no more, no fewer
SELECT array_agg(code ORDER BY code) = ARRAY['AUTHORIZATION_DENIED', 'WORKLOAD_CAPABILITY_DENIED',
    'WORKLOAD_CHECKPOINT_TAMPERED', 'WORKLOAD_CLAIM_INVALID', 'WORKLOAD_COMPENSATION_UNAUTHORIZED',
    'WORKLOAD_IDEMPOTENCY_CONFLICT', 'WORKLOAD_INVALID', 'WORKLOAD_LEASE_EXPIRED', 'WORKLOAD_NOT_FOUND',
    'WORKLOAD_NOT_READY', 'WORKLOAD_QUOTA_EXCEEDED', 'WORKLOAD_RAW_WRITE_DENIED', 'WORKLOAD_RESULT_DUPLICATE', 'WORKLOAD_SECRET_REJECTED',
    'WORKLOAD_SNAPSHOT_MISMATCH', 'WORKLOAD_STALE_FENCE', 'WORKLOAD_TRANSITION_DENIED', 'WORKLOAD_UNAUTHORIZED']
    AS spec_tokens
FROM workload_error_codes();

-- messages in PostgreSQL style: no leading capital, no final period (rows shown are the offenders: none)
SELECT code, message FROM workload_error_codes()
WHERE message ~ '^[A-Z]' OR message ~ '\.$' OR message = '' ORDER BY code;

-- a raised refusal carries its code as the message prefix and its SQLSTATE
SELECT workload_get(NULL);
\echo :SQLSTATE
SELECT workload_cancel('workload_000000000000000000000000', 'ops:alice');
\echo :SQLSTATE
