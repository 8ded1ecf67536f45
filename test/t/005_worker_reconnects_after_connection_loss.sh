#!/usr/bin/env bash
# A workload-worker whose connection is terminated, while a command runs or while it waits, reconnects, listens again and carries on; the workload it was running still completes once (SPEC 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

backend() {
	q "SELECT pid FROM pg_stat_activity WHERE application_name = 'workload-worker'
       AND datname = current_database() AND backend_type = 'client backend'"
}

a=$(q "SELECT wt.create('a', '{\"do\": \"sleep\", \"ms\": 2000}')")
start_worker w1 --lease 6 --poll 30 --verbose
if wait_file 60 "$T_DIR/$a.pid"; then ok "w1 runs A"; else not_ok "w1 runs A"; fi
old=$(backend)
is "$(q "SELECT pg_terminate_backend($old)")" t "w1's connection is terminated while the command runs"
check "A still completes" wait_for 60 "SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$a'"
is "$(q "SELECT count(*) FROM workload.results WHERE workload_id = '$a'")" 1 "with one result"
check "w1 has a new connection" wait_for 30 "SELECT count(*) = 1 FROM pg_stat_activity
    WHERE application_name = 'workload-worker' AND datname = current_database() AND pid <> $old"
check "w1 logged the reconnection" grep -q 'reconnecting' "$T_DIR/w1.log"

# now while it waits: with --poll 30, only a NOTIFY on the new connection wakes it in time
sleep 0.5
old=$(backend)
q "SELECT pg_terminate_backend($old)" >/dev/null
check "w1 reconnects while idle" wait_for 30 "SELECT count(*) = 1 FROM pg_stat_activity
    WHERE application_name = 'workload-worker' AND datname = current_database() AND pid <> $old"
sleep 1
b=$(q "SELECT wt.create('b', '{\"do\": \"ok\", \"ms\": 10}')")
check "B, created after the reconnection, is picked up" \
	wait_for 30 "SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$b'"
check "the new connection LISTENs: B's NOTIFY woke w1" \
	sh -c "sed -n '/connected/h; /connected/!H; \${x;p}' '$T_DIR/w1.log' | grep -q 'woken by NOTIFY'"
is "$(q "SELECT count(*) FROM workload.workloads WHERE claim_id IS NOT NULL")" 0 "no workload stays claimed"
check "w1 is still running" kill -0 "${WPID[w1]}"
done_testing
