#!/usr/bin/env bash
# The Python client (clients/python) against a real server: installed with
# pip from the checkout, offline, into a virtual environment that uses
# Debian's psycopg 3; then its pytest suite: typed errors, the producer,
# the worker in process, claims' execution contexts, listeners following
# the channel the server renames, the quick start's examples, and real
# worker processes (1,000 workloads drained with concurrency 8 while one
# process is SIGKILLed; a checkpointed handler resumed after a kill; SIGTERM
# draining).
# Prints TAP.  Needs root on a fresh Debian 12 machine (apt-get).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
missing=""
for p in python3-psycopg python3-psycopg-pool python3-pytest python3-setuptools python3-wheel python3-venv; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null \
		|| { echo "Bail out! could not install:$missing"; exit 1; }
fi
c_setup wlc_python
T=$(mktemp -d /tmp/wlc-py.XXXXXX)
trap 'rm -rf "$T"; c_cleanup' EXIT
n=0
# the documented install: a venv that sees Debian's psycopg, pip without the network
# (from a copy: pip builds in the source tree, and the checkout stays as it is)
$PY -m venv --system-site-packages "$T/venv" >/dev/null
cp -r "$WL_ROOT/clients/python" "$T/src"
rm -rf "$T/src/build" "$T/src"/*.egg-info
if "$T/venv/bin/pip" install -q --no-build-isolation --no-index "$T/src" >"$T/pip.log" 2>&1 \
	&& (cd "$T" && "$T/venv/bin/python" -c 'import workload, sys; sys.exit(not workload.__file__.startswith(sys.prefix))'); then
	n=$((n + 1)); echo "ok $n - python: pip install ./clients/python works offline (--no-build-isolation --no-index)"
else
	n=$((n + 1)); echo "not ok $n - python: pip install ./clients/python works offline"; sed 's/^/# /' "$T/pip.log"
	exit 1
fi
# the tests, as TAP: one line per test; their "# " lines pass through
(cd "$T" && timeout 900 "$T/venv/bin/python" -m pytest -v -s -p no:cacheprovider \
	--rootdir "$WL_ROOT/clients/python" "$WL_ROOT/clients/python/tests" 2>&1) >"$T/pytest.log"
rc=$?
awk -v n=$n '
	function report(name, r) {
		n++
		if (r == "PASSED") print "ok " n " - python: " name
		else if (r == "SKIPPED") print "ok " n " - python: " name " # SKIP"
		else print "not ok " n " - python: " name
	}
	/^# / { print; next }
	match($0, /^[^ ]*::[^ ]+/) {
		split(substr($0, 1, RLENGTH), p, "/"); pending = p[length(p)]
		if (match($0, / (PASSED|FAILED|ERROR|SKIPPED)/)) { report(pending, substr($0, RSTART + 1, RLENGTH - 1)); pending = "" }
		next
	}
	pending != "" && match($0, /^(PASSED|FAILED|ERROR|SKIPPED)/) { report(pending, substr($0, 1, RLENGTH)); pending = "" }
	END { print "1.." n }' "$T/pytest.log"
if [ $rc != 0 ]; then
	grep -E '^(E |FAILED|ERROR)|Error' "$T/pytest.log" | head -n 60 | sed 's/^/# /'
fi
exit $rc
