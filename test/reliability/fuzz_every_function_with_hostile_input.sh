#!/usr/bin/env bash
# Hostile input: every SQL function of the extension (read from pg_proc) is called with random and malformed arguments from a seeded PRNG for a fixed number of iterations, as a superuser and as a tenant-scoped role; no backend crashes (connection, server log, pg_stat_activity), every error is a WL code whose message starts with its name or a standard SQLSTATE of class 22, 42 or 54, and the store's invariants still hold (SPEC 4, 5; issue "Hostile input").
# Usage: fuzz_every_function_with_hostile_input.sh [--long] [--iterations N] [--seed N]
. "$(dirname "$0")/lib.sh"

ITERATIONS=100000
[ "$RL_LONG" = 1 ] && ITERATIONS=600000
SEED=${RL_SEED:-$(( $(date +%s) % 100000 ))}
while [ $# -gt 0 ]; do
	case "$1" in
		--iterations) ITERATIONS=$2; shift ;;
		--seed) SEED=$2; shift ;;
	esac
	shift
done
note "seed $SEED (rerun with --seed $SEED), $ITERATIONS iterations"

rl_setup rlfuzz
# errors are not logged (millions of refusals); crashes still are (LOG, PANIC, TRAP)
rl_node_init db "max_connections = 30" "log_min_messages = log"
rl_node_start db || bail "the server did not start"
rl_setup_db db rl || bail "setup failed"
OUT="$RL_TMP/out"; mkdir -p "$OUT"

# a session opened before the fuzz: a crash-restart would end it
rl_bg psql -X -q -h "$RL_TMP/db" -p "${RL_NODE_PORT[db]}" -U postgres -d rl \
	-c "SET application_name = 'rl-monitor'" -c "SELECT pg_sleep(86400)"
rl_wait_until 30 db rl "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'rl-monitor'" \
	|| bail "the monitor session did not start"
monitor_pid=$(rl_psql db rl "SELECT pid FROM pg_stat_activity WHERE application_name = 'rl-monitor'")

t0=$SECONDS
"$RL_TMP/rlfuzz" --seed "$SEED" --iterations "$ITERATIONS" --out "$OUT/fuzz.log" \
	--dsn "host=127.0.0.1 port=${RL_NODE_PORT[db]} user=postgres dbname=rl application_name=rl-fuzz" \
	--dsn-role "host=127.0.0.1 port=${RL_NODE_PORT[db]} user=rl_worker dbname=rl application_name=rl-fuzz-role" \
	2>"$OUT/fuzz.err"
rc=$?
took=$((SECONDS - t0))
calls=$(awk -F'\t' '$1 == "CALLS" { print $2 }' "$OUT/fuzz.log")
is "${calls:-none}" "$ITERATIONS" "the fuzzer made all $ITERATIONS calls (exit status $rc, $took s)"
[ -s "$OUT/fuzz.err" ] && sed 's/^/#   /' "$OUT/fuzz.err" | head -n 5

is "$(grep -c '^CRASH' "$OUT/fuzz.log")" 0 "no call lost its connection"
grep '^CRASH' "$OUT/fuzz.log" | head -n 5 | cut -c1-600 | sed 's/^/#   /'
is "$(grep -cE 'terminated by signal|was terminated by exception|server process .* was terminated|TRAP:|PANIC:|reinitializing|segmentation fault' "$RL_TMP/db/server.log")" 0 \
	"the server log shows no crashed backend"
is "$(rl_psql db rl "SELECT count(*) FROM pg_stat_activity WHERE pid = $monitor_pid AND application_name = 'rl-monitor'")" 1 \
	"pg_stat_activity: the session opened before the fuzz is still there (no crash-restart)"
is "$(rl_psql db rl "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'rl-fuzz%'")" 0 \
	"pg_stat_activity: no fuzz session is left behind"
is "$(grep -c '^UNEXPECTED' "$OUT/fuzz.log")" 0 \
	"every error is a WL code starting with its name, or a standard SQLSTATE of class 22, 42 or 54"
grep '^UNEXPECTED' "$OUT/fuzz.log" | awk -F'\t' '!seen[$3 FS $4]++' | head -n 10 | cut -c1-700 | sed 's/^/#   /'

nfun=$(awk -F'\t' '$1 == "FUNCTIONS" { print $2 }' "$OUT/fuzz.log")
never=$(awk -F'\t' '$1 == "FUNC" && $3 == 0 { printf " %s", $2 }' "$OUT/fuzz.log")
is "${never:-none}" none "each of the $nfun functions was called"
note "functions that never succeeded (every call refused):$(awk -F'\t' '$1 == "FUNC" && $4 == 0 { printf " %s", $2 }' "$OUT/fuzz.log")"
awk -F'\t' '$1 == "FUNC" { printf "#   %-45s %7d calls %6d ok  %s\n", $2, $3, $4, substr($5, 1, 110) }' "$OUT/fuzz.log"
note "SQLSTATEs: $(awk -F'\t' '$1 == "STATE" { print $3, $2 }' "$OUT/fuzz.log" | sort -rn | awk '{ printf "%s=%s ", $2, $1 }')"

rl_invariants db rl
done_testing
