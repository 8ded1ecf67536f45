-- A thousand workloads whose maintenance step fails do not use up the tick's limit: the
-- workload behind them is still recovered in the same pass, the pass does not ask to run
-- again at once ("more"), and the next passes pass the failed ones over for a while instead
-- of failing them again each time (SPEC section 5: one tenant can never stop another's
-- maintenance).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

-- 1,050 claims of tenant acme with a 10 s lease, and one of tenant globex with a 20 s lease:
-- it expires last, so the lease scan (by expiry) reaches it after all the others
SELECT count(*) AS claimed FROM (
    SELECT workload_claim_id(t.create('bad-' || g), 'w', '{}', '10 seconds')
    FROM generate_series(1, 1050) g) c;
SELECT t.create('good', '{}', 'globex') AS good \gset
SELECT * FROM workload_claim_id(:'good', 'w', '{}', '20 seconds') \gset good_
-- acme's recoveries fail (a fault injected by a trigger only a superuser can add)
CREATE FUNCTION pg_temp.refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'injected fault' USING ERRCODE = 'XX123';
END $$;
CREATE TRIGGER injected_fault BEFORE INSERT ON workload.event_rows FOR EACH ROW
    WHEN (NEW.tenant_id = 'acme' AND NEW.actor = 'workload.recovery')
    EXECUTE FUNCTION pg_temp.refuse_event();
SET workload.clock_override = '2026-01-01 00:01:00+00';

-- one pass: every acme workload fails and is reported, globex's is recovered, and nothing is
-- left that another pass right away could do
SET client_min_messages = error;
SELECT t.recovered, t.failed, t.deferred, t.more, jsonb_array_length(t.errors) AS errors_listed
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int, more boolean, errors jsonb);
RESET client_min_messages;
SELECT state, claimed FROM t.st(:'good');
SELECT state, count(*) FROM workload.workloads WHERE tenant_id = 'acme' GROUP BY state;

-- the next pass, a second later, tries none of them again
SET workload.clock_override = '2026-01-01 00:01:01+00';
SELECT t.recovered, t.failed, t.deferred, t.more
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int, more boolean);

-- after 10 s they are tried again: with the fault still there they fail and now wait 20 s
SET workload.clock_override = '2026-01-01 00:01:11+00';
SET client_min_messages = error;
SELECT t.recovered, t.failed, t.deferred FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int);
RESET client_min_messages;
SET workload.clock_override = '2026-01-01 00:01:25+00';
SELECT t.recovered, t.failed, t.deferred FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int);

-- the fault gone, once their wait is over they are recovered, a thousand a pass
DROP TRIGGER injected_fault ON workload.event_rows;
SET workload.clock_override = '2026-01-01 00:01:32+00';
SELECT t.recovered, t.failed, t.deferred, t.more
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int, more boolean);
SELECT t.recovered, t.failed, t.deferred, t.more
FROM jsonb_to_record(workload_tick()) AS t(recovered int, failed int, deferred int, more boolean);
SELECT state, count(*) FROM workload.workloads WHERE tenant_id = 'acme' GROUP BY state;
