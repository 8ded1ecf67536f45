-- Included by the plans_* regress tests (not a test itself): one batch and one
-- single job in acme/billing, so that this session plans every hot-path
-- statement, then 3000 workloads of acme/bulk created, claimed and completed
-- under those plans.
CREATE TEMP TABLE c AS
SELECT * FROM workload_claim('w1', '{}', 'acme', 'billing', max_items => 2, start => true);
SELECT count(*) FROM workload_heartbeat_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token)) FROM c), '1 minute');
SELECT count(*) FROM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '{}'::jsonb)) FROM c));
SELECT workload_id AS id, claim_id AS claim, fencing_token AS token FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT workload_start(:'id', :'claim', 'w1', :token);
SELECT workload_heartbeat(:'id', :'claim', 'w1', :token, '1 minute') IS NOT NULL;
SELECT workload_complete(:'id', :'claim', 'w1', :token, 'r-' || :'id', '{}') IS NOT NULL;

-- the tables grow under those plans: 3000 workloads of another application,
-- claimed and completed in batches (attempts, events, results, specs grow)
SELECT count(t.create('bulk-' || g, '{}', 'acme', 'bulk')) FROM generate_series(1, 3000) g;
DO $$
BEGIN
    FOR i IN 1..6 LOOP
        PERFORM workload_complete_many('w1', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
            'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id,
            'output', '{}'::jsonb))
            FROM workload_claim('w1', '{}', 'acme', 'bulk', max_items => 500, start => true)));
    END LOOP;
END $$;
SELECT count(*) AS bulk_succeeded FROM workload.workloads WHERE application_id = 'bulk' AND state = 'SUCCEEDED';
