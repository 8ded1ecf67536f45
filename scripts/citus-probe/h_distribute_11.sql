-- h_distribute_11.sql: try to distribute workload 1.1's tables as they are.
SET citus.enable_unsafe_triggers = on;
\echo -- workloads by tenant_id (PK is workload_id alone)
SELECT create_distributed_table('workload.workloads', 'tenant_id');
\echo -- workloads by workload_id (the only key it has)
SELECT create_distributed_table('workload.workloads', 'workload_id');
\echo -- attempts by workload_id, co-located
SELECT create_distributed_table('workload.attempts', 'workload_id', colocate_with := 'workload.workloads');
\echo -- signing_keys as a reference table (non-empty, guarded)
SELECT create_reference_table('workload.signing_keys');
\echo -- tenant_members as a reference table (empty)
SELECT create_reference_table('workload.tenant_members');
\echo -- events by tenant_id (PK sequence alone)
SELECT create_distributed_table('workload.events', 'tenant_id');
\echo -- results by workload_id (UNIQUE result_id and UNIQUE workload_id)
SELECT create_distributed_table('workload.results', 'workload_id', colocate_with := 'workload.workloads');
SELECT logicalrelid, partmethod, colocationid FROM pg_dist_partition WHERE logicalrelid::text LIKE 'workload.%' ORDER BY 1;
