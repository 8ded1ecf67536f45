#!/usr/bin/env bash
# The command's environment carries no database credentials: only the WORKLOAD_* variables, PATH (a fixed default unless --env PATH) and what the operator passes with --env NAME; not PGPASSWORD, PGPASSFILE, PGSERVICEFILE, the connection settings or the DSN; and a command running as the worker's user cannot read the worker's (or its guard's) environment from /proc (SPEC 5 secrets, 8).
. "$(dirname "$0")/worker_lib.sh"
t_setup

# a worker run as root would read any /proc file: run it as an ordinary user
if [ "$(id -u)" = 0 ]; then export T_AS_USER=postgres; chmod 777 "$T_DIR"; fi

dsn_marker="application_name=dsn-marker-7f3a"
export PGPASSWORD=not-a-real-password-91c2 PGPASSFILE=/nonexistent/pgpass PGSERVICEFILE=/nonexistent/pg_service.conf
export WLT_SECRET_REF=secret://vault/reports/key WLT_NOT_PASSED=not-for-the-command
a=$(q "SELECT wt.create('a', '{\"do\": \"env\"}')")
# the worker is started by hand here: its DSN carries a marker to look for
"${T_AS_USER:+setpriv}" ${T_AS_USER:+--reuid=$T_AS_USER --regid=$T_AS_USER --init-groups --} \
	"$T_WORKER" --dsn "dbname=$T_DB user=wl_test_worker $dsn_marker" --tenant t1 --application app \
	--worker-id w1 --exec "$T_TASK" --env T_DIR --env WLT_SECRET_REF --env WLT_UNSET \
	--lease 6 --poll 1 >>"$T_DIR/w1.log" 2>&1 &
WPID[w1]=$!
check "the command ran and completed" wait_for 60 \
	"SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$a'"
env_file="$T_DIR/$a.env"
note "the command's environment: $(cut -d= -f1 "$env_file" | LC_ALL=C sort | tr '\n' ' ')"
is "$(cut -d= -f1 "$env_file" | grep -v '^WORKLOAD_' | LC_ALL=C sort | tr '\n' ' ')" \
	"PATH PWD T_DIR WLT_SECRET_REF " "besides WORKLOAD_*: PATH, the two --env variables, and PWD (which /bin/sh sets)"
is "$(cut -d= -f1 "$env_file" | grep '^WORKLOAD_' | LC_ALL=C sort | tr '\n' ' ')" \
	"WORKLOAD_APPLICATION_ID WORKLOAD_ATTEMPT WORKLOAD_CHECKPOINT_SEQUENCE WORKLOAD_CONTEXT WORKLOAD_DEFINITION_ID WORKLOAD_DEFINITION_REVISION WORKLOAD_ID WORKLOAD_TENANT_ID WORKLOAD_WORKER_ID " \
	"the WORKLOAD_* variables of a first attempt"
check "no PGPASSWORD, PGPASSFILE, PGSERVICEFILE or other PG* variable" sh -c "! grep -q '^PG' '$env_file'"
check "no value holds the password, the DSN or an unpassed variable" \
	sh -c "! grep -qE 'not-a-real-password|dsn-marker|user=wl_test_worker|not-for-the-command' '$env_file'"
check "the --env variable is passed with the worker's value" grep -qx 'WLT_SECRET_REF=secret://vault/reports/key' "$env_file"
check "PATH is the default" grep -qx 'PATH=/usr/local/bin:/usr/bin:/bin' "$env_file"
check "an --env variable the worker lacks is logged, not passed" grep -q -- '--env WLT_UNSET: not set' "$T_DIR/w1.log"
note "$(head -n 1 "$T_DIR/$a.proc") (the command runs as $(stat -c %U "$env_file"))"
if [ -n "${T_AS_USER:-}" ] || [ "$(id -u)" != 0 ]; then
	is "$(grep -c '^unreadable' "$T_DIR/$a.proc")" 2 \
		"the command cannot read its guard's or the worker's environment from /proc"
fi
kill -TERM "${WPID[w1]}"; wait_exit 30 "${WPID[w1]}" >/dev/null; unset 'WPID[w1]'

# with --env PATH the command gets the worker's own PATH
b=$(q "SELECT wt.create('b', '{\"do\": \"env\"}')")
PATH="/opt/wlt-tools/bin:$PATH" start_worker w2 --lease 6 --poll 1 --env PATH
check "the second command completed" wait_for 60 \
	"SELECT state = 'SUCCEEDED' FROM workload.workloads WHERE workload_id = '$b'"
check "with --env PATH the command gets the worker's PATH" grep -q '^PATH=/opt/wlt-tools/bin:' "$T_DIR/$b.env"

# what --env accepts
for bad in "A=B" "WORKLOAD_ID" "" "1X"; do
	"$T_WORKER" --tenant t1 --application app --exec true --env "$bad" >/dev/null 2>"$T_DIR/bad.err"
	is "$?" 2 "--env '$bad' is refused (exit 2): $(head -n 1 "$T_DIR/bad.err" | cut -c18-)"
done
"$T_WORKER" --tenant t1 --application app --exec true --expected-snapshots '{not json' >/dev/null 2>&1
is "$?" 2 "--expected-snapshots that is not JSON is refused (exit 2)"
done_testing
