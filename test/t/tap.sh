# test/t/tap.sh: sourced by the TAP tests of test/t; not a test itself.
# check DESCRIPTION command...: "ok N - DESCRIPTION" when the command
# succeeds, else "not ok N" and one more in $failed.  A test may define
# tap_before_check to run something before each check (022 samples the
# server's processes).
n=0
failed=0
tap_before_check() { :; }
check() {
	local desc=$1
	shift
	n=$((n + 1))
	tap_before_check
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=$((failed + 1))
	fi
}
