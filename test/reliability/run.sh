#!/usr/bin/env bash
# test/reliability/run.sh: every reliability scenario, short (CI) form by
# default, --long for the long forms; prints each scenario's TAP and a closing
# "N passed, N failed, N skipped" line.  As root on Debian 12: installs what is
# missing and builds and installs the extension first unless RL_NO_BUILD=1 (the
# test command builds once and sets it).  Each scenario starts and stops its own
# clusters; see README.md beside this file.
#   test/reliability/run.sh [--long] [scenario-name...]
set -uo pipefail
RL_DIR=$(cd "$(dirname "$0")" && pwd)
WL_ROOT=$(cd "$RL_DIR/../.." && pwd)
args=(); names=()
for a in "$@"; do
	case "$a" in --*) args+=("$a") ;; *) names+=("$a") ;; esac
done
if [ "${RL_NO_BUILD:-0}" != 1 ]; then
	. "$WL_ROOT/scripts/cluster.sh"
	wl_need_root
	wl_install_deps
	flock /tmp/wl-build.lock make -s -C "$WL_ROOT" install >/dev/null || exit 1
fi
[ ${#names[@]} -gt 0 ] || names=(crash_recovery_loses_nothing stress_32_workers_complete_each_once
	fuzz_every_function_with_hostile_input failover_to_sync_standby_loses_nothing upgrade_walks_every_path)
passed=0; failed=0; skipped=0; status=0
for n in "${names[@]}"; do
	echo "== reliability/$n"
	log=$(mktemp)
	"$RL_DIR/$n.sh" "${args[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	skip=$(grep -ciE '^ok [0-9]+ # skip' "$log"); ok=$(($(grep -c '^ok ' "$log") - skip)); bad=$(grep -c '^not ok ' "$log")
	if [ "$rc" != 0 ]; then status=1; [ "$bad" -gt 0 ] || bad=1; fi
	passed=$((passed + ok)); failed=$((failed + bad)); skipped=$((skipped + skip))
	rm -f "$log"
done
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
