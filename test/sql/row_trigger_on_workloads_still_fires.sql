-- A row trigger that a superuser puts on the tables behind the view workload.workloads (an audit, say), still fires for the claim, start, heartbeat, complete and a batch of completions: with one on workload.runs (where a claimed workload's state is written, from its first claim on) those calls run as statements, not on the rows directly (store_claim_direct.c, store_fenced.c), and answer the same; a stale fence is still refused.  One on workload.workload_rows sees what happens to a workload before its first claim (here: its cancellation).
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';
CREATE FUNCTION t.audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'audit: % % of %: % -> %', TG_OP, TG_TABLE_NAME, NEW.seq > 0,
        CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END, NEW.state;
    RETURN NEW;
END $$;
CREATE TRIGGER audit_row BEFORE INSERT OR UPDATE ON workload.runs
    FOR EACH ROW EXECUTE FUNCTION t.audit_row();
CREATE TRIGGER audit_row BEFORE UPDATE ON workload.workload_rows
    FOR EACH ROW EXECUTE FUNCTION t.audit_row();

SELECT t.create('audited') IS NOT NULL AS created;
SELECT workload_id AS id, claim_id, fencing_token
FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT workload_start(:'id', :'claim_id', 'w1', :fencing_token);
SELECT workload_get(:'id') ->> 'state' AS started;
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds', '{"pct": 10}') ->> 'state' AS beat;
SELECT workload_complete(:'id', :'claim_id', 'w1', :fencing_token, 'r-audited', '{}') ->> 'result_id' AS result;
-- the claim is released: the same fence again is refused
SELECT workload_heartbeat(:'id', :'claim_id', 'w1', :fencing_token, '30 seconds', '{}');
SELECT workload_get(:'id') ->> 'state' AS state;
-- a batch of completions
SELECT t.create('audited-2') IS NOT NULL AS created;
SELECT workload_id AS id2, claim_id AS claim2, fencing_token AS token2
FROM workload_claim('w1', '{}', 'acme', 'billing', start => true) \gset
SELECT outcome FROM workload_complete_many('w1', jsonb_build_array(jsonb_build_object(
    'workload_id', :'id2', 'claim_id', :'claim2', 'fencing_token', :token2,
    'result_id', 'r-audited-2', 'output', '{}')));

-- before its first claim a workload's state is on its workload row
SELECT t.create('audited-3') AS id3 \gset
SELECT workload_cancel(:'id3', 'client:bob') AS cancelled;

DROP TRIGGER audit_row ON workload.workload_rows;
DROP TRIGGER audit_row ON workload.runs;
DROP FUNCTION t.audit_row();
