#!/usr/bin/env bash
# h_workload11.sh: the real workload 1.1 on the cluster, in database wl: CREATE EXTENSION
# on the coordinator (propagated to the workers: one signing key per node), what
# distributing its tables as they are does, one key set through a reference table, a
# grant signed on the coordinator verified on every node, GRANT/REVOKE propagation, a
# reference table joined with pg_roles (the membership statement), and what an upgrade
# script that writes a distributed table does (wlappname, a throwaway extension).
. "$(dirname "$0")/lib.sh"
W=$(echo $WL_CITUS_NODES | tr ' ' '\n' | grep -v coord)
for n in $WL_CITUS_NODES; do
  wl_citus_psql $n -d postgres -qc "CREATE DATABASE wl" >/dev/null 2>&1
  wl_citus_psql $n -d wl -qc "CREATE EXTENSION citus" >/dev/null
done
wl_citus_psql coord -d wl -qAt -c "SELECT citus_set_coordinator_host('localhost', $WL_CITUS_COORD_PORT)" >/dev/null
for n in $W; do wl_citus_psql coord -d wl -qAt -c "SELECT citus_add_node('localhost', $(wl_citus_port $n))" >/dev/null; done
h() { wl_citus_psql "$@" -d wl; }
echo "== CREATE EXTENSION workload CASCADE on the coordinator"
h coord -qc "CREATE EXTENSION workload CASCADE" 2>&1 | grep -v NOTICE
for n in $WL_CITUS_NODES; do echo "$n: $(h $n -qAt -c "SELECT extversion FROM pg_extension WHERE extname = 'workload'") key $(h $n -qAt -c "SELECT string_agg(key_id, ',') FROM workload.signing_keys") workload_state $(h $n -qAt -c "SELECT count(*) FROM pg_type WHERE typname = 'workload_state'")"; done
echo "== who runs a propagated install script (wlappname records it)"
h coord -qc "CREATE EXTENSION wlappname"
for n in $WL_CITUS_NODES; do h $n -qAt -c "SELECT '$n', port, app, is_coordinator FROM wlappname_ran"; done
echo "== distributing 1.1's tables as they are"
h coord -X -v ON_ERROR_STOP=0 -f "$P/h_distribute_11.sql" 2>&1 | grep -vE '^$|^-+$|\(1 row\)|create_|^ *$' | sed 's/^psql:[^ ]* //' | cut -c1-200
echo "== one key set: signing_keys as a reference table (guard trigger disabled on every node for the copy)"
for n in $WL_CITUS_NODES; do h $n -qc "SET citus.enable_ddl_propagation = off; ALTER TABLE workload.signing_keys DISABLE TRIGGER signing_keys_raw_write_trg"; done
h coord -qAt -c "SELECT create_reference_table('workload.signing_keys')" 2>&1 | grep -v '^$' | tail -n 1
for n in $WL_CITUS_NODES; do h $n -qc "SET citus.enable_ddl_propagation = off; ALTER TABLE workload.signing_keys ENABLE ALWAYS TRIGGER signing_keys_raw_write_trg"; done
for n in $WL_CITUS_NODES; do echo "$n sees key(s): $(h $n -qAt -c "SELECT string_agg(key_id, ',') FROM workload.signing_keys")"; done
G=$(h coord -qAt -c "SELECT workload_sign_grant('{\"contract_version\":1,\"id\":\"g1\",\"issuer\":{\"kind\":\"human\",\"id\":\"op\"},\"subject\":{\"kind\":\"service\",\"id\":\"svc\"},\"tenant_id\":\"acme\",\"application_id\":\"app\",\"capabilities\":[\"*\"],\"resources\":[],\"constraints\":{\"subject_attributes\":{}},\"issued_at\":\"2026-01-01T00:00:00Z\",\"expires_at\":\"2030-01-01T00:00:00Z\",\"parent_grant\":null,\"revision\":1,\"status\":\"active\"}'::jsonb)")
for n in $WL_CITUS_NODES; do echo "grant signed on coord verifies on $n: $(h $n -qAt -v ON_ERROR_STOP=0 -c "SELECT workload_verify_grant('$G'::jsonb)" 2>&1 | head -n 1)"; done
echo "== GRANT/REVOKE on a reference table, and a new role"
h coord -qc "CREATE ROLE probe_reader" -c "GRANT SELECT ON workload.tenant_members TO probe_reader" -c "REVOKE SELECT ON workload.tenant_members FROM workload_admin"
for n in $WL_CITUS_NODES; do
  h $n -qAt -c "SET citus.show_shards_for_app_name_prefixes = '*'" -c "SELECT '$n role ' || (SELECT count(*) FROM pg_roles WHERE rolname = 'probe_reader') || ': ' || string_agg(c.relname || ' ' || c.relacl::text, '; ' ORDER BY c.relname) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'workload' AND c.relname LIKE 'tenant_members%' AND c.relkind = 'r'"
done
echo "== the membership statement (a reference table joined with pg_roles), generic and custom"
for n in coord w1; do
  h $n -qAt -v ON_ERROR_STOP=0 <<'SQL' 2>&1 | tr '\n' ' '; echo "($n)"
PREPARE mem(oid, text, text) AS SELECT 1 FROM workload.tenant_members m JOIN pg_catalog.pg_roles r ON r.rolname = m.role WHERE m.tenant_id = $2 AND m.application_id = $3 AND pg_has_role($1, r.oid, 'MEMBER') LIMIT 1;
SET plan_cache_mode = force_generic_plan; EXECUTE mem(10, 'acme', 'app'); SELECT 'generic ok';
SET plan_cache_mode = force_custom_plan; EXECUTE mem(10, 'acme', 'app'); SELECT 'custom ok';
SQL
done
echo "== an upgrade script that writes a distributed table (wlappname 1.1 -> 1.2: UPDATE probe_counter SET n = n + 1)"
h coord -qAt -c "CREATE TABLE public.probe_counter (k text PRIMARY KEY, n int)" -c "SELECT create_distributed_table('public.probe_counter', 'k')" -c "INSERT INTO public.probe_counter VALUES ('a', 0)" >/dev/null
h coord -qc "ALTER EXTENSION wlappname UPDATE TO '1.1'"
for n in $WL_CITUS_NODES; do h $n -qAt -c "SELECT '$n ran the 1.1 script: ' || string_agg(app, ', ') FROM wlappname_ran WHERE app LIKE 'upgrade%'"; done
h coord -qAt -v ON_ERROR_STOP=0 -c "SET citus.log_remote_commands = on" -c "ALTER EXTENSION wlappname UPDATE TO '1.2'" 2>&1 | grep -vE '^DETAIL|^HINT' | cut -c1-160
for n in $WL_CITUS_NODES; do echo "$n: wlappname $(h $n -qAt -c "SELECT extversion FROM pg_extension WHERE extname = 'wlappname'")"; done
echo "probe_counter.n after the failed upgrade: $(h coord -qAt -c "SELECT n FROM public.probe_counter")"
