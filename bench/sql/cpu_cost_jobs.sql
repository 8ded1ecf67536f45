-- bench/sql/cpu_cost_jobs.sql: one job and one batch of ten, as functions, for bench/cpu_cost.sh.
CREATE SCHEMA bench;
CREATE FUNCTION bench.job() RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    SELECT * INTO r FROM workload_claim('w', '{}', 'acme', 'billing');
    PERFORM workload_start(r.workload_id, r.claim_id, 'w', r.fencing_token);
    PERFORM workload_complete(r.workload_id, r.claim_id, 'w', r.fencing_token, r.workload_id, '{}');
END $$;
CREATE FUNCTION bench.batch() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM workload_complete_many('w', (SELECT jsonb_agg(jsonb_build_object('workload_id', c.workload_id,
        'claim_id', c.claim_id, 'fencing_token', c.fencing_token, 'result_id', c.workload_id, 'output', '{}'::jsonb))
        FROM workload_claim('w', '{}', 'acme', 'billing', max_items => 10, start => true) c));
END $$;
