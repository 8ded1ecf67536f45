#!/usr/bin/env bash
# Failover: a primary with a synchronous streaming standby; workers and a client run against both addresses (target_session_attrs=read-write); replication is frozen so that commits hang unacknowledged, the primary is killed with SIGKILL, the standby is promoted, and the workers reconnect to it.  No create, claim or completion a client or worker saw acknowledged is lost, fencing tokens keep rising across the failover, and the old primary is never restarted as a primary: pg_rewind discards its late, unacknowledged writes and it rejoins as a read-only standby of the new primary (SPEC 1 "a streaming-replication standby can take over with nothing lost"; issue "Failover").
# Usage: failover_to_sync_standby_loses_nothing.sh [--long] [--promotions N] [--seed N]
. "$(dirname "$0")/lib.sh"

PROMOTIONS=1; WORKERS=6; LEASE_MS=4000
[ "$RL_LONG" = 1 ] && PROMOTIONS=4
SEED=${RL_SEED:-$$}
while [ $# -gt 0 ]; do
	case "$1" in
		--promotions) PROMOTIONS=$2; shift ;;
		--seed) SEED=$2; shift ;;
	esac
	shift
done
RANDOM=$SEED
note "seed $SEED, $PROMOTIONS promotion(s), $WORKERS workers, lease ${LEASE_MS} ms"

rl_setup rlworker
# the same configuration file on both nodes (pg_basebackup and pg_rewind copy
# it); each node's port, socket directory and cluster_name (its
# application_name as a standby) are given on its command line
rl_node_init a "wal_level = replica" "max_wal_senders = 10" "wal_log_hints = on" \
	"synchronous_commit = on" "hot_standby = on" "wal_keep_size = '512MB'" "max_connections = 50"
rl_node_start a || bail "the primary did not start"
rl_setup_db a rl || bail "setup failed"

# rl_standby_from NEW OLD: a new standby NEW, copied from the primary OLD
rl_standby_from() {
	local new=$1 from=$2
	rl_node_register "$new"
	mkdir -p "$RL_TMP/$new"; chown postgres: "$RL_TMP/$new"
	runuser -u postgres -- "$RL_PG_BIN/pg_basebackup" -D "$RL_TMP/$new/data" -h "$RL_TMP/$from" \
		-p "${RL_NODE_PORT[$from]}" -U postgres -R -X stream -c fast >"$RL_TMP/$new/basebackup.log" 2>&1 \
		|| { sed 's/^/#   /' "$RL_TMP/$new/basebackup.log"; return 1; }
	rl_node_start "$new"
}

# sync_with PRIMARY STANDBY: the standby streams and is the synchronous one
sync_with() {
	rl_wait_until 60 "$1" postgres "SELECT count(*) = 1 FROM pg_stat_replication
	    WHERE application_name = '$2' AND sync_state = 'sync' AND state = 'streaming'"
}

rl_standby_from b a || bail "the standby could not be made"
# synchronous from now on (set earlier, every commit would wait for a
# standby that does not exist yet), on both nodes, whichever is primary
for n in a b; do
	echo "synchronous_standby_names = 'FIRST 1 (a, b)'" >>"$RL_TMP/$n/data/postgresql.conf"
	runuser -u postgres -- "$RL_PG_BIN/pg_ctl" -D "$RL_TMP/$n/data" reload >/dev/null
done
check "b streams from a as its synchronous standby" sync_with a b

OUT="$RL_TMP/out"; mkdir -p "$OUT"
HOSTS="host=127.0.0.1,127.0.0.1 port=${RL_NODE_PORT[a]},${RL_NODE_PORT[b]} target_session_attrs=read-write connect_timeout=2"
W_DSN="$HOSTS user=rl_worker dbname=rl"
rl_bg "$RL_TMP/rlworker" creator --dsn "$W_DSN application_name=creator" --out "$OUT/creator.log" \
	--grant "$RL_TMP/grant.json" --prefix fo --count 1000000 --pause-ms 40 --dep-every 10
CREATOR_PID=${RL_PIDS[0]}
rl_bg "$RL_TMP/rlworker" ticker --dsn "$HOSTS user=postgres dbname=rl application_name=ticker" \
	--out "$OUT/ticker.log" --interval-ms 500
sleep 1
for i in $(seq 1 $WORKERS); do
	rl_bg "$RL_TMP/rlworker" worker --dsn "$W_DSN application_name=w$i" --id "w$i" --out "$OUT/w$i.log" \
		--lease-ms $LEASE_MS --work-ms 400 --seed "$SEED$i"
done

primary=a; standby=b
: >"$RL_TMP/failovers"
for p in $(seq 1 "$PROMOTIONS"); do
	sleep "$(rl_rand 3 6)"
	# freeze replication: from now on the primary's commits are written to
	# its own WAL but never acknowledged (the synchronous standby does not
	# confirm them); then the primary dies, and the frozen WAL receiver with
	# whatever it had not read yet
	walrcv=$(rl_psql "$standby" postgres "SELECT pid FROM pg_stat_wal_receiver")
	[ -n "$walrcv" ] || bail "no WAL receiver on $standby"
	kill -STOP "$walrcv"
	# long enough for each of the workers to reach a commit (a claim, or the
	# completion of a claim the standby has), even on a loaded machine: with
	# 1 s, a CI run once caught only 2 hung commits, both claims, and no claim
	# held on both sides to check the tokens of
	sleep 2
	hung=$(rl_psql "$primary" postgres "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
	kill_ms=$(date +%s%3N)
	rl_node_kill "$primary" all
	kill -KILL "$walrcv"; kill -CONT "$walrcv" 2>/dev/null
	rl_wait_until 60 "$standby" postgres "SELECT pg_is_in_recovery()" || bail "$standby did not come back as a standby"
	# failure detection takes longer than a lease: every claim held at the
	# kill has expired by the time the new primary serves, so it is recovered
	# and claimed again, and its first holder's completion is refused
	sleep $(( (LEASE_MS + 1500) / 1000 ))
	runuser -u postgres -- "$RL_PG_BIN/pg_ctl" -D "$RL_TMP/$standby/data" -w -t 60 promote >/dev/null \
		|| bail "promotion of $standby failed"
	promote_ms=$(date +%s%3N)
	echo "$kill_ms $promote_ms" >>"$RL_TMP/failovers"
	# alone, the new primary would wait for a synchronous standby that is
	# gone: it stops asking until one rejoins (pg_auto_failover's
	# "wait_primary"; the committed data lives on one node meanwhile)
	rl_psql "$standby" postgres "ALTER SYSTEM SET synchronous_standby_names = ''" >/dev/null
	rl_psql "$standby" postgres "SELECT pg_reload_conf()" >/dev/null
	is "$(rl_psql "$standby" postgres "SELECT pg_is_in_recovery()")" f \
		"promotion $p: $primary killed with $hung commit(s) waiting for the standby, $standby promoted"

	# the workers find the new primary by themselves
	before=$(rl_count "$OUT" ACK)
	check "promotion $p: workers reconnect to $standby and complete work there" \
		rl_wait_until 60 "$standby" rl "SELECT count(*) > 0 FROM workload.results r
		    WHERE r.created_at > to_timestamp($promote_ms / 1000.0)"
	rl_signal_drivers STOP
	rl_driver_files "$OUT"
	RL_INV_LABEL="promotion $p: every acknowledged create, claim and completion is on $standby; every invariant holds" \
		rl_invariants "$standby" rl "${RL_FILES[@]}"
	note "promotion $p: $before completions acknowledged before the new primary took over"

	# the old primary: its WAL after the switch point was never acknowledged
	tli=$((16#$(rl_psql "$standby" postgres "SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)")))
	hist="$RL_TMP/$standby/data/pg_wal/$(printf '%08X' "$tli").history"
	switch=$(awk -v t=$((tli - 1)) '$1 == t { print $2 }' "$hist")
	late=$(runuser -u postgres -- "$RL_PG_BIN/pg_waldump" -p "$RL_TMP/$primary/data/pg_wal" \
		-t $((tli - 1)) -s "$switch" 2>/dev/null | grep -c 'desc: COMMIT')
	note "promotion $p: $primary holds $late commit(s) past the switch point $switch that $standby never received"
	rl_signal_drivers CONT

	# never restarted as a primary: rewound onto the new timeline, a standby.
	# pg_rewind reads the source's timeline from its control file, which a
	# just-promoted server updates only at its next checkpoint: without this
	# CHECKPOINT it answers "no rewind required" and the old primary, its
	# late writes still in place, cannot follow the new timeline
	rl_psql "$standby" postgres "CHECKPOINT" >/dev/null
	runuser -u postgres -- "$RL_PG_BIN/pg_rewind" --target-pgdata="$RL_TMP/$primary/data" \
		--source-server="$(rl_node_conninfo "$standby")" -R >"$RL_TMP/$primary/rewind.log" 2>&1
	rc=$?
	is "$rc" 0 "promotion $p: pg_rewind discards $primary's unacknowledged writes ($(grep -o 'servers diverged at WAL location [^ ]* on timeline [0-9]*' "$RL_TMP/$primary/rewind.log"))"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$RL_TMP/$primary/rewind.log"
	rl_node_start "$primary" || bail "$primary did not start as a standby"
	rl_psql "$standby" postgres "ALTER SYSTEM RESET synchronous_standby_names" >/dev/null
	rl_psql "$standby" postgres "SELECT pg_reload_conf()" >/dev/null
	if sync_with "$standby" "$primary"; then
		ok "promotion $p: $primary rejoins as the synchronous standby of $standby"
	else
		not_ok "promotion $p: $primary rejoins as the synchronous standby of $standby"
		rl_psql "$standby" postgres "ALTER SYSTEM SET synchronous_standby_names = ''" >/dev/null
		rl_psql "$standby" postgres "SELECT pg_reload_conf()" >/dev/null
	fi
	is "$(rl_psql "$primary" rl "SELECT pg_is_in_recovery()")" t "promotion $p: $primary is in recovery, not a primary"
	refused=$(psql -X -qAt -h "$RL_TMP/$primary" -p "${RL_NODE_PORT[$primary]}" -U rl_worker -d rl \
		-c "SELECT count(*) FROM workload_claim('late', '{}', 't1', 'app')" 2>&1)
	case "$refused" in
		*"read-only transaction"*) ok "promotion $p: a late worker still talking to $primary cannot write there" ;;
		*) not_ok "promotion $p: a late worker still talking to $primary cannot write there"; note "  $refused" ;;
	esac
	tmp=$primary; primary=$standby; standby=$tmp
done

# stop creating, finish everything on the last primary
kill -TERM "$CREATOR_PID" 2>/dev/null
for _ in $(seq 1 300); do grep -q '^SUMMARY' "$OUT/creator.log" 2>/dev/null && break; sleep 0.1; done
total=$(rl_psql "$primary" rl "SELECT count(*) FROM workload.workloads")
check "all $total workloads reach SUCCEEDED on $primary" \
	rl_wait_until 240 "$primary" rl "SELECT count(*) = 0 FROM workload.workloads WHERE state <> 'SUCCEEDED'"
rl_stop_drivers
rl_driver_files "$OUT"
rl_invariants "$primary" rl "${RL_FILES[@]}"

# the rejoined standby holds exactly what the primary holds
lsn=$(rl_psql "$primary" postgres "SELECT pg_current_wal_lsn()")
rl_wait_until 60 "$standby" postgres "SELECT pg_last_wal_replay_lsn() >= '$lsn'" >/dev/null
fp="SELECT md5(string_agg(w.workload_id || w.state || w.fencing_token || coalesce(r.output_hash, ''), ',' ORDER BY w.workload_id))
    FROM workload.workloads w LEFT JOIN workload.results r USING (workload_id)"
is "$(rl_psql "$standby" rl "$fp")" "$(rl_psql "$primary" rl "$fp")" \
	"the old primary, now a standby, holds exactly the new primary's workloads and results"

# fencing tokens keep rising: a claim seen after a promotion carries a
# larger token than every claim of that workload seen before the kill
cat "$OUT"/w*.log | awk -F'\t' '$1 == "CLAIM" { print $2, $3, $6 }' >"$RL_TMP/claims-seen"
bad=$(awk 'NR == FNR { k[NR] = $1; pr[NR] = $2; n = NR; next }
	{ for (i = 1; i <= n; i++) {
		if ($3 < k[i]) { if ($2 > maxb[i, $1]) maxb[i, $1] = $2 }
		else if ($3 > pr[i]) { if (!((i, $1) in minp) || $2 < minp[i, $1]) minp[i, $1] = $2 } } }
	END { bad = 0; both = 0
		for (key in minp) if (key in maxb) { both++; if (minp[key] <= maxb[key]) bad++ }
		print bad, both }' "$RL_TMP/failovers" "$RL_TMP/claims-seen")
is "${bad% *}" 0 "fencing tokens keep rising: each of the ${bad#* } workload(s) claimed both before a kill and after its promotion got a larger token after"
check "some workloads were claimed on both sides of a failover (${bad#* })" [ "${bad#* }" -gt 0 ]
is "$(rl_summary "$OUT" errors)" 0 "no driver got an unexpected error"
note "late completions of claims made before a kill, refused after it: $(cat "$OUT"/w*.log | awk -F'\t' '$1 == "REFUSED"' | wc -l)"
note "workloads $total; claims $(rl_summary "$OUT" claims), completions acknowledged $(rl_summary "$OUT" acks), refused $(rl_summary "$OUT" refused), uncertain $(rl_summary "$OUT" uncertain), reconnects $(rl_summary "$OUT" lost)"
done_testing
