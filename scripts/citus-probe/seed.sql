-- seed.sql: 2000 READY workloads for each of acme (w1) and hooli (w2), with specs.
INSERT INTO m.workloads (tenant_id, workload_id, state, priority)
  SELECT t, t || '_' || i, 'READY', i % 3 FROM unnest(ARRAY['acme', 'hooli']) t, generate_series(1, 2000) i;
INSERT INTO m.specs (tenant_id, workload_id, idempotency_key, input)
  SELECT t, t || '_' || i, 'k' || i, jsonb_build_object('i', i) FROM unnest(ARRAY['acme', 'hooli']) t, generate_series(1, 2000) i;
ANALYZE m.workloads, m.specs;
