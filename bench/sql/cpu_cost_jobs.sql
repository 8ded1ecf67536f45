-- bench/sql/cpu_cost_jobs.sql: one job and one batch of ten, as functions, for bench/cpu_cost.sh.
CREATE SCHEMA bench;
CREATE FUNCTION bench.job() RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    SELECT * INTO r FROM workload_claim('w', '{}', 'acme', 'billing');
    PERFORM workload_start(r.workload_id, r.claim_id, 'w', r.fencing_token);
    PERFORM workload_complete(r.workload_id, r.claim_id, 'w', r.fencing_token, r.workload_id, '{}');
END $$;
-- The items are built as text, as the pgbench scripts build them.
-- A batch is two transactions, as bench/scripts/c_claim10_complete_many.pgbench
-- and a worker run it: the claim (with start) commits before the completions.
-- As one (both calls in one function) the claimed versions of the rows would
-- still be live when complete_many updates them, and about one update in nine
-- would find no room on its page and not be HOT, which no worker that commits
-- its claim sees.
CREATE FUNCTION bench.batch_claim(n int DEFAULT 10) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('bench.items', (SELECT '[' || coalesce(string_agg(
        '{"workload_id":"' || c.workload_id || '","claim_id":"' || c.claim_id ||
        '","fencing_token":' || c.fencing_token || ',"result_id":"' || c.workload_id ||
        '","output":{}}', ','), '') || ']'
        FROM workload_claim('w', '{}', 'acme', 'billing', max_items => n, start => true) c), false);
END $$;
CREATE FUNCTION bench.batch_complete() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM workload_complete_many('w', current_setting('bench.items')::jsonb);
END $$;
-- The baseline (a) of bench/run.sh as one job: a bare SKIP LOCKED queue table,
-- claimed, started and completed by three statements (plpgsql keeps their plans).
CREATE TABLE bench.q (id bigint PRIMARY KEY, priority int NOT NULL, state text NOT NULL,
                      token bigint NOT NULL DEFAULT 0, payload jsonb NOT NULL);
CREATE INDEX q_ready_idx ON bench.q (priority DESC, id) WHERE state = 'ready';
CREATE FUNCTION bench.bare_job() RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    WITH c AS (UPDATE bench.q SET state = 'claimed', token = token + 1
               WHERE id = (SELECT id FROM bench.q WHERE state = 'ready'
                           ORDER BY priority DESC, id FOR UPDATE SKIP LOCKED LIMIT 1)
               RETURNING id, token)
    SELECT id, token INTO r FROM c;
    UPDATE bench.q SET state = 'running' WHERE id = r.id AND token = r.token;
    UPDATE bench.q SET state = 'done' WHERE id = r.id AND token = r.token;
END $$;
