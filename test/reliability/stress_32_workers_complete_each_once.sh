#!/usr/bin/env bash
# Concurrency stress: 32 worker sessions claim and complete a fixed number of workloads of one tenant and application, some of them stalling past their lease; every workload completes exactly once, every stalled worker's late completion is refused, no claim ever waits on a row or transaction lock, and each workload's fencing token only rises (SPEC 4 "Claiming and running"; issue "Concurrency stress").
# Usage: stress_32_workers_complete_each_once.sh [--long] [--workloads N] [--workers N] [--seed N]
. "$(dirname "$0")/lib.sh"

WORKERS=32; WORKLOADS=1000; LEASE_MS=2000; STALL_PCT=3
[ "$RL_LONG" = 1 ] && WORKLOADS=20000
SEED=${RL_SEED:-$$}
while [ $# -gt 0 ]; do
	case "$1" in
		--workloads) WORKLOADS=$2; shift ;;
		--workers) WORKERS=$2; shift ;;
		--seed) SEED=$2; shift ;;
	esac
	shift
done
note "seed $SEED, $WORKERS worker sessions, $WORKLOADS workloads, lease ${LEASE_MS} ms, ${STALL_PCT}% of claims stall past the lease"

rl_setup rlworker
# every lock wait longer than 10 ms is logged, with its statement
rl_node_init db "max_connections = $((WORKERS + 30))" "log_lock_waits = on" "deadlock_timeout = '10ms'"
rl_node_start db || bail "the server did not start"
rl_setup_db db rl || bail "setup failed"
OUT="$RL_TMP/out"; mkdir -p "$OUT"

# all workloads exist before the first worker starts: maximal contention
rl_psql db rl "SELECT 'CREATED' || chr(9) || (workload_create(rl.spec('s-' || i, jsonb_build_object('i', i))) ->> 'workload_id')
               FROM generate_series(1, $WORKLOADS) i" >"$OUT/creator.log" || bail "could not create workloads"
is "$(rl_psql db rl "SELECT count(*) FROM workload.workloads WHERE state = 'READY'")" "$WORKLOADS" \
	"$WORKLOADS workloads are READY in tenant t1, application app"

W_DSN="host=127.0.0.1 port=${RL_NODE_PORT[db]} user=rl_worker dbname=rl connect_timeout=10"
A_DSN="host=127.0.0.1 port=${RL_NODE_PORT[db]} user=postgres dbname=rl connect_timeout=10"
rl_bg "$RL_TMP/rlworker" ticker --dsn "$A_DSN application_name=ticker" --out "$OUT/ticker.log" --interval-ms 300
t0=$SECONDS
for i in $(seq 1 "$WORKERS"); do
	rl_bg "$RL_TMP/rlworker" worker --dsn "$W_DSN application_name=w$i" --id "w$i" --out "$OUT/w$i.log" \
		--lease-ms $LEASE_MS --stall-pct $STALL_PCT --stall-extra-ms 800 --seed "$SEED$i"
done

# watch the sessions while they work: how many are connected at once
peak=0
end=$((SECONDS + 600))
while [ $SECONDS -lt $end ]; do
	read -r left conns < <(rl_psql db rl "SELECT (SELECT count(*) FROM workload.workloads WHERE state <> 'SUCCEEDED'),
	        (SELECT count(*) FROM pg_stat_activity WHERE application_name ~ '^w[0-9]+$')" | tr '|' ' ')
	[ "${conns:-0}" -gt "$peak" ] && peak=$conns
	[ "${left:-1}" = 0 ] && break
	sleep 0.5
done
took=$((SECONDS - t0))
is "$left" 0 "all $WORKLOADS workloads reach SUCCEEDED"
rl_stop_drivers
is "$peak" "$WORKERS" "$WORKERS worker sessions were connected at once"
is "$(cat "$OUT"/w*.log | awk -F'\t' '$1 == "CLAIM" { print FILENAME }' | wc -l | tr -d ' ')" \
	"$(rl_summary "$OUT" claims)" "the workers' claim records match their counts"
idle=0
for i in $(seq 1 "$WORKERS"); do grep -q '^CLAIM' "$OUT/w$i.log" || idle=$((idle + 1)); done
is "$idle" 0 "each of the $WORKERS sessions claimed work"

rl_driver_files "$OUT"
rl_invariants db rl "${RL_FILES[@]}"

# exactly once, as the workers saw it
is "$(wc -l <"$OUT/acks")" "$WORKLOADS" "$WORKLOADS completions were acknowledged, one per workload"
is "$(cut -f1 "$OUT/acks" | sort -u | wc -l)" "$WORKLOADS" "no workload was acknowledged twice"

# stalled workers: each late completion refused by the fence
stalls=$(rl_count "$OUT" STALL)
cat "$OUT"/w*.log | awk -F'\t' '$1 == "STALL" { print $2 "\t" $3 }' | sort >"$RL_TMP/stalled"
cat "$OUT"/w*.log | awk -F'\t' '$1 == "REFUSED" && ($4 == "WL006" || $4 == "WL007" || $4 == "WL008") { print $2 "\t" $3 }' \
	| sort >"$RL_TMP/refused"
is "$(comm -23 "$RL_TMP/stalled" "$RL_TMP/refused" | wc -l)" 0 \
	"each of the $stalls completions sent after the lease ran out was refused (WL006/WL007/WL008)"
is "$(cat "$OUT"/w*.log | awk -F'\t' '$1 == "REFUSED"' | wc -l)" "$stalls" "no other completion was refused"
is "$(rl_summary "$OUT" errors)" 0 "no claim failed"
is "$(rl_summary "$OUT" lost)" 0 "no session lost its connection"

# no claim waited on a row or a transaction another session holds (any wait
# over 10 ms is logged with its statement by log_lock_waits).  Waits for the
# relation extension lock are not row contention: they are sessions queueing
# to grow a table's file, which a shared, slow machine makes longer; they are
# counted, not asserted.
awk '/still waiting for/ { w = 1; ext = /on extension of relation/; what = $0; ctx = ""; next }
     w && /CONTEXT:/ { ctx = $0; next }
     w && /STATEMENT:/ { print (ext ? "extension" : "row") "\t" $0 "\t" what " " ctx; w = 0 }' "$RL_TMP/db/server.log" >"$RL_TMP/waits"
# what a claim waited for, if one did
grep '^row.*workload_claim' "$RL_TMP/waits" | head -n 3 | sed -E 's/^.*\t/#   claim waited: /' 
is "$(grep -c '^row.*workload_claim' "$RL_TMP/waits")" 0 \
	"no claim waited on a row or transaction lock (log_lock_waits, deadlock_timeout 10 ms)"
note "row and transaction lock waits over 10 ms by any statement: $(grep -c '^row' "$RL_TMP/waits")$(grep '^row' "$RL_TMP/waits" | sed -E 's/.*STATEMENT: +//' | cut -c1-60 | sort | uniq -c | sed 's/^/; /' | tr -d '\n')"
note "relation extension lock waits over 10 ms (not asserted): $(grep -c '^extension' "$RL_TMP/waits")"
is "$(grep -c 'deadlock detected' "$RL_TMP/db/server.log")" 0 "no deadlock"

multi=$(rl_psql db rl "SELECT count(*) FROM workload.workloads WHERE attempt_count > 1")
note "$took s; claims $(rl_summary "$OUT" claims), stalls $stalls, workloads claimed more than once $multi (their tokens: $(rl_psql db rl "SELECT string_agg(t, ' ') FROM (SELECT string_agg(fencing_token::text, '<' ORDER BY attempt_number) t FROM workload.attempt_log GROUP BY workload_id HAVING count(*) > 1 LIMIT 5) x"))"
note "claim latency: max $(rl_summary_max "$OUT" max_claim_ms) ms over all sessions (not asserted: the machine is shared)"
done_testing
