#!/usr/bin/env bash
# workload on a real Citus cluster, its tenants side by side (SPEC
# section 1, "Sharding by tenant is real"): a coordinator and two
# workers with citus and workload preloaded on each, the tick of each node
# running in its background worker.  Two tenants, A held by w1 and B by w2,
# looked up, never assumed.
#  - DROP EXTENSION through the coordinator goes through while every node's
#    tick runs (a pass gives way to the DROP's locks).
#  - Claimers never wait on each other: while a transaction holds A's
#    claims open, a claim for B and another claim for A (disjoint rows) are
#    answered at once.
#  - A workload-worker given the coordinator's address, logged in as a
#    worker role (not a superuser), moves to the node holding its tenant,
#    LISTENs there, and a workload created through the coordinator wakes it
#    (its poll interval is a minute).
#  - w1 is killed with SIGKILL: B goes on creating, claiming and completing
#    through the coordinator, and w2's tick recovers B's expired leases;
#    after w1 restarts, every completion A was answered before the kill is
#    there, and its tick recovers the leases that expired meanwhile.
# Run as root; prints TAP.
. "$(dirname "$0")/citus_lib.sh"
below() { [ "$1" -lt "$2" ] || { echo "#   $1 is not below $2" >&2; return 1; }; }
ms() { echo $(($(date +%s%N) / 1000000)); }

workload_cluster
trap 'kill $(jobs -p) 2>/dev/null; wl_citus_stop' EXIT
# an operator's DROP EXTENSION through the coordinator while every node's
# tick runs (200 ms): a pass on a worker node that began as that node's
# DROP dropped its shards used to wait on a shard while holding the
# extension, and the DROP was cancelled as a distributed deadlock (about
# one try in two); passes now give way to table locks, and their scans of
# this node's shards do not wait for one at all (with a wait of up to
# 500 ms, 3 of 60 drops were still cancelled; since, 0 of 120:
# scripts/citus-drop-loop.sh)
drops_go_through() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		on coord -v ON_ERROR_STOP=1 -c 'DROP EXTENSION workload CASCADE' -c 'CREATE EXTENSION workload' \
			-c 'SELECT workload_citus_distribute()' >"$T/drop.log" 2>&1 || {
			echo "#   try $i: $(grep ERROR "$T/drop.log" | head -n 1)" >&2
			return 1
		}
	done
}
drops_ok=0
drops_go_through && drops_ok=1
helpers_ok=0
on coord -v ON_ERROR_STOP=1 -f "$WL_ROOT/test/include/helpers.sql" >"$T/helpers.log" 2>&1 && helpers_ok=1
[ $helpers_ok = 1 ] || tail -n 3 "$T/helpers.log" | sed 's/^/#   /'
# helpers.sql made the extension again (and distributed it): our own names, signed grants
declare -A tenant_on=()
for i in $(seq 1 64); do
	port=$(on coord -c "SELECT port FROM workload_tenant_node('t$i')")
	for node in w1 w2; do
		if [ "$port" = "$(wl_citus_port $node)" ] && [ -z "${tenant_on[$node]:-}" ]; then
			tenant_on[$node]=t$i
		fi
	done
	[ -n "${tenant_on[w1]:-}" ] && [ -n "${tenant_on[w2]:-}" ] && break
done
A=${tenant_on[w1]:-none}
B=${tenant_on[w2]:-none}
check "DROP EXTENSION workload CASCADE through the coordinator, with every node's tick running, goes through (8 of 8)" \
	test $drops_ok = 1
check "test/include/helpers.sql (which drops and makes the extension again) runs on the coordinator" test $helpers_ok = 1
check "two tenants held by different workers: $A on w1, $B on w2" test "$A" != none -a "$B" != none
# grants signed now, while every node is up (signing records a grant's lineage
# in a reference table, written on every node); creates then reuse them
on coord -c "CREATE TABLE public.g AS SELECT '$A'::text AS tenant, t.grant('$A') AS g
	UNION ALL SELECT '$B', t.grant('$B')" >/dev/null
on coord -c "CREATE FUNCTION public.spec(tenant text, key text) RETURNS jsonb LANGUAGE sql AS \$\$
	SELECT jsonb_build_object('tenant_id', tenant, 'application_id', 'billing', 'environment', 'test',
	  'definition_id', 'invoice.render', 'definition_revision', 'r1', 'trigger', 'api',
	  'input', jsonb_build_object('n', key), 'idempotency_key', key,
	  'requested_by', jsonb_build_object('kind', 'agent', 'id', 'planner'),
	  'authorization_snapshot', (SELECT g.g FROM public.g WHERE g.tenant = spec.tenant)) \$\$" >/dev/null
spec() { echo "public.spec('$1', '$2')"; }
create() { on coord -c "SELECT workload_create($(spec "$1" "$2")) ->> 'workload_id'"; }

# ---- claimers of the two tenants never wait on each other -------------------
for i in $(seq 1 8); do create "$A" "a-$i" >/dev/null; create "$B" "b-$i" >/dev/null; done
on coord -c "BEGIN" -c "SELECT string_agg(workload_id, ' ') FROM workload_claim('hold', '{}', '$A', 'billing', '1 minute', 3)" \
	-c "SELECT pg_sleep(4)" -c "COMMIT" >"$T/held.out" 2>&1 &
holder=$!
sleep 1
t0=$(ms)
gotb=$(on coord -c "SELECT count(*) FROM workload_claim('other', '{}', '$B', 'billing', '1 minute', 3)")
tb=$(($(ms) - t0))
t0=$(ms)
gota=$(on coord -c "SELECT string_agg(workload_id, ' ') FROM workload_claim('second', '{}', '$A', 'billing', '1 minute', 3)")
ta=$(($(ms) - t0))
wait "$holder"
held=$(grep '^workload_' "$T/held.out")
echo "# while a transaction held 3 of $A's claims: a claim of 3 for $B took $tb ms, another of 3 for $A $ta ms"
check "a claim for $B is answered while $A's claims are held in an open transaction (under 1 s)" below "$tb" 1000
check "... and gets its 3" eq "$gotb" 3
check "a second claimer of $A is answered at once too (under 1 s)" below "$ta" 1000
check "... with 3 rows the first did not get (SKIP LOCKED)" \
	eq "$(echo $held $gota | tr ' ' '\n' | grep -c . )/$(echo $held $gota | tr ' ' '\n' | sort -u | grep -c .)" "6/6"

# ---- a workload-worker is woken by NOTIFY on its tenant's node ---------------
# B's queue is emptied first (the worker must find nothing at its start)
on coord -c "SELECT count(*) FROM workload_claim('drain', '{}', '$B', 'billing', '1 minute', 100)" >/dev/null
worker=$("${PG_CONFIG:-pg_config}" --bindir)/workload-worker
# a login role with workload_worker and B's membership only (Citus carries
# the role to the workers, the membership is a reference table)
on coord -c "CREATE ROLE wk_b LOGIN IN ROLE workload_worker" >/dev/null
on coord -c "SELECT workload_add_tenant_member('wk_b', '$B', 'billing')" >/dev/null
check "a worker role (no superuser, no right on the tables) is told where $B lives" \
	eq "$(on coord -U wk_b -c "SELECT port FROM workload_tenant_node('$B')" 2>&1)" "$WL_CITUS_W2_PORT"
"$worker" --dsn "host=$T port=$WL_CITUS_COORD_PORT dbname=wl user=wk_b" --tenant "$B" \
	--application billing --worker-id wk-b --poll 60 --lease 30 --exec cat >"$T/worker.log" 2>&1 &
wpid=$!
end=$((SECONDS + 15))
until grep -q "LISTEN" "$T/worker.log" || [ $SECONDS -ge $end ]; do sleep 0.2; done
check "the worker given the coordinator's address moves to the node holding $B (its log says so)" \
	grep -q "is held by the node at localhost:$WL_CITUS_W2_PORT" "$T/worker.log"
check "... and it listens on w2" wait_on 5 w2 \
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'workload-worker'" t
sleep 0.5
t0=$(ms)
woke=$(create "$B" "wake-1")
check "a workload created through the coordinator is run by it well before its 60 s poll" \
	wait_on 10 coord "SELECT workload_get('$woke') ->> 'state'" SUCCEEDED
echo "# created through the coordinator, completed by the worker on w2 after $(($(ms) - t0)) ms"
kill -TERM "$wpid"; wait "$wpid" 2>/dev/null

# ---- a worker node dies --------------------------------------------------------
# A: two completed (acknowledged) and three claimed by a worker that vanishes,
# with a 2 s lease; B: one claimed the same way
acked_a=""
for i in 1 2; do
	id=$(create "$A" "done-$i")
	read -r cid tok <<<"$(on coord -F ' ' -c "SELECT claim_id, fencing_token FROM workload_claim_id('$id', 'wa', '{}')")"
	on coord -c "SELECT workload_start('$A', '$id', '$cid', 'wa', $tok)" >/dev/null
	[ "$(on coord -c "SELECT workload_complete('$A', '$id', '$cid', 'wa', $tok, 'r-$id', '{}') ->> 'outcome'")" = succeeded ] \
		&& acked_a="$acked_a $id"
done
# a claim timeout is a held row's deadline: the tick of the tenant's node finds
# it through that node's shards (not through the deadline index)
late=$(on coord -c "SELECT workload_create($(spec "$B" "late") || '{\"timeouts\": {\"claim_ms\": 1000}}'::jsonb) ->> 'workload_id'")
on coord -c "SELECT count(*) FROM workload_claim_id('$late', 'slow', '{}', '1 hour')" >/dev/null
check "a claim of $B not started within its claim timeout is timed out by its node's tick" \
	wait_on 15 coord "SELECT string_agg(outcome, ',') FROM workload.attempt_log WHERE workload_id = '$late'" TIMED_OUT
for i in 1 2 3; do create "$A" "lost-$i" >/dev/null; done
create "$B" "lost-b" >/dev/null
on coord -c "SELECT count(*) FROM workload_claim('gone', '{}', '$A', 'billing', '2 seconds', 100, true)" >/dev/null
on coord -c "SELECT count(*) FROM workload_claim('gone', '{}', '$B', 'billing', '2 seconds', 100, true)" >/dev/null
lost_a=$(on coord -c "SELECT string_agg(workload_id, ' ') FROM workload.workloads WHERE tenant_id = '$A' AND worker_id = 'gone'")
wl_citus_node w1 kill
t_kill=$SECONDS
# B goes on through the coordinator, one create, claim and complete at a time
ok_b=0
for i in $(seq 1 20); do
	create "$B" "during-$i" >/dev/null 2>>"$T/during.err"
	read -r id cid tok <<<"$(on coord -F ' ' -c "SELECT workload_id, claim_id, fencing_token
		FROM workload_claim('wb', '{}', '$B', 'billing', '1 minute', 1, true)" 2>>"$T/during.err")"
	[ "$(on coord -c "SELECT workload_complete('$B', '$id', '$cid', 'wb', $tok, 'r-$id', '{}') ->> 'outcome'" 2>>"$T/during.err")" = succeeded ] \
		&& ok_b=$((ok_b + 1))
done
check "with w1 killed, $B creates, claims and completes 20 workloads through the coordinator" eq "$ok_b" 20
[ -s "$T/during.err" ] && sed 's/^/#   /' "$T/during.err" | head -n 5
check "... and w2's tick recovers $B's expired lease meanwhile (its first attempt WORKER_LOST)" \
	wait_on 15 coord "SELECT a.outcome FROM workload.attempts a WHERE a.tenant_id = '$B' AND a.attempt_number = 1
		AND a.workload_seq = (SELECT s.workload_seq FROM workload.specs s WHERE s.tenant_id = '$B' AND s.idempotency_key = 'lost-b')" WORKER_LOST
echo "# w1 was down for $((SECONDS - t_kill)) s"
wl_citus_node w1 start
check "after w1 restarts, every completion of $A acknowledged before the kill is there" \
	wait_on 30 coord "SELECT count(*) FILTER (WHERE d ->> 'state' = 'SUCCEEDED' AND d -> 'result' ->> 'result_id' = 'r-' || id)
		FROM unnest(string_to_array('$(echo $acked_a | tr ' ' ',')', ',')) id, LATERAL workload_get(id) d" 2
nlost=$(echo $lost_a | wc -w)
check "... and w1's tick recovers the $nlost leases of $A that expired while it was down" \
	wait_on 30 coord "SELECT count(*) FROM unnest(string_to_array('$(echo $lost_a | tr ' ' ',')', ',')) id,
		LATERAL workload_get(id) d WHERE d ->> 'state' = 'READY'
		AND d -> 'attempts' -> -1 ->> 'outcome' = 'WORKER_LOST'" "$nlost"
check "$A's events are all numbered on w1, in its own range, each once" \
	eq "$(on w1 -c "SELECT count(*) FILTER (WHERE sequence < (1::bigint << 48)) || '|' || (count(*) - count(DISTINCT sequence))
		FROM workload.events WHERE tenant_id = '$A'")" "0|0"

# ---- retention is per node too -------------------------------------------------
fin=$(on coord -c "SELECT count(*) FROM workload.workloads WHERE state IN ('SUCCEEDED', 'CANCELLED')")
check "workload_purge on the coordinator purges nothing: it holds no shard" \
	eq "$(on coord -c "SELECT workload_purge('0 seconds', 10000)")" 0
check "run on every node, each purges its own shards: all $fin finished workloads" \
	eq "$(on coord -c "SELECT sum(result::bigint) FROM run_command_on_all_nodes('SELECT workload_purge(''0 seconds'', 10000)')")|$(on coord -c "SELECT count(*) FROM workload.workloads WHERE state IN ('SUCCEEDED', 'CANCELLED')")" "$fin|0"

done_testing
