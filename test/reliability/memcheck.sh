#!/usr/bin/env bash
# Memory errors: the backends run under valgrind memcheck (the postmaster is started under valgrind --trace-children=yes, so every backend it forks is checked) while the regress suite (or the tests named) and a short fuzz run call the extension; no memcheck error is reported from a stack that passes through workload.so (issue "Hostile input": run the C under AddressSanitizer or valgrind).
# Usage: memcheck.sh [--fuzz-iterations N] [regress-test-name...]   (not part of the test command: about 10-20 minutes)
. "$(dirname "$0")/lib.sh"

FUZZ=2000; TESTS=()
while [ $# -gt 0 ]; do
	case "$1" in
		--fuzz-iterations) FUZZ=$2; shift ;;
		--long) ;;
		*) TESTS+=("$1") ;;
	esac
	shift
done
command -v valgrind >/dev/null || bail "valgrind is not installed (apt-get install valgrind)"

rl_setup rlfuzz
VG="$RL_TMP/vg"; mkdir -p "$VG"; chmod 777 "$VG"
rl_node_init db "max_connections = 20" "jit = off"
DIR="$RL_TMP/db"
# the postmaster under valgrind (pg_ctl cannot wrap it); backends are forked
# from it and stay under valgrind
runuser -u postgres -- valgrind --quiet --trace-children=yes --error-limit=no --leak-check=no \
	--num-callers=30 --read-var-info=no --log-file="$VG/vg.%p" \
	"$RL_PG_BIN/postgres" -D "$DIR/data" ${RL_NODE_OPTS[db]} >"$DIR/server.log" 2>&1 &
RL_PIDS+=($!)
for _ in $(seq 1 240); do
	pg_isready -q -h "$DIR" -p "${RL_NODE_PORT[db]}" && break
	sleep 0.5
done
pg_isready -q -h "$DIR" -p "${RL_NODE_PORT[db]}" || bail "the server did not start under valgrind"
ok "the server runs under valgrind memcheck"
export PGHOST="$DIR" PGPORT="${RL_NODE_PORT[db]}" PGUSER=postgres

t0=$SECONDS
cd "$WL_ROOT" || exit 1
REGRESS_ARGS=()
[ ${#TESTS[@]} -gt 0 ] && REGRESS_ARGS=("REGRESS=${TESTS[*]}")
rm -rf "$RL_TMP/regress"; mkdir -p "$RL_TMP/regress"
cp -r "$WL_ROOT/expected" "$RL_TMP/regress/"
# pg_regress writes results/ under --outputdir: keep it out of the tree
if make -s installcheck-regress "${REGRESS_ARGS[@]}" \
	REGRESS_OPTS="--inputdir=test --outputdir=$RL_TMP/regress --load-extension=pgcrypto --load-extension=workload" \
	>"$RL_TMP/regress.log" 2>&1; then
	ok "regress suite under valgrind ($(grep -cE '\.\.\. ok|^ok ' "$RL_TMP/regress.log") tests, $((SECONDS - t0)) s)"
else
	not_ok "regress suite under valgrind"; grep -E 'FAILED|failed' "$RL_TMP/regress.log" | head | sed 's/^/#   /'
fi
cd "$RL_DIR" || exit 1

rl_setup_db db rl || bail "setup failed"
t0=$SECONDS
"$RL_TMP/rlfuzz" --seed 4242 --iterations "$FUZZ" --out "$RL_TMP/fuzz.log" \
	--dsn "host=$DIR port=${RL_NODE_PORT[db]} user=postgres dbname=rl" \
	--dsn-role "host=$DIR port=${RL_NODE_PORT[db]} user=rl_worker dbname=rl" 2>"$RL_TMP/fuzz.err"
is "$(grep -c '^CRASH' "$RL_TMP/fuzz.log")" 0 "$FUZZ fuzz calls (seed 4242) under valgrind, no crash ($((SECONDS - t0)) s)"

runuser -u postgres -- "$RL_PG_BIN/pg_ctl" -D "$DIR/data" -m fast -t 120 -w stop >/dev/null 2>&1
sleep 2
logs=$(ls "$VG"/vg.* | wc -l)
# memcheck errors, each with its stack
awk '/^==[0-9]+== [A-Z][a-z].*(Invalid|uninitialised|Mismatched|overlap|Syscall param|Conditional jump)/ { e = $0; s = ""; n = 1; next }
	n && /^==[0-9]+==    (at|by) / { s = s "\n" $0; next }
	n && /^==[0-9]+== *$/ { print e s "\n"; n = 0 }' "$VG"/vg.* >"$RL_TMP/errors"
total=$(grep -cE '^==[0-9]+== [A-Z]' "$RL_TMP/errors")
# a frame of ours: in workload.so, or at a line of one of our source files
OURRE="workload[.]so|[(]($(cd "$WL_ROOT/src" && ls *.c | sed 's/\.c$//' | paste -sd'|'))[.]c:[0-9]+[)]"
export OURRE
ours=$(awk -v mode=ours -f "$RL_DIR/memcheck-classify.awk" "$RL_TMP/errors" | grep -cE '^==[0-9]+== [A-Z]')
note "valgrind logs: $logs processes; memcheck errors in all: $total"
is "$ours" 0 "no memcheck error is raised in the extension's own code"
awk -v mode=ours -f "$RL_DIR/memcheck-classify.awk" "$RL_TMP/errors" | head -n 80 | sed 's/^/#   /'
if [ "$total" -gt "$ours" ]; then
	note "errors raised inside PostgreSQL's own code (known without its valgrind suppressions), by top frames:"
	awk -v mode=postgres -f "$RL_DIR/memcheck-classify.awk" "$RL_TMP/errors" \
		| awk 'BEGIN { RS = ""; FS = "\n" } { e = $1; sub(/^==[0-9]+== /, "", e); a = $2; b = $3
			sub(/^==[0-9]+== +(at|by) 0x[0-9A-F]+: /, "", a); sub(/^==[0-9]+== +(at|by) 0x[0-9A-F]+: /, "", b)
			print e " | " a " | " b }' | sort | uniq -c | sort -rn | head -n 12 | sed 's/^/#   /'
fi
done_testing
