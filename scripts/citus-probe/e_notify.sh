#!/usr/bin/env bash
# e_notify.sh: who receives a NOTIFY sent by a delegated function (acme on one worker,
# hooli on the other) or by the coordinator; what happens to a transaction that NOTIFYs
# and writes on two nodes; and a deferred NOTIFY (wlprobe: sent at pre-commit, dropped
# when the transaction is prepared) in the same cases.
. "$(dirname "$0")/lib.sh"
listen() { # node seconds -> prints notifications received by a listener on that node
  wl_citus_psql "$1" -qAt -c "LISTEN ch" -c "SELECT pg_sleep($2)" 2>&1 | grep -o 'Asynchronous notification "ch" with payload "[^"]*"' | sed "s/^/  $1 got: /"
}
for n in coord w1 w2; do listen $n 9 > /tmp/listen.$n & done
sleep 1.5
c -qAt -v ON_ERROR_STOP=0 <<'SQL' 2>&1 | sed 's/^/  /'
\echo a) delegated function (acme) sends pg_notify
SELECT probe_deleg('acme', $q$SELECT pg_notify('ch', 'from delegated acme call')$q$, 2);
\echo b) function on the coordinator sends pg_notify
SELECT probe_run('acme', $q$SELECT pg_notify('ch', 'from coordinator call')$q$, 2);
\echo c) coordinator NOTIFY + writes on two workers in one transaction
BEGIN;
SELECT pg_notify('ch', 'coordinator notify in 2-node txn');
UPDATE m.workloads SET priority = priority WHERE tenant_id = 'acme' AND workload_id = 'acme_1';
UPDATE m.workloads SET priority = priority WHERE tenant_id = 'hooli' AND workload_id = 'hooli_1';
COMMIT;
\echo d) two force-delegated calls (acme, hooli: two workers) in one transaction, each NOTIFYing
BEGIN;
SELECT probe_force('acme', $q$SELECT pg_notify('ch', 'force acme in 2-node txn')$q$, 2);
SELECT probe_force('hooli', $q$SELECT pg_notify('ch', 'force hooli in 2-node txn')$q$, 2);
COMMIT;
\echo e) one force-delegated call NOTIFYing, inside a transaction touching only the acme worker
BEGIN;
SELECT probe_force('acme', $q$SELECT pg_notify('ch', 'force acme, 1-node txn')$q$, 2);
UPDATE m.workloads SET priority = priority WHERE tenant_id = 'acme' AND workload_id = 'acme_1';
COMMIT;
\echo f) force-delegated NOTIFY on the acme worker, then a write on the hooli worker in the same transaction
BEGIN;
SELECT probe_force('acme', $q$SELECT pg_notify('ch', 'force acme then write w2')$q$, 2);
UPDATE m.workloads SET priority = priority WHERE tenant_id = 'hooli' AND workload_id = 'hooli_1';
COMMIT;
\echo g) deferred NOTIFY (sent at pre-commit, dropped at prepare): delegated call, autocommit
SELECT probe_deleg('acme', $q$SELECT probe_notify_deferred('ch', 'deferred, delegated acme call')$q$, 2);
\echo h) deferred: one force-delegated call, transaction touching only the acme worker
BEGIN;
SELECT probe_force('acme', $q$SELECT probe_notify_deferred('ch', 'deferred, force acme, 1-node txn')$q$, 2);
COMMIT;
\echo i) deferred: two force-delegated calls on two workers in one transaction
BEGIN;
SELECT probe_force('acme', $q$SELECT probe_notify_deferred('ch', 'deferred, force acme in 2-node txn')$q$, 2);
SELECT probe_force('hooli', $q$SELECT probe_notify_deferred('ch', 'deferred, force hooli in 2-node txn')$q$, 2);
COMMIT;
\echo i) the COMMIT failed: :ERROR
\echo k) deferred, routed from C on the coordinator (SPI, custom plan, SELECT * FROM force-delegated), autocommit
SELECT probe_run('acme', $r$SELECT * FROM probe_force($1, 'SELECT probe_notify_deferred(''ch'', ''deferred, routed from C'')', 2)$r$, 2);
\echo j) deferred on the coordinator, transaction writing on both workers
BEGIN;
SELECT probe_notify_deferred('ch', 'deferred, coordinator in 2-node txn');
UPDATE m.workloads SET priority = priority WHERE tenant_id = 'acme' AND workload_id = 'acme_1';
UPDATE m.workloads SET priority = priority WHERE tenant_id = 'hooli' AND workload_id = 'hooli_1';
COMMIT;
SQL
wait
echo "acme is on $(node_of acme), hooli on $(node_of hooli)"
cat /tmp/listen.coord /tmp/listen.w1 /tmp/listen.w2
