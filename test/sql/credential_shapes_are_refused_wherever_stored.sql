-- Strings shaped like the credentials common services issue are refused as secrets (WORKLOAD_SECRET_REJECTED) in any stored value, while look-alikes that are no credential are kept (SPEC section 5, "Secrets"; section 5.1).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- verdict(value): the SQLSTATE of creating a workload whose input holds the value
CREATE FUNCTION pg_temp.verdict(v text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM workload_create(t.spec(md5(v), jsonb_build_object('input', jsonb_build_object('v', v))));
    RETURN '00000';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- credentials: each refused (WL010)
SELECT label, pg_temp.verdict(v) AS code FROM (VALUES
    ('stripe secret key',      'sk_live_4eC39HqLyjWDarjtT1zdp7dc'),
    ('stripe test key',        'sk_test_4eC39HqLyjWDarjtT1zdp7dc'),
    ('stripe restricted key',  'rk_live_51H8nGxKZ3abcdef'),
    ('stripe webhook secret',  'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
    ('github token',           'ghp_16C7e42F292c6912E7710c838347Ae178B4a'),
    ('github app token',       'ghs_16C7e42F292c6912E7710c838347Ae178B4a'),
    ('github fine-grained',    'github_pat_11ABCDEFG0123456789_abcdefghijklmnop'),
    ('slack bot token',        'xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy'),
    ('slack user token',       'xoxp-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy'),
    ('aws access key id',      'AKIAIOSFODNN7EXAMPLE'),
    ('aws temporary key id',   'ASIAIOSFODNN7EXAMPLE'),
    ('jwt',                    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'),
    ('bearer jwt',             'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc'),
    ('url with a password',    'postgres://app:hunter2@db.internal:5432/prod'),
    ('url password in text',   'connect with https://deploy:s3cret@git.example.com/repo.git please'),
    ('basic auth',             'Basic dXNlcjpwYXNzd29yZA=='),
    ('authorization header',   'Authorization: Basic dXNlcjpwYXNzd29yZA=='),
    ('authorization bearer',   'authorization: Bearer 0123456789abcdef'),
    ('upper case prefix',      '  GHP_16C7E42F292C6912E7710C838347AE178B4A')
) AS x(label, v) ORDER BY label;

-- look-alikes that are no credential: kept
SELECT label, pg_temp.verdict(v) AS code FROM (VALUES
    ('a word starting with sk', 'skater'),
    ('ghp without underscore', 'ghp-pages'),
    ('too short an aws id',    'AKIA1234'),
    ('aws-like but lower',     'akiaiosfodnn7example'),
    ('a json fragment',        'eyJ'),
    ('two dots only',          'eyJhbGci.eyJzdWIi'),
    ('url without password',   'https://user@example.com/path'),
    ('url with a port',        'postgres://db.internal:5432/prod'),
    ('a secret reference',     'secret://vault/prod/db'),
    ('basic in a sentence',    'the Basic plan'),
    ('basic without a value',  'Basic '),
    ('the word authorization', 'authorization pending'),
    ('a time with colons',     '12:30:45 at https://example.com/a:b')
) AS x(label, v) ORDER BY label;

-- the same rules hold for a failure's error text and a checkpoint's state
SELECT t.create('run') AS id \gset
SELECT claim_id, fencing_token FROM t.run(:'id') \gset
SELECT workload_checkpoint(:'id', :'claim_id', 'w1', :fencing_token, '{"token_like": "xoxb-1-2-abc"}');
\echo :SQLSTATE
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'login failed for postgres://app:hunter2@db/x');
\echo :SQLSTATE
SELECT workload_fail(:'id', :'claim_id', 'w1', :fencing_token, 'worker_failure', 'login failed') AS state;
