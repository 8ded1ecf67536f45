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
	if [ "$rc" != 0 ]; then
		status=1
		# a suite that died without reporting a failed test still counts as one
		[ "$bad" -gt 0 ] || { bad=1; tail -n 5 "$log"; }
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
}

# The standard PGXS target runs the regress suite and the isolation specs,
# as PGXS users, pgxn-tools and Debian's pg_buildext run them.
run_suite installcheck make -s installcheck
for f in regression.diffs output_iso/regression.diffs; do
	if [ -s "$f" ]; then echo "== $f"; head -n 200 "$f"; fi
done

# Tests that need a real server of their own or real processes (the
# preloaded background worker, the reference worker end to end): bash
# scripts printing TAP; each makes its own database or cluster.
for t in "$WL_ROOT"/test/t/[0-9][0-9][0-9]_*.sh; do
	run_suite "$(basename "$t" .sh)" bash "$t"
done

# Faults: crash recovery, 32 concurrent workers, hostile input, failover to a
# synchronous standby, upgrade paths (short forms; --long in
# test/reliability/run.sh for the long ones).  Each starts its own clusters.
export RL_NO_BUILD=1
run_suite reliability bash "$WL_ROOT/test/reliability/run.sh"

# The README's error table and function reference must match the installed extension.
docs_check() {
	psql -X -qAt -d postgres -c "CREATE DATABASE wl_docs_check" >/dev/null
	psql -X -qAt -d wl_docs_check -c "CREATE EXTENSION workload CASCADE" >/dev/null 2>&1
	psql -X -qAt -d wl_docs_check -c "SELECT code || ' ' || sqlstate FROM workload_error_codes()" \
		| LC_ALL=C sort >"$WL_TMP/codes.db"
	grep -oE '^\| `[A-Z_]+` \| `WL[0-9]{3}`' "$WL_ROOT/README.md" \
		| sed -E 's/^\| `([A-Z_]+)` \| `(WL[0-9]+)`/\1 \2/' | LC_ALL=C sort >"$WL_TMP/codes.readme"
	if diff "$WL_TMP/codes.db" "$WL_TMP/codes.readme"; then
		echo "ok - README error table matches workload_error_codes()"
	else
		echo "not ok - README error table differs from workload_error_codes()"
	fi
	local missing=""
	for f in $(psql -X -qAt -d wl_docs_check -c "SELECT DISTINCT p.proname FROM pg_proc p
			JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
			JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'workload'
			WHERE p.pronamespace <> 'workload'::regnamespace ORDER BY 1"); do
		grep -q "\`$f(" "$WL_ROOT/README.md" || missing="$missing $f"
	done
	if [ -z "$missing" ]; then
		echo "ok - README documents every API function"
	else
		echo "not ok - README does not document:$missing"
	fi
	# the README's quick start runs as written
	psql -X -qAt -d postgres -c "CREATE DATABASE wl_quick_start" >/dev/null
	awk '/^## Quick start/{f=1} f&&/^```sql/{g=1;next} g&&/^```/{exit} g' "$WL_ROOT/README.md" >"$WL_TMP/quick.sql"
	if psql -X -q -v ON_ERROR_STOP=1 -d wl_quick_start -f "$WL_TMP/quick.sql" >"$WL_TMP/quick.out" 2>&1 \
		&& grep -q '"outcome": "succeeded"' "$WL_TMP/quick.out"; then
		echo "ok - README quick start runs and completes its workload"
	else
		echo "not ok - README quick start fails:"; cat "$WL_TMP/quick.out"
	fi
	# the examples run after it; only the two refusals they announce may fail
	awk '/^### Examples/{f=1} f&&/^```sql/{g=1;next} g&&/^```/{exit} g' "$WL_ROOT/README.md" >"$WL_TMP/examples.sql"
	cat "$WL_TMP/quick.sql" "$WL_TMP/examples.sql" >"$WL_TMP/both.sql"
	psql -X -q -d wl_quick_start -c "DROP EXTENSION workload CASCADE" >/dev/null 2>&1
	psql -X -q -d wl_quick_start -f "$WL_TMP/both.sql" >"$WL_TMP/examples.out" 2>&1 || true
	local errors
	errors=$(grep -c 'ERROR:' "$WL_TMP/examples.out" || true)
	if [ "$errors" = 3 ] && grep -q 'WORKLOAD_TRANSITION_DENIED' "$WL_TMP/examples.out"; then
		echo "ok - README examples run (with the 3 refusals they announce)"
	else
		echo "not ok - README examples: $errors errors"; grep -B2 -A2 'ERROR:' "$WL_TMP/examples.out"
	fi
	psql -X -qAt -d postgres -c "DROP DATABASE wl_quick_start" -c "DROP DATABASE wl_docs_check" >/dev/null
}
run_suite docs docs_check

# The Debian package: built with dpkg-buildpackage, installed into the system
# PostgreSQL 15, its regress suite run against the installed files, purged.
# Last, since it installs and removes files in the system tree (it puts back
# whatever an earlier `make install` had left there).
run_suite package bash "$WL_ROOT/test/packaging/deb_builds_installs_and_passes_regress.sh"

echo "$passed passed, $failed failed"
exit $status
