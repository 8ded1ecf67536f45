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

# ... and the setting does what it says: a claim, a start and a completion
# on the direct paths carry their three events on the run row; with the
# setting on, the statements write them as event rows, and nothing is carried
db=wl_statement_path
psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
psql -X -qAt -d $db -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pgcrypto" -f test/include/helpers.sql >/dev/null 2>&1
carried() {	# on|off: the events a run row carries after one job's cycle, and the job's history length
	psql -X -qAt -d $db -v ON_ERROR_STOP=1 2>&1 <<-SQL | tail -n 1
		SET workload.statement_path = $1;
		SELECT t.create('job-$1') AS id \gset
		SELECT claim_id AS c, fencing_token AS f FROM workload_claim('w', '{}', 'acme', 'billing', start => true) \gset
		SELECT workload_complete(:'id', :'c', 'w', :f, 'r-$1', '{}') IS NOT NULL AS done \gset
		SELECT (SELECT count(*) FROM workload.carried_events e JOIN workload.workload_rows w
		          ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq WHERE w.workload_id = :'id')
		       || ' ' || (SELECT count(*) FROM workload.event_log WHERE workload_id = :'id');
	SQL
}
direct=$(carried off)
statements=$(carried on)
n=$((n + 1))
if [ "$direct" = "3 5" ] && [ "$statements" = "0 5" ]; then
	echo "ok $n - with workload.statement_path on, a job's events are event rows, none carried (direct paths: 3 carried of 5)"
else
	echo "not ok $n - with workload.statement_path on, a job's events are event rows, none carried"
	echo "#   carried and history length: direct paths '$direct' (want 3 5), statements '$statements' (want 0 5)"
fi
psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null
echo "1..$n"
