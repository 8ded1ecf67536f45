#!/usr/bin/env bash
# What Citus does to shards, under load, loses and doubles nothing (SPEC
# section 1, "Sharding by tenant is real"): a coordinator and two workers,
# citus and workload preloaded on each, every node's tick running.  Tenant A
# starts on w1.  A producer creates A's workloads through the coordinator;
# four workers claim and complete them, two through the coordinator one at a
# time, one through the coordinator in batches (claim 5, complete_many), one
# connected to w1 itself, which holds A only until the move.  Meanwhile:
#  - A's shard group moves from w1 to w2 (citus_move_shard_placement);
#  - later w2, now holding A, is killed with SIGKILL and started again.
# Calls that fail meanwhile fail whole (they are retried by the loops); at
# the end every create that was answered is there, every completion that
# was answered is SUCCEEDED with its result, none succeeded twice, once
# the rest is drained every workload of A has succeeded exactly once, and
# Citus's cleanup can drop the shards A left on w1.  The calls made on w1
# before the move, and on w2 after it, run on the node's shards
# (src/store_shard.c); a write there under a lock other than the one a move
# takes lands on the shard the move leaves behind, and shows here as a
# completion answered twice.
# Run as root; prints TAP.
. "$(dirname "$0")/citus_lib.sh"

workload_cluster
trap 'touch "$T/stop"; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; wl_citus_stop' EXIT
on coord -v ON_ERROR_STOP=1 -f "$WL_ROOT/test/include/helpers.sql" >/dev/null 2>"$T/helpers.err" ||
	bail "test/include/helpers.sql: $(head -n 3 "$T/helpers.err")"
A=""
for i in $(seq 1 64); do
	if [ "$(on coord -c "SELECT port FROM workload_tenant_node('m$i')")" = "$WL_CITUS_W1_PORT" ]; then
		A=m$i
		break
	fi
done
[ -n "$A" ] || bail "no tenant of 64 is held by w1"
on coord -c "CREATE TABLE public.g AS SELECT t.grant('$A') AS g" >/dev/null
on coord -c "CREATE FUNCTION public.spec(key text) RETURNS jsonb LANGUAGE sql AS \$\$
	SELECT jsonb_build_object('tenant_id', '$A', 'application_id', 'billing', 'environment', 'test',
	  'definition_id', 'invoice.render', 'definition_revision', 'r1', 'trigger', 'api',
	  'input', jsonb_build_object('n', key), 'idempotency_key', key,
	  'requested_by', jsonb_build_object('kind', 'agent', 'id', 'planner'),
	  'authorization_snapshot', (SELECT g FROM public.g)) \$\$" >/dev/null
on coord -c "SELECT count(*) FROM workload_create_many((SELECT jsonb_agg(public.spec('pre-' || i))
	FROM generate_series(1, 200) i))" >/dev/null
note "tenant $A on w1 ($WL_CITUS_W1_PORT); 200 workloads created before the load"

# ---- the load -------------------------------------------------------------------
# each loop writes what it was answered: created ids, completed ids
producer() {
	local i=0 id
	while [ ! -e "$T/stop" ]; do
		i=$((i + 1))
		id=$(on coord -c "SELECT workload_create(public.spec('p-$i')) ->> 'workload_id'" 2>>"$T/producer.err") &&
			[ -n "$id" ] && echo "$id" >>"$T/created"
		sleep 0.02
	done
}
one_at_a_time() {	# NODE WORKER
	local node=$1 w=$2 id cid tok out r
	while [ ! -e "$T/stop" ]; do
		out=$(on "$node" -F ' ' -c "SELECT workload_id, claim_id, fencing_token
			FROM workload_claim('$w', '{}', '$A', 'billing', '3 seconds', 1, true)" 2>>"$T/$w.err") || out=""
		if [ -z "$out" ]; then sleep 0.1; continue; fi
		read -r id cid tok <<<"$out"
		r=$(on "$node" -c "SELECT workload_complete('$A', '$id', '$cid', '$w', $tok, 'r-$id', '{}') ->> 'outcome'" \
			2>>"$T/$w.err") && [ "$r" = succeeded ] && echo "$id" >>"$T/completed.$w"
	done
}
batches() {	# WORKER: claim 5 and complete them with one call, one statement
	local w=$1 out
	while [ ! -e "$T/stop" ]; do
		out=$(on coord -c "WITH items AS (SELECT jsonb_agg(jsonb_build_object(
				'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
				'result_id', 'r-' || workload_id, 'output', '{}'::jsonb)) AS items
			FROM workload_claim('$w', '{}', '$A', 'billing', '3 seconds', 5, true))
			SELECT c.workload_id FROM items, workload_complete_many('$w', items.items) c
			WHERE items.items IS NOT NULL AND c.outcome = 'succeeded'" 2>>"$T/$w.err") || out=""
		if [ -z "$out" ]; then sleep 0.1; continue; fi
		echo "$out" >>"$T/completed.$w"
	done
}
acked() { cat "$T"/completed.* 2>/dev/null | grep -c '^workload_'; }
producer &
one_at_a_time coord wc1 &
one_at_a_time coord wc2 &
batches wb &
one_at_a_time w1 wn1 &
sleep 3
before=$(acked)

# ---- A's shards move from w1 to w2 -------------------------------------------------
shard=$(on coord -c "SELECT get_shard_id_for_distribution_column('workload.workload_rows', '$A')")
t0=$SECONDS
move=$(on coord -c "SELECT citus_move_shard_placement($shard, 'localhost', $WL_CITUS_W1_PORT, 'localhost', $WL_CITUS_W2_PORT)" 2>&1) ||
	note "the move: $(echo "$move" | grep -m 1 ERROR)"
moved=$(acked)
note "the move took $((SECONDS - t0)) s; $((moved - before)) completions answered meanwhile"
check "A's shard group moved to w2 under load (citus_move_shard_placement)" \
	eq "$(on coord -c "SELECT port FROM workload_tenant_node('$A')")" "$WL_CITUS_W2_PORT"
sleep 3
after_move=$(acked)
check "completions go on after the move (the worker connected to w1 included)" \
	test "$after_move" -gt "$moved" -a "$(cat "$T/completed.wn1" 2>/dev/null | wc -l)" -gt 0

# ---- w2, holding A now, is killed and started again ---------------------------------
wl_citus_node w2 kill
sleep 2
wl_citus_node w2 start
sleep 4
restarted=$(acked)
check "completions go on after w2 is killed and started again" test "$restarted" -gt "$after_move"

# ---- stop, drain, count ----------------------------------------------------------------
touch "$T/stop"
wait
# what the loops left claimed expires (3 s leases) and the tick makes it READY
# again; whatever is READY is claimed and completed here, until nothing is left
end=$((SECONDS + 90))
while [ $SECONDS -lt $end ]; do
	left=$(on coord -c "SELECT count(*) FROM workload.workloads WHERE tenant_id = '$A' AND state <> 'SUCCEEDED'")
	[ "$left" = 0 ] && break
	on coord -c "SELECT count(*) FROM workload_complete_many('drain', (SELECT jsonb_agg(jsonb_build_object(
			'workload_id', workload_id, 'claim_id', claim_id, 'fencing_token', fencing_token,
			'result_id', 'r-' || workload_id, 'output', '{}'::jsonb))
		FROM workload_claim('drain', '{}', '$A', 'billing', '1 minute', 100, true)))" >/dev/null 2>&1 || true
	sleep 0.5
done
created=$(grep -c '^workload_' "$T/created" 2>/dev/null || echo 0)
completed=$(acked)
errors=$(cat "$T"/*.err 2>/dev/null | grep -c ERROR || true)
note "$created creates and $completed completions answered under load; $errors calls refused or failed meanwhile"
cat "$T"/*.err 2>/dev/null | grep ERROR | sed -E 's/workload_[0-9a-f]+/workload_.../g' | sort | uniq -c | sort -rn | head -n 5 |
	sed 's/^/#   /'
ids_in() { sort -u "$@" | sed "s/.*/'&'/" | paste -sd, -; }
check "every create answered under load is there (0 lost of $created)" \
	eq "$(on coord -c "SELECT count(*) FROM workload.workloads WHERE tenant_id = '$A' AND workload_id IN ($(ids_in "$T/created"))")" \
	"$(sort -u "$T/created" | grep -c .)"
check "every completion answered under load is SUCCEEDED with its result (0 lost of $completed)" \
	eq "$(on coord -c "SELECT count(*) FROM workload.workloads w JOIN workload.results r
		ON r.tenant_id = w.tenant_id AND r.workload_id = w.workload_id AND r.result_id = 'r-' || w.workload_id
		WHERE w.tenant_id = '$A' AND w.state = 'SUCCEEDED' AND w.workload_id IN ($(ids_in "$T"/completed.*))")" \
	"$(cat "$T"/completed.* | sort -u | grep -c .)"
check "no completion was answered twice" eq "$(cat "$T"/completed.* | sort | uniq -d | grep -c . || true)" 0
check "no workload succeeded twice (one SUCCEEDED event, one result each)" \
	eq "$(on coord -c "SELECT count(*) FROM (SELECT workload_id FROM workload.event_log WHERE tenant_id = '$A'
		AND to_state = 'SUCCEEDED' GROUP BY workload_id HAVING count(*) > 1) x")|$(on coord -c "SELECT count(*)
		FROM (SELECT workload_id FROM workload.results WHERE tenant_id = '$A' GROUP BY workload_id HAVING count(*) > 1) x")" "0|0"
check "drained, every workload of A has succeeded: none lost" \
	eq "$(on coord -c "SELECT count(*) FILTER (WHERE state <> 'SUCCEEDED') || '|' || (count(*) >= 200 + $created)
		FROM workload.workloads WHERE tenant_id = '$A'")" "0|true"
# the old shards go by Citus's deferred cleanup; made now (it waits at most 1 s
# for a lock on each, so a shard still held open on w1 would stay)
for _ in 1 2 3 4 5; do
	[ "$(on w1 -c "SELECT to_regclass('workload.workload_rows_$shard') IS NULL")" = t ] && break
	on coord -c "CALL citus_cleanup_orphaned_resources()" >/dev/null 2>&1 || true
	sleep 1
done
check "A's rows are on w2 only: w1 has no shard of theirs left" \
	eq "$(on w1 -c "SELECT to_regclass('workload.workload_rows_$shard') IS NULL")|$(on w2 -c "SELECT to_regclass('workload.workload_rows_$shard') IS NULL")" "t|f"
done_testing
