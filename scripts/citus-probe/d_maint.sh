#!/usr/bin/env bash
# d_maint.sh: the guard (mode 'citus' + executor check) against COPY, run_command_on_*,
# and Citus's own maintenance: distributing non-empty tables, adding a node (reference
# table copies), shard moves in both transfer modes.
. "$(dirname "$0")/lib.sh"
show() { grep -E 'WARNING|ERROR|^n=|rows|^[a-z_]+ ' | sed 's/^psql:[^ ]* //' | sed 's/gpid=[0-9]*/gpid=N/g' | sort | uniq -c | cut -c1-220; }
echo "== a raw COPY into the distributed table, coordinator"
printf 'acme\tcopy_raw\t0\n' | c -qAt -v ON_ERROR_STOP=0 -c "COPY g.workloads FROM STDIN" 2>&1 | show
echo "== b run_command_on_workers / run_command_on_shards, raw UPDATE"
c -qAt -v ON_ERROR_STOP=0 -c "SELECT run_command_on_shards('g.workloads', \$\$UPDATE %s SET n = n + 1\$\$)" 2>&1 | head -2 | show
echo "== c distribute a non-empty table (rows written through the API before)"
c -qAt -v ON_ERROR_STOP=0 <<'SQL' 2>&1 | show
DROP TABLE IF EXISTS g.pre, g.preref;
CREATE TABLE g.pre (tenant_id text NOT NULL, x int NOT NULL, PRIMARY KEY (tenant_id, x));
CREATE TABLE g.preref (k text PRIMARY KEY);
CREATE TRIGGER pre_raw_write_trg BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON g.pre FOR EACH STATEMENT EXECUTE FUNCTION probe_guard('citus');
CREATE TRIGGER preref_raw_write_trg BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON g.preref FOR EACH STATEMENT EXECUTE FUNCTION probe_guard('citus');
SELECT probe_run('acme', $q$INSERT INTO g.pre SELECT $1, i FROM generate_series(1, 5) i$q$, 2);
SELECT probe_run('acme', $q$INSERT INTO g.preref VALUES ('k1'), ('k2')$q$, 2);
SELECT 'distributed ' || create_distributed_table('g.pre', 'tenant_id', colocate_with := 'm.workloads');
SELECT 'reference ' || create_reference_table('g.preref');
SELECT 'rows pre=' || (SELECT count(*) FROM g.pre) || ' preref=' || (SELECT count(*) FROM g.preref);
SQL
