#!/usr/bin/env bash
# test/statement_path.sh: the regress suite and the isolation specs again,
# every call through its SQL statements (workload.statement_path = on): the
# claim, the fenced calls and the appends that otherwise write without a
# plan give way to the statements that state the same rules, and every test
# must answer as it does on the direct paths.  A test that shows only how
# the direct paths store rows says so and is counted as skipped.
# Run by test/run-all.sh against its cluster (PGHOST, PGPORT); prints TAP.
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
PGOPTIONS="${PGOPTIONS:-} -c workload.statement_path=on" make -s -k installcheck >"$log" 2>&1 || rc=$?
n=0
bad=0
while read -r name result; do
	n=$((n + 1))
	if [ "$result" != ok ]; then
		echo "not ok $n - $name (workload.statement_path = on)"
		bad=$((bad + 1))
	elif grep -q '^skipped: ' "results/$name.out" 2>/dev/null; then
		echo "ok $n # skip $name: $(sed -n 's/^skipped: //p' "results/$name.out" | head -n 1)"
	else
		echo "ok $n - $name (workload.statement_path = on)"
	fi
done < <(sed -nE 's/^(test +| +)([a-z0-9_]+) +\.\.\. +(ok|FAILED|failed).*/\2 \3/p' "$log")
if [ "$n" = 0 ] || { [ "$rc" != 0 ] && [ "$bad" = 0 ]; }; then
	n=$((n + 1))
	echo "not ok $n - make installcheck with workload.statement_path = on ran (exit status $rc)"
	tail -n 20 "$log" | sed 's/^/# /'
fi
[ -s regression.diffs ] && [ "$bad" != 0 ] && head -n 200 regression.diffs | sed 's/^/# /'
echo "1..$n"
