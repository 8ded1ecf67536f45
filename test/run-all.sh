#!/usr/bin/env bash
# test/run-all.sh: the whole test suite on a fresh Debian 12 machine (as root).
# Installs what is missing, builds, installs, starts a throwaway cluster, runs
# the pg_regress suite, the isolation specs and the TAP tests, stops the
# cluster, and exits non-zero if anything failed.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
wl_install_deps
wl_build
wl_cluster_start

cd "$WL_ROOT"
rm -rf results output_iso regression.diffs regression.out
status=0
passed=0
failed=0

run_suite() {
	local name=$1; shift
	local log="$WL_TMP/$name.log"
	echo "== $name"
	if "$@" >"$log" 2>&1; then :; else status=1; fi
	grep -E '^(ok|not ok|test |     [a-z_]+ +\.\.\.|# )' "$log" || cat "$log"
	passed=$((passed + $(grep -cE '^ok |\.\.\. ok' "$log" || true)))
	failed=$((failed + $(grep -cE '^not ok |\.\.\. FAILED' "$log" || true)))
}

run_suite regress make -s installcheck-regress
run_suite isolation make -s installcheck-isolation

for f in regression.diffs output_iso/regression.diffs; do
	if [ -s "$f" ]; then echo "== $f"; head -n 200 "$f"; fi
done
echo "$passed passed, $failed failed"
exit $status
