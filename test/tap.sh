# test/tap.sh: the TAP helpers every shell test sources (test/t/*.sh,
# test/reliability/*.sh, test/packaging/*.sh, test/docs_check.sh); not a test
# itself.  A test prints TAP: "ok N - what", "not ok N - what",
# "ok N # skip why", "# notes", and at the end done_testing's plan "1..N".
# test/run-all.sh counts those lines.
#
#   ok DESC, not_ok DESC        one result
#   skip REASON                 one check that cannot run here, and why
#   skip_all REASON             the whole test cannot run here: one skip, the plan, exit 0
#   note TEXT                   a comment line (each line of TEXT prefixed with "# ")
#   bail REASON                 stop the test: "Bail out!", exit 1
#   check DESC COMMAND...       ok when the command succeeds
#   is GOT WANT DESC            ok when the two are equal, else both as notes
#   q SQL [PSQL-ARGS...]        one statement in PGDATABASE as PGUSER: unaligned,
#                               tuples only, stop on error, no notices
#   sqlstate SQL [PSQL-ARGS...] the SQLSTATE the statements end with (00000 when
#                               they succeed), e.g. sqlstate "$sql" -U role -d db
#   wait_for SECONDS SQL [WANT [PSQL-ARGS...]]
#                               poll q until it answers WANT (default t); a note
#                               with the last answer when time runs out
#   done_testing                the plan line and a timing note; false when a check failed
#
# tap_before_check: a test may define it again to run something before each check.
TAP_N=0
TAP_FAILED=0
TAP_T0=$SECONDS

tap_before_check() { :; }

ok() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $*"
}

not_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	echo "not ok $TAP_N - $*"
}

skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # skip $*"
}

skip_all() {
	skip "$*"
	echo "1..$TAP_N"
	exit 0
}

note() { printf '%s\n' "$*" | sed 's/^/# /'; }

bail() {
	echo "Bail out! $*"
	exit 1
}

check() {
	local desc=$1
	shift
	tap_before_check
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		note "  got:      '${1:0:2000}'"
		note "  expected: '${2:0:2000}'"
	fi
}

q() {
	local sql=$1
	shift
	PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" \
		psql -X -qAt -v ON_ERROR_STOP=1 "$@" -c "$sql"
}

sqlstate() {
	local sql=$1 out
	shift
	out=$(psql -X -qAt -v VERBOSITY=sqlstate "$@" -c "$sql" 2>&1)
	if grep -q '^ERROR:' <<<"$out"; then sed -n 's/^ERROR: *\([A-Z0-9]*\).*/\1/p' <<<"$out" | head -n 1
	else echo 00000; fi
}

wait_for() {
	local secs=$1 sql=$2 want=${3:-t} end
	shift 2
	[ $# -gt 0 ] && shift
	end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		[ "$(q "$sql" "$@" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.2
	done
	note "waited $secs s for [$sql] = [$want]; last answer: [$(q "$sql" "$@" 2>&1 | head -n 3)]"
	return 1
}

done_testing() {
	echo "1..$TAP_N"
	note "$(basename "$0" .sh): $((SECONDS - TAP_T0)) s, $TAP_FAILED of $TAP_N failed"
	[ "$TAP_FAILED" = 0 ]
}
