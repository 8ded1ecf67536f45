#!/usr/bin/env bash
# The demo on a Citus cluster (./demo/run.sh --citus: a coordinator and two
# workers, tenant acme on one of them) runs to its end and shows what it
# shows on one node: the leases of the worker it kills recovered by the
# tick, a cancelled frame's dependents cancelled with it (read through the
# views, for one tenant), the late completions refused by the fence, one
# result for each workload that succeeded, every workload in a final state.
# Run as root; prints TAP.  Skipped, with the reason, where there is no Citus.
. "$(dirname "$0")/citus_lib.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
"$WL_ROOT/demo/run.sh" --citus >"$out" 2>&1 || rc=$?
check "the demo on Citus runs to its end" eq "$rc $(grep -c 'since the workers started; stopping the cluster' "$out")" "0 1"
held=$(grep -cE '^   workload_[0-9a-f]+ +[a-z]+ #[0-9]+ +(CLAIMED|RUNNING|CHECKPOINTED), fencing token 1$' "$out")
recovered_all() { [ "$held" -gt 0 ] && eq "$(grep -cE 'attempt 1 worker-3 WORKER_LOST -> attempt 2 worker-[124] ' "$out")" "$held"; }
check "... the tick recovered each of the killed worker's $held claims, and each was claimed again" recovered_all
check "... the cancelled frame's two dependents were cancelled with it (dependency_unreachable)" \
	eq "$(grep -cE '^   publish #1[34]: CANCELLED \(dependency_unreachable\)$' "$out")" 2
check "... the killed worker's late completions were refused by the fence" \
	test "$(grep -c 'WL006 WORKLOAD_CLAIM_INVALID\|WL007' "$out")" -ge 1
check "... each workload that succeeded has exactly one result, and no claim is left" \
	grep -q 'exactly one result: yes; claims still held: 0' "$out"
check "... every workload ended in a final state (none other)" \
	grep -qE '^ +total +\| +[0-9]+ \| +[0-9]+ \| +[0-9]+ \| +0 \|' "$out"
if [ "$rc" != 0 ]; then tail -n 15 "$out" | sed 's/^/#   /'; fi
done_testing
