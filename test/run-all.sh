#!/usr/bin/env bash
# test/run-all.sh: the whole test suite on a fresh Debian 12 machine (as root).
# Installs what is missing, builds, installs, starts a throwaway cluster, runs
# `make installcheck` (the pg_regress suite and the isolation specs) and the
# TAP tests, stops the cluster, and exits non-zero if anything failed.
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
	local rc=0
	"$@" >"$log" 2>&1 || rc=$?
	grep -E '^(ok|not ok|test |     [a-z_]+ +\.\.\.|# )' "$log" || cat "$log"
	local ok bad
	ok=$(grep -cE '^ok |\.\.\. ok' "$log" || true)
	bad=$(grep -cE '^not ok |\.\.\. FAILED' "$log" || true)
	if [ "$rc" != 0 ] || [ "$bad" -gt 0 ]; then
		status=1
		# a suite that died without reporting a failed test still counts as one
		[ "$bad" -gt 0 ] || { bad=1; tail -n 5 "$log"; }
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
}

# The standard PGXS target runs the regress suite and the isolation specs,
# as PGXS users, pgxn-tools and Debian's pg_buildext run them.
installcheck_status=$status
run_suite installcheck make -s -k installcheck
if [ "$status" != "$installcheck_status" ]; then
	# both suites write ./regression.diffs: run each alone again to show its differences
	for part in regress isolation; do
		if ! make -s "installcheck-$part" >"$WL_TMP/again-$part.log" 2>&1 && [ -s regression.diffs ]; then
			echo "== regression.diffs ($part)"; head -n 200 regression.diffs
		fi
	done
fi

# Tests that need a real server of their own or real processes (the
# preloaded background worker, the reference worker end to end): bash
# scripts printing TAP; each makes its own database or cluster.
for t in "$WL_ROOT"/test/t/[0-9][0-9][0-9]_*.sh; do
	run_suite "$(basename "$t" .sh)" bash "$t"
done

# The client libraries (clients/python, clients/node) end to end against this
# cluster: each installs what it needs, makes its own database, prints TAP.
for t in python node; do
	run_suite "clients-$t" bash "$WL_ROOT/test/clients/$t.sh"
done

# Faults: crash recovery, 32 concurrent workers, hostile input, failover to a
# synchronous standby, upgrade paths (short forms; --long in
# test/reliability/run.sh for the long ones).  Each starts its own clusters.
export RL_NO_BUILD=1
run_suite reliability bash "$WL_ROOT/test/reliability/run.sh"

# The documentation must match the installed extension and run as written
# (test/docs_check.sh says how).
run_suite docs bash "$WL_ROOT/test/docs_check.sh"

# The Debian package: built with dpkg-buildpackage, installed into the system
# PostgreSQL 15, its regress suite run against the installed files, purged.
# Last, since it installs and removes files in the system tree (it puts back
# whatever an earlier `make install` had left there).
run_suite package bash "$WL_ROOT/test/packaging/deb_builds_installs_and_passes_regress.sh"

echo "$passed passed, $failed failed"
exit $status
