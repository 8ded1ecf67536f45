#!/usr/bin/env bash
# scripts/citus-drop-loop.sh: how often an operator's DROP EXTENSION workload
# CASCADE through a Citus coordinator is cancelled as a distributed deadlock
# while every node's tick runs (200 ms).  Starts a coordinator and two
# workers (test/t/citus_lib.sh), then N times (default 20) drops the
# extension, makes it again and distributes it; prints each failure and the
# count.  Not a test: test/t/026 asserts its drops go through; this measures
# the rate (as root).
#   N=80 scripts/citus-drop-loop.sh
. "$(dirname "$0")/../test/t/citus_lib.sh"
workload_cluster
trap 'wl_citus_stop' EXIT
fail=0
for i in $(seq 1 "${N:-20}"); do
	on coord -v ON_ERROR_STOP=1 -c 'DROP EXTENSION workload CASCADE' -c 'CREATE EXTENSION workload' \
		-c 'SELECT workload_citus_distribute()' >"$T/drop.log" 2>&1 || {
		fail=$((fail + 1))
		echo "try $i: $(grep ERROR "$T/drop.log" | head -n 1)"
	}
done
echo "failed $fail of ${N:-20}"
