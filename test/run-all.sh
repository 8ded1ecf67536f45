#!/usr/bin/env bash
# test/run-all.sh [--quick]: the test command, on a fresh Debian 12 machine (as
# root).  Installs what is missing, builds, installs, starts a throwaway
# cluster, runs the suites of one tier, stops the cluster, prints
# "N passed, M failed, K skipped" and exits non-zero if anything failed.
#
#   (no option)  the full tier, the README's test command and CI's: the regress
#                suite and the isolation specs (make installcheck), every
#                end-to-end script of test/t, the regress suite and the
#                isolation specs again with workload.statement_path = on,
#                the reliability scenarios, the docs check and the Debian
#                package
#   --quick      the quick tier, for an edit loop: make installcheck, the docs
#                check and the fastest end-to-end scripts (QUICK below)
#
# A test that cannot run on this machine (the Citus tests without Citus)
# prints "ok N # skip <reason>", counted as skipped, never as passed.
# WL_TEST_SKIP="name..." reports those suites (package, reliability, 025_...)
# as skipped instead of running them.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
TIER=full
case "${1:-}" in
--quick) TIER=quick ;;
"") ;;
*) echo "usage: test/run-all.sh [--quick]" >&2; exit 2 ;;
esac
# the end-to-end scripts of the quick tier: a few seconds each
QUICK="000_source_layers_point_one_way 021_meta_json_follows_pgxn_spec 013_hostile_tenants_get_nothing"

. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
wl_install_deps
wl_build
# durability is what the crash and failover scenarios test, on clusters of
# their own; this one serves the suites, which need none of it.  The library
# is preloaded, as a server runs it (the claims share what became claimable
# through shared memory); its background workers tick no database here: the
# suites tick when they mean to, and test/t scripts that test the workers
# start clusters of their own.
wl_cluster_start "fsync = off" "synchronous_commit = off" "full_page_writes = off" \
	"shared_preload_libraries = 'workload'" "workload.database = 'wl_no_tick_here'"

cd "$WL_ROOT"
rm -rf results output_iso regression.diffs regression.out
status=0
passed=0
failed=0
skipped=0
t0=$SECONDS

# run_suite NAME COMMAND...: runs it, shows its result lines, and counts them
run_suite() {
	local name=$1
	shift
	local log="$WL_TMP/$name.log" rc=0 ok bad skip
	echo "== $name"
	if [[ " ${WL_TEST_SKIP:-} " == *" $name "* ]]; then
		echo "ok 1 # skip WL_TEST_SKIP names it"
		skipped=$((skipped + 1))
		return
	fi
	"$@" >"$log" 2>&1 || rc=$?
	grep -E '^(ok|not ok|Bail out!|test |     [a-z_]+ +\.\.\.|# )' "$log" || cat "$log"
	skip=$(grep -ciE '^ok [0-9]+ # skip' "$log" || true)
	ok=$(grep -cE '^ok |\.\.\. ok' "$log" || true)
	ok=$((ok - skip))
	bad=$(grep -cE '^not ok |\.\.\. FAILED' "$log" || true)
	if [ "$rc" != 0 ] || [ "$bad" -gt 0 ]; then
		status=1
		# a suite that died without reporting a failed test still counts as one
		[ "$bad" -gt 0 ] || { bad=1; tail -n 5 "$log"; }
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	skipped=$((skipped + skip))
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

# The documentation must match the installed extension, run as written, and
# speak the present (test/docs_check.sh says how).
run_suite docs bash "$WL_ROOT/test/docs_check.sh"

# Tests that need a real server of their own or real processes (the
# preloaded background worker, the reference worker end to end, Citus):
# bash scripts printing TAP; each makes its own database or cluster.
for t in "$WL_ROOT"/test/t/[0-9][0-9][0-9]_*.sh; do
	name=$(basename "$t" .sh)
	if [ "$TIER" = quick ] && [[ " $QUICK " != *" $name "* ]]; then
		continue
	fi
	run_suite "$name" bash "$t"
done

if [ "$TIER" = full ]; then
	# The regress suite and the isolation specs again, every call through
	# its statements (workload.statement_path): the direct paths and the
	# statements answer alike.
	run_suite statement-path bash "$WL_ROOT/test/statement_path.sh"

	# The client libraries (clients/python, clients/node) end to end against
	# this cluster: each installs what it needs, makes its own database,
	# prints TAP.
	for t in python node; do
		run_suite "clients-$t" bash "$WL_ROOT/test/clients/$t.sh"
	done

	# Faults: crash recovery, 32 concurrent workers, hostile input, failover to
	# a synchronous standby, upgrade paths (short forms; --long in
	# test/reliability/run.sh for the long ones).  Each starts its own clusters.
	export RL_NO_BUILD=1
	run_suite reliability bash "$WL_ROOT/test/reliability/run.sh"

	# The Debian package: built with dpkg-buildpackage, installed into the
	# system PostgreSQL 15, its regress suite run against the installed files,
	# purged.  Last, since it installs and removes files in the system tree (it
	# puts back whatever an earlier `make install` had left there).
	run_suite package bash "$WL_ROOT/test/packaging/deb_builds_installs_and_passes_regress.sh"
fi

echo "== $TIER tier: $((SECONDS - t0)) s after the build"
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
