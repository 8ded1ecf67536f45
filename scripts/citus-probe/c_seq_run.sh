#!/usr/bin/env bash
# c_seq_run.sh: insert events for acme (w1) by each path and show the sequence values.
. "$(dirname "$0")/lib.sh"
NV="nextval('m.ev_seq'), "
run() { # how fn sql
  for t in ev_ident ev_serial ev_nextval; do
    local sql=${3//TBL/m.$t}
    if [ $t = ev_nextval ]; then sql=${sql//SEQCOL/sequence, }; sql=${sql//SEQVAL/$NV}; else sql=${sql//SEQCOL/}; sql=${sql//SEQVAL/}; fi
    c -qAt -v ON_ERROR_STOP=0 -c "SELECT $2('acme', \$q\$$sql\$q\$, 2, ARRAY['$1'])" 2>&1 | head -2 | sed "s/^/$t $1: /" | cut -c1-200
  done
}
run coord_values probe_run "INSERT INTO TBL (tenant_id, SEQCOL how) VALUES (\$1, SEQVAL \$2)"
run deleg_values probe_deleg "INSERT INTO TBL (tenant_id, SEQCOL how) VALUES (\$1, SEQVAL \$2)"
run coord_insel_push probe_run "INSERT INTO TBL (tenant_id, SEQCOL how) SELECT w.tenant_id, SEQVAL \$2 FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id IN ('acme_1', 'acme_2')"
run deleg_insel_push probe_deleg "INSERT INTO TBL (tenant_id, SEQCOL how) SELECT w.tenant_id, SEQVAL \$2 FROM m.workloads w WHERE w.tenant_id = \$1 AND w.workload_id IN ('acme_1', 'acme_2')"
run coord_insel_unnest probe_run "INSERT INTO TBL (tenant_id, SEQCOL how) SELECT \$1, SEQVAL \$2 FROM generate_series(1, 2)"
run deleg_insel_unnest probe_deleg "INSERT INTO TBL (tenant_id, SEQCOL how) SELECT \$1, SEQVAL \$2 FROM generate_series(1, 2)"
c -qAt -c "SELECT 'multi-shard pushdown', count(*) FROM (SELECT 1) x" >/dev/null
for t in ev_ident ev_serial ev_nextval; do
  c -qAt -v ON_ERROR_STOP=0 -c "INSERT INTO m.$t (tenant_id, $( [ $t = ev_nextval ] && echo 'sequence, ')how) SELECT w.tenant_id, $( [ $t = ev_nextval ] && echo "nextval('m.ev_seq'), ")'coord_insel_allshards' FROM m.workloads w WHERE w.workload_id IN ('acme_3', 'hooli_3')" 2>&1 | head -2 | sed "s/^/$t multi: /"
done
for t in ev_ident ev_serial ev_nextval; do
  echo "== $t"; c -qAt -c "SELECT tenant_id, how, sequence, sequence >> 48 AS high16 FROM m.$t ORDER BY tenant_id, sequence"
done
