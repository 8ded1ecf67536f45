#!/usr/bin/env bash
# With the library in shared_preload_libraries, the sessions of a server share
# their points in a queue: a claim starts, in each priority it has a point in,
# after the furthest workload any session claimed there, not only after its
# own last one, so it does not step over what the other sessions claimed since
# (at 64 claiming sessions a few hundred rows a claim); a workload that became
# claimable behind that front (a retry) is told to every session, and the next
# claim takes it first, in the claim order, with or without a scan from the
# start (SPEC section 5.1); the front of one tenant or database moves no
# other's (docs/reference.md, workload_claim; claim_resume.c, store_ready.c).
# Run as root after "make install"; prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root

. "$WL_ROOT/test/tap.sh"
cd "$WL_ROOT"	# helpers.sql is read relative to here
wl_cluster_start "shared_preload_libraries = 'workload'" "workload.tick_interval = '10s'"

setup_db() {
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $1" >/dev/null &&
	psql -X -q -v ON_ERROR_STOP=1 -d "$1" -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION workload CASCADE" -f test/include/helpers.sql >/dev/null
}
setup_db fronts
setup_db fronts_other
export PGDATABASE=fronts
retry='{"retry_policy": {"initial_delay_ms": 1, "backoff": "fixed", "max_attempts": 5}}'
# mk TENANT KEY...: workloads of TENANT (application billing), in this order
mk() {
	local tenant=$1 k; shift
	for k in "$@"; do
		psql -X -qAt -v ON_ERROR_STOP=1 -c "SELECT t.create('$k', '$retry', '$tenant')" >/dev/null
	done
}
mk acme a1 a2 a3 a4 a5 a6

# Session 1 runs the script below; the lines starting with \! run another
# session's claims (a psql of their own) while session 1 waits.  claim_full_scan_every
# = 2 makes session 1's third claim a scan from the start.
claim() {	# claim WORKER TENANT N: the keys claimed, as one line
	echo "SELECT string_agg(input->>'n', ',' ORDER BY input->>'n') FROM workload_claim('$1', '{}', '$2', 'billing', max_items => $3, start => true)"
}
fail_key() {	# fail_key WORKER KEY: the running workload KEY of WORKER fails (and is retried)
	echo "SELECT workload_fail(w.workload_id, w.claim_id, '$1', w.fencing_token, 'worker_failure', 'crashed')" \
		"FROM workload.workloads w JOIN workload.specs s USING (tenant_id, workload_id) WHERE s.input->>'n' = '$2'"
}
out=$(psql -X -qAt -v ON_ERROR_STOP=1 2>&1 <<EOF
SET workload.claim_full_scan_every = 2;
SET workload.claim_full_scan_interval = 0;
$(claim s1 acme 1);
\! psql -X -qAt -v ON_ERROR_STOP=1 -c "$(claim s2 acme 2)" -c "$(fail_key s2 a2)"
$(claim s1 acme 1);
$(claim s1 acme 1);
EOF
)
is "$(echo "$out" | tr '\n' ' ')" "a1 a2,a3 READY a2 a4 " \
	"session 1's second claim takes a2, retried behind the front, first; its next starts after a3, the furthest another session claimed"

# the front of another tenant or another database does not move acme's: their
# claims are of workloads made after b1..b3, before c1
mk acme b1 b2 b3
mk other o1 o2 o3 o4
psql -X -qAt -d fronts_other -c "SELECT count(t.create('d' || g, '$retry')) FROM generate_series(1, 4) g" >/dev/null
mk acme c1 c2
out=$(psql -X -qAt -v ON_ERROR_STOP=1 2>&1 <<EOF
SET workload.claim_full_scan_every = 1000;
$(claim s1 acme 2);
\! psql -X -qAt -v ON_ERROR_STOP=1 -c "$(claim s3 other 3)" && psql -X -qAt -v ON_ERROR_STOP=1 -d fronts_other -c "$(claim s4 acme 3)"
$(claim s1 acme 1);
$(claim s1 acme 1);
EOF
)
is "$(echo "$out" | tr '\n' ' ')" "a5,a6 o1,o2,o3 d1,d2,d3 b1 b2 " \
	"claims of another tenant and of the same tenant in another database leave acme's front where it was"

# A scan from the start that another session made in the queue less than
# workload.claim_full_scan_interval ago stands for the one a claim is due to
# make by the count; the retry behind the front is taken all the same, first,
# since what is told does not wait for a scan from the start.
mk zeta e1 e2 e3 e4 e5
out=$(psql -X -qAt -v ON_ERROR_STOP=1 2>&1 <<EOF
SET workload.claim_full_scan_every = 2;
SET workload.claim_full_scan_interval = '1h';
$(claim s1 zeta 1);
\! psql -X -qAt -v ON_ERROR_STOP=1 -c "$(claim s2 zeta 2)" -c "$(fail_key s2 e2)"
$(claim s1 zeta 1);
$(claim s1 zeta 1);
SET workload.claim_full_scan_interval = 0;
$(claim s1 zeta 1);
EOF
)
is "$(echo "$out" | tr '\n' ' ')" "e1 e2,e3 READY e2 e4 e5 " \
	"while scans from the start wait for the interval, the retried e2 is still taken first, then e4 and e5 from the point"

check "the log shows no error" test "$(grep -c 'ERROR' "$WL_TMP/server.log")" = 0

done_testing || { note "server log follows"; tail -n 40 "$WL_TMP/server.log" | sed 's/^/# /'; exit 1; }
