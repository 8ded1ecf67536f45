#!/usr/bin/env bash
# Crash recovery: workers complete workloads while a client creates more, and the server is killed with SIGKILL at random moments (the postmaster alone, or the postmaster and every backend at once) and restarted; after each restart and at the end every invariant holds: nothing a client or worker saw acknowledged is lost, nothing is completed twice, every state is legal (SPEC 3, 4, 6; issue "Crash recovery").
# Usage: crash_recovery_loses_nothing.sh [--long] [--kills N] [--seed N]
. "$(dirname "$0")/lib.sh"

KILLS=3; WORKERS=6; LEASE_MS=3000
[ "$RL_LONG" = 1 ] && KILLS=20
SEED=${RL_SEED:-$$}
while [ $# -gt 0 ]; do
	case "$1" in
		--kills) KILLS=$2; shift ;;
		--seed) SEED=$2; shift ;;
	esac
	shift
done
RANDOM=$SEED
note "seed $SEED (rerun with --seed $SEED), $KILLS kills, $WORKERS workers, lease ${LEASE_MS} ms"

rl_setup rlworker
rl_node_init db "max_connections = 50"
rl_node_start db || bail "the server did not start"
rl_setup_db db rl || bail "setup failed"
OUT="$RL_TMP/out"; mkdir -p "$OUT"
W_DSN="host=127.0.0.1 port=${RL_NODE_PORT[db]} user=rl_worker dbname=rl connect_timeout=5"
A_DSN="host=127.0.0.1 port=${RL_NODE_PORT[db]} user=postgres dbname=rl connect_timeout=5"

rl_bg "$RL_TMP/rlworker" creator --dsn "$W_DSN application_name=creator" --out "$OUT/creator.log" \
	--grant "$RL_TMP/grant.json" --prefix crash --count 1000000 --pause-ms 5 --dep-every 10
sleep 2      # a backlog, so that every worker is busy when the server dies
rl_bg "$RL_TMP/rlworker" ticker --dsn "$A_DSN application_name=ticker" --out "$OUT/ticker.log" --interval-ms 500
for i in $(seq 1 $WORKERS); do
	rl_bg "$RL_TMP/rlworker" worker --dsn "$W_DSN application_name=w$i" --id "w$i" --out "$OUT/w$i.log" \
		--lease-ms $LEASE_MS --work-ms 60 --seed "$SEED$i"
done
CREATOR_PID=${RL_PIDS[0]}

: >"$RL_TMP/hwm"
survived=0; pm_only=0; whole=0
for k in $(seq 1 "$KILLS"); do
	sleep "$(rl_rand 2 6).$(rl_rand 0 9)"
	mode=postmaster; [ $((k % 2)) = 0 ] && mode=all
	before=$(rl_count "$OUT" ACK)
	rl_node_kill db "$mode"
	# every third outage (the first included) outlasts a lease: the claims
	# held at the kill expire, are recovered after the restart and claimed
	# again, and their first holders' completions are refused
	outage=short
	if [ $((k % 3)) = 1 ]; then outage=long; sleep $(( (LEASE_MS + 1500) / 1000 )); fi
	# drivers pause while the server is down and its invariants are read,
	# so that their records and the store are compared at one moment
	rl_signal_drivers STOP
	if ! rl_node_start db; then
		not_ok "restart after kill $k"; break
	fi
	rl_psql db rl "SELECT statement_timestamp(), coalesce(max(sequence), 0) FROM workload.event_log" \
		| tr '|' '\t' >>"$RL_TMP/hwm"
	rl_driver_files "$OUT"
	RL_INV_LABEL="kill $k ($mode, $outage outage): restarted, every invariant holds" \
		rl_invariants db rl "${RL_FILES[@]}" "hwm=$RL_TMP/hwm" && survived=$((survived + 1))
	[ "$mode" = all ] && whole=$((whole + 1)) || pm_only=$((pm_only + 1))
	note "kill $k: $mode, $outage outage, $before completions acknowledged before it, $(wc -l <"$OUT/creates") creates so far"
	rl_signal_drivers CONT
done

# stop creating, let the workers finish everything, then stop them
kill -TERM "$CREATOR_PID" 2>/dev/null
for _ in $(seq 1 300); do grep -q '^SUMMARY' "$OUT/creator.log" 2>/dev/null && break; sleep 0.1; done
total=$(rl_psql db rl "SELECT count(*) FROM workload.workloads")
check "all $total workloads reach SUCCEEDED after $KILLS kills" \
	rl_wait_until 240 db rl "SELECT count(*) = 0 FROM workload.workloads WHERE state <> 'SUCCEEDED'"
rl_stop_drivers
rl_driver_files "$OUT"
rl_invariants db rl "${RL_FILES[@]}" "hwm=$RL_TMP/hwm"

acked=$(sort -u "$OUT/acks" | cut -f1 | sort -u | wc -l)
uncertain=$(rl_summary "$OUT" uncertain)
is "$(rl_psql db rl "SELECT count(*) FROM workload.results")" "$acked" \
	"every stored result was acknowledged to its worker (uncertain completions were resolved by their retry)"
is "$(rl_summary "$OUT" errors)" 0 "no driver got an unexpected error"
created=$(wc -l <"$OUT/creates")
is "$(sort -u "$OUT/creates" | wc -l)" "$total" "every workload in the store is one a client saw created ($total)"
is "$survived" "$KILLS" "survived $KILLS kills ($pm_only postmaster only, $whole whole server) in $((KILLS + 1)) cycles"
note "workloads $total, creates acknowledged $created (retried after a lost connection: $(rl_summary "$OUT" retried))"
note "claims $(rl_summary "$OUT" claims), completions acknowledged $(rl_summary "$OUT" acks), refused $(rl_summary "$OUT" refused), uncertain $uncertain, reconnects $(rl_summary "$OUT" lost)"
note "leases recovered by the ticker: $(rl_summary "$OUT" recovered) (the checker's own tick recovers the rest); attempts in the store: $(rl_psql db rl "SELECT count(*) FROM workload.attempt_log")"
note "crash recoveries in the server log: $(grep -c 'automatic recovery in progress' "$RL_TMP/db/server.log")"
done_testing
