#!/usr/bin/env bash
# a_own_writes.sh: one C call inserts, reads back, updates and reads back through a join
# (custom plan for the join); on the coordinator and delegated.
. "$(dirname "$0")/lib.sh"
for fn in probe_run_many probe_deleg_many; do
  c -qAt -c "SELECT '$fn', $fn('acme', ARRAY[
    \$q\$INSERT INTO m.attempts (tenant_id, workload_id, attempt_number, claim_id) VALUES (\$1, 'acme_1999', \$2::int, 'own')\$q\$,
    \$q\$SELECT count(*) FROM m.attempts WHERE tenant_id = \$1 AND workload_id = 'acme_1999' AND attempt_number = \$2::int\$q\$,
    \$q\$UPDATE m.attempts SET claim_id = 'own2' WHERE tenant_id = \$1 AND workload_id = 'acme_1999' AND attempt_number = \$2::int RETURNING claim_id\$q\$,
    \$q\$SELECT a.claim_id FROM m.attempts a JOIN m.workloads w USING (tenant_id, workload_id) WHERE a.tenant_id = \$1 AND w.tenant_id = \$1 AND a.workload_id = 'acme_1999' AND a.attempt_number = \$2::int\$q\$], 2,
    ARRAY[(900000 + (random() * 99999)::int)::text])"
done
