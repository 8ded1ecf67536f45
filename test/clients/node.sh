#!/usr/bin/env bash
# The Node.js client (clients/node) against a real server: npm ci, its types
# (index.d.ts, the examples included) checked with tsc, then its node:test
# suite: typed errors, the producer, the worker in process, claims'
# execution contexts, listeners following the channel the server renames,
# the quick start's examples, and real worker processes (1,000 workloads
# drained with concurrency 8 while one process is SIGKILLed; a checkpointed
# handler resumed after a kill; SIGTERM draining).  Prints TAP.  Needs Node.js 20
# and npm (the registry, for npm ci); as root on a fresh Debian 12 machine
# it installs them with apt-get when missing.
. "$(dirname "$0")/lib.sh"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null && apt-get install -y -qq nodejs npm >/dev/null
fi
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
	echo "1..0 # SKIP the Node.js client needs Node.js 20 or later (found ${major})"
	exit 0
fi
c_setup wlc_node
T=$(mktemp -d /tmp/wlc-node.XXXXXX)
trap 'rm -rf "$T"; c_cleanup' EXIT
cd "$WL_ROOT/clients/node"
n=0
if npm ci --no-audit --no-fund --loglevel=error >"$T/npm.log" 2>&1; then
	n=$((n + 1)); echo "ok $n - node: npm ci installs pg and the type checker from package-lock.json"
else
	n=$((n + 1)); echo "not ok $n - node: npm ci"; sed 's/^/# /' "$T/npm.log"; exit 1
fi
if npx tsc -p tsconfig.json >"$T/tsc.log" 2>&1; then
	n=$((n + 1)); echo "ok $n - node: the types (index.d.ts) check with tsc, the examples and test/types.ts against them"
else
	n=$((n + 1)); echo "not ok $n - node: the types check with tsc"; sed 's/^/# /' "$T/tsc.log"
fi
export WL_ADMIN_DSN=$WL_ADMIN_URL WL_APP_DSN=$WL_APP_URL WL_WORKER_DSN=$WL_WORKER_URL
timeout 900 node --test --test-concurrency=1 --test-reporter=tap test/*.test.js >"$T/tap.log" 2>&1
rc=$?
# flat TAP: one line per test, named by its file; the tests' diagnostics pass through
awk -v n=$n '
	/^# Subtest: / { next }
	/^[ ]*# (node|python): / { sub(/^[ ]*/, ""); print; next }
	/^(ok|not ok) [0-9]+ - / {
		ok = ($1 == "ok"); sub(/^(ok|not ok) [0-9]+ - /, ""); n++
		print (ok ? "ok " : "not ok ") n " - node: " $0
		next
	}
	END { print "1.." n }' "$T/tap.log"
if [ $rc != 0 ]; then
	grep -E "error:|expected|actual|Error" "$T/tap.log" | head -n 60 | sed 's/^/# /'
fi
exit $rc
