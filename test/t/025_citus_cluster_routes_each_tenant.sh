#!/usr/bin/env bash
# workload on a real Citus cluster (docs/operations.md, "Sharding by
# tenant"): with Citus installed, or built (test/t/citus_lib.sh; skipped
# without either), starts a coordinator and two workers on
# this machine with citus,workload preloaded, creates the extension on the
# coordinator and distributes it (workload_citus_distribute), then, through
# the coordinator: one signing key set on every node; two tenants that land
# on different workers (looked up, never assumed) each run create, claim,
# start and complete; the claims, starts and completes of each tenant reach
# its own worker only (counted from both workers' pg_stat_statements); a
# grant signed on the coordinator verifies on both workers and authorizes
# the workloads on both; raw writes are refused on the coordinator and on a
# worker; workload_citus_distribute refuses off the coordinator and without
# Citus; and the part of the regression suite listed in CITUS_REGRESS runs
# through the coordinator against its expected output (see the note there
# for the rest).  Run as root; prints TAP.
. "$(dirname "$0")/citus_lib.sh"

export WL_CITUS_LIBS='citus,workload,pg_stat_statements'
export WL_CITUS_DB=wl
# the background tick only in the test's own database, and rarely: the
# regression tests set their own clock and call the tick themselves
wl_citus_start "workload.database = 'wl'" "workload.tick_interval = '1h'" >/dev/null
trap 'wl_citus_stop' EXIT

# The regress helpers: a fresh extension, distributed (it notices Citus), and
# the t.* functions (signed grants, specs).
on coord -c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' \
	-c 'CREATE EXTENSION pg_stat_statements' >/dev/null
on coord -f "$WL_ROOT/test/include/helpers.sql" >/dev/null

check "every per-workload table is distributed by tenant_id, co-located with workload_rows" \
	eq "$(on coord -c "SELECT string_agg(logicalrelid::regclass::text || ':' || column_to_column_name(logicalrelid, partkey), ' '
		ORDER BY logicalrelid::regclass::text)
		FROM pg_dist_partition WHERE partmethod = 'h' AND colocationid = (SELECT colocationid FROM pg_dist_partition
		WHERE logicalrelid = 'workload.workload_rows'::regclass)")" \
	"workload.attempts:tenant_id workload.cascades:tenant_id workload.checkpoints:tenant_id workload.compensations:tenant_id workload.dependencies:tenant_id workload.event_rows:tenant_id workload.queue:tenant_id workload.runs:tenant_id workload.spec_authority:tenant_id workload.specs:tenant_id workload.waits:tenant_id workload.workload_rows:tenant_id"
check "keys, channel secret, members, revocations and lineage are reference tables" \
	eq "$(on coord -c "SELECT string_agg(logicalrelid::regclass::text, ' ' ORDER BY logicalrelid::regclass::text)
		FROM pg_dist_partition WHERE partmethod = 'n'")" \
	"workload.channel_secret workload.channel_secrets workload.grant_lineage workload.revoked_grants workload.signing_keys workload.tenant_members"
keys=$(on coord -c "SELECT string_agg(key_id, ',' ORDER BY key_id) FROM workload.signing_keys")
check "one signing key set for the cluster: the coordinator's, on both workers" \
	eq "$(on w1 -c "SELECT string_agg(key_id, ',' ORDER BY key_id) FROM workload.signing_keys")|$(on w2 -c "SELECT string_agg(key_id, ',' ORDER BY key_id) FROM workload.signing_keys")|$(echo "$keys" | tr ',' '\n' | wc -l)" \
	"$keys|$keys|1"
check "a second call distributes nothing more" \
	eq "$(on coord -c "SELECT workload_citus_distribute() -> 'made_distributed'")" "[]"
check "workload_citus_distribute refuses on a worker (WORKLOAD_INVALID)" \
	eq "$(on w1 -c "SELECT workload_citus_distribute()" 2>&1 | grep -o 'WORKLOAD_INVALID: this node is not the Citus coordinator')" \
	"WORKLOAD_INVALID: this node is not the Citus coordinator"
on coord -d postgres -c 'CREATE DATABASE plain' >/dev/null
on coord -d plain -c 'CREATE EXTENSION workload CASCADE' >/dev/null
check "workload_citus_distribute refuses where Citus is absent (WORKLOAD_INVALID)" \
	eq "$(on coord -d plain -c "SELECT workload_citus_distribute()" 2>&1 | grep -o 'WORKLOAD_INVALID: Citus is not installed in this database')" \
	"WORKLOAD_INVALID: Citus is not installed in this database"

# Two tenants on different workers, found from Citus's metadata.
declare -A tenant_on=()
for i in $(seq 1 64); do
	port=$(on coord -c "SELECT port FROM workload_tenant_node('tenant$i')")
	for node in w1 w2; do
		if [ "$port" = "$(wl_citus_port $node)" ] && [ -z "${tenant_on[$node]:-}" ]; then
			tenant_on[$node]=tenant$i
		fi
	done
	[ -n "${tenant_on[w1]:-}" ] && [ -n "${tenant_on[w2]:-}" ] && break
done
check "two tenants land on different workers (workload_tenant_node)" \
	test -n "${tenant_on[w1]:-}" -a -n "${tenant_on[w2]:-}"
echo "# ${tenant_on[w1]:-?} on w1 ($WL_CITUS_W1_PORT), ${tenant_on[w2]:-?} on w2 ($WL_CITUS_W2_PORT)"

# shard_calls NODE: the calls sent to NODE (whole, workload.route_*) and the
# statements on our shards it ran since the last reset
shard_calls() {
	on "$1" -c "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query ~ 'workload\.(route_|(workload_rows|runs|queue|specs|event_rows|attempts)_[0-9]+)'"
}
reset_stats() {
	on w1 -c 'SELECT pg_stat_statements_reset()' >/dev/null
	on w2 -c 'SELECT pg_stat_statements_reset()' >/dev/null
}

for node in w1 w2; do
	other=$([ $node = w1 ] && echo w2 || echo w1)
	tenant=${tenant_on[$node]:-none}
	# created with grants signed on the coordinator (t.spec signs with workload_sign_grant)
	ids=$(on coord -c "SELECT t.create('k' || i, '{}', '$tenant') FROM generate_series(1, 5) i")
	check "$tenant: five workloads created through the coordinator with coordinator-signed grants" \
		eq "$(echo "$ids" | grep -c '^workload_')" 5
	reset_stats
	# one session claims, starts and completes them all, as a worker does
	out=$(on coord <<-SQL
		SELECT count(*) FROM (
		  SELECT workload_start(c.workload_id, c.claim_id, 'wk', c.fencing_token),
		         workload_complete(c.workload_id, c.claim_id, 'wk', c.fencing_token,
		                           'r-' || c.workload_id, '{"ok": true}')
		  FROM workload_claim('wk', ARRAY['*'], '$tenant', 'billing', '1 minute', 5) c) x;
	SQL
	)
	check "$tenant: five claimed, started and completed through the coordinator" eq "$out" 5
	mine=$(shard_calls $node)
	theirs=$(shard_calls $other)
	echo "# $tenant: $mine statements on its worker $node, $theirs on $other"
	check "$tenant: claims, starts and completes ran on its worker" test "$mine" -gt 0
	check "$tenant: ... and on no other worker" eq "$theirs" 0
	check "$tenant: all five SUCCEEDED with their results and events" \
		eq "$(on coord -c "SELECT count(*) FILTER (WHERE d->>'state' = 'SUCCEEDED' AND d->'result'->>'result_id' = 'r-' || id
			AND jsonb_array_length(d->'events') = 5) FROM unnest(string_to_array('$(echo $ids | tr ' ' ',')', ',')) id,
			LATERAL workload_get(id) d")" 5
	check "$tenant: its rows are on $node's shards and nowhere else" \
		eq "$(on $node -c "SELECT count(*) FROM workload.workloads WHERE tenant_id = '$tenant'")|$(on coord -c "SELECT count(*) FROM workload.workloads WHERE tenant_id = '$tenant'")" "5|5"
	# A retry claim (the workload has a run row: the Citus claim's retry
	# statement, not its first-claim insert): a failed attempt, due again at
	# once, claimed with a new fence that works where the old one is refused;
	# nine events: created and READY, claimed, started, FAILED, READY again,
	# claimed, started, SUCCEEDED.
	rid=$(on coord -c "SELECT t.create('retry', '{\"retry_policy\": {\"max_attempts\": 3, \"initial_delay_ms\": 0}}', '$tenant')")
	first=$(on coord -c "SELECT claim_id || ' ' || fencing_token FROM workload_claim('wk', ARRAY['*'], '$tenant', 'billing', '1 minute', start => true)")
	read -r c1 f1 <<<"$first"
	check "$tenant: a failed attempt with retries left is READY again" \
		eq "$(on coord -c "SELECT workload_fail('$rid', '$c1', 'wk', $f1, 'worker_failure', 'boom')")" READY
	reset_stats
	again=$(on coord -c "SELECT workload_id || ' ' || claim_id || ' ' || fencing_token || ' ' || attempt
		FROM workload_claim('wk', ARRAY['*'], '$tenant', 'billing', '1 minute', start => true)")
	read -r w2 c2 f2 a2 <<<"$again"
	check "$tenant: claimed again, attempt 2, a greater fencing token, on its worker only" \
		eq "$w2 $a2 $([ "${f2:-0}" -gt "$f1" ] && echo greater) $([ "$(shard_calls $node)" -gt 0 ] && echo here) $(shard_calls $other)" \
		"$rid 2 greater here 0"
	check "$tenant: the first attempt's fence is refused (WORKLOAD_STALE_FENCE)" \
		eq "$(on coord -c "SELECT workload_complete('$rid', '$c1', 'wk', $f1, 'r-stale-$tenant', '{}')" 2>&1 | grep -oE "WORKLOAD_[A-Z_]+" | head -n 1)" WORKLOAD_STALE_FENCE
	check "$tenant: the retry's fence completes it, and its history has both attempts" \
		eq "$(on coord -c "SELECT workload_complete('$rid', '$c2', 'wk', $f2, 'r-retry-$tenant', '{}') ->> 'outcome'")|$(on coord -c "SELECT d ->> 'state' || ' ' || (d ->> 'attempt_count') || ' ' || jsonb_array_length(d -> 'events') FROM workload_get('$rid') d")" \
		"succeeded|SUCCEEDED 2 9"
done

# The views answer a query that names one tenant as one node does, joins
# among them and correlated subqueries included, and Citus sends it whole to
# the tenant's node: conditions on the events' states included (each tenant
# so far: five workloads claimed, started and completed, one more that
# failed once and succeeded on its retry).
t=${tenant_on[w1]:-x}
view_queries=(
	"SELECT count(*) FROM workload.event_log e WHERE e.tenant_id = '$t' AND e.to_state = 'SUCCEEDED'|6"
	"SELECT count(*) FROM workload.events e WHERE e.tenant_id = '$t' AND e.from_state = 'CLAIMED'|7"
	"SELECT count(*) FROM workload.workloads w WHERE w.tenant_id = '$t'
	   AND (SELECT count(*) FROM workload.event_log e WHERE e.tenant_id = '$t' AND e.workload_id = w.workload_id
	        AND e.to_state = 'RUNNING') = 2|1"
	"SELECT count(*) FROM workload.workloads w
	   JOIN workload.event_log e ON e.workload_id = w.workload_id AND e.tenant_id = '$t' AND e.to_state = 'FAILED'
	   WHERE w.tenant_id = '$t' AND w.state = 'SUCCEEDED'|1"
	"SELECT count(*) FROM workload.workloads w
	   JOIN workload.results r ON r.workload_id = w.workload_id AND r.tenant_id = '$t'
	   JOIN workload.attempt_log a ON a.workload_id = w.workload_id AND a.tenant_id = '$t'
	   WHERE w.tenant_id = '$t'|7"
	"SELECT count(*) FROM workload.attempt_log a WHERE a.tenant_id = '$t' AND a.outcome <> 'SUCCEEDED'|1"
	"SELECT count(*) FROM workload.leases l JOIN workload.workloads w USING (tenant_id, seq) WHERE l.tenant_id = '$t'|0"
)
reset_stats
answers="" wanted="" unrouted=0
for vq in "${view_queries[@]}"; do
	sql=${vq%|*}
	wanted="$wanted ${vq##*|}"
	got=$(on coord -c "SET client_min_messages = debug2" -c "$sql" 2>"$WL_CITUS_TMP/view.err") || got="error: $(grep ERROR "$WL_CITUS_TMP/view.err" | head -n 1)"
	answers="$answers $got"
	grep -q "Creating router plan" "$WL_CITUS_TMP/view.err" || { unrouted=$((unrouted + 1)); echo "#   not sent to one node: $sql" >&2; }
done
check "$t: seven one-tenant queries over the views, joins and correlated subqueries among them, answer as one node does" \
	eq "$answers" "$wanted"
check "$t: ... each sent whole to $t's node (router plans, statements on w1's shards only)" \
	eq "$unrouted $(shard_calls w2) $([ "$(shard_calls w1)" -gt 0 ] && echo here)" "0 0 here"

# A worker connected to its tenant's node: the calls run there on the
# node's shards, as on one node (the paths that write without a plan).
# Counted with nested statements (pg_stat_statements.track = all): a cycle
# under workload.statement_path runs statements on the shards (Citus's
# local execution); the same cycle without it, none.  The history reads as
# on one node, each event in an event row (on Citus a run row carries none).
t=${tenant_on[w1]:-x}
# node_cycle SETTING: create one workload through the coordinator, then claim,
# start and complete it on w1 with workload.statement_path = SETTING; prints
# "t|<complete's outcome>|<statements on w1's shards>|<on w2's>|<id>" (t: the
# claim took it, and the start answered)
node_cycle() {
	local id out
	id=$(on coord -c "SELECT t.create('on-node-$1', '{}', '$t')")
	reset_stats
	out=$(on w1 <<-SQL
		SET pg_stat_statements.track = 'all';
		SET workload.statement_path = $1;
		SELECT workload_start(c.workload_id, c.claim_id, 'wk', c.fencing_token)::text || c.workload_id = '$id',
		       workload_complete(c.workload_id, c.claim_id, 'wk', c.fencing_token, 'r-on-node-$1', '{"ok": true}') ->> 'outcome'
		FROM workload_claim('wk', ARRAY['*'], '$t', 'billing', '1 minute') c;
	SQL
	)
	echo "$(echo "$out" | tail -n 1)|$(shard_calls w1)|$(shard_calls w2)|$id"
}
via_statements=$(node_cycle on)
on_shards=$(node_cycle off)
nid=${on_shards##*|}
check "$t: a cycle on its node under workload.statement_path runs statements on its shards" \
	eq "$(echo "$via_statements" | cut -d'|' -f1,2,4)$([ "$(echo "$via_statements" | cut -d'|' -f3)" -gt 0 ] && echo ' some')" \
	"t|succeeded|0 some"
check "$t: ... and without it none: claimed, started and completed on the node's shards" \
	eq "$(echo "$on_shards" | cut -d'|' -f1-4)" "t|succeeded|0|0"
check "$t: ... its history as on one node, each event in an event row" \
	eq "$(on coord -c "SELECT d ->> 'state' || ' ' || jsonb_array_length(d -> 'events') FROM workload_get('$nid') d")|$(on w1 -c "SELECT count(*) FROM workload.event_rows e
		JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq WHERE w.workload_id = '$nid'")" \
	"SUCCEEDED 5|5"

# On a sharded cluster one call acts in one tenant: a batch naming two is
# refused whole, and changes nothing
ta=${tenant_on[w1]:-x} tb=${tenant_on[w2]:-y}
# refused < OUTPUT: a WORKLOAD_INVALID whose detail says one call is for one tenant
refused() {
	local out
	out=$(cat)
	grep -q 'ERROR:  WORKLOAD_INVALID' <<<"$out" && grep -q 'DETAIL:  On a sharded cluster one call .* one tenant' <<<"$out" \
		|| { echo "#   got: $out" | head -n 3 >&2; return 1; }
}
before=$(on coord -c "SELECT count(*) FROM workload.workloads")
check "a workload_create_many naming two tenants is refused (WORKLOAD_INVALID)" refused \
	< <(on coord -c "SELECT count(*) FROM workload_create_many(jsonb_build_array(t.spec('two-a', '{}', '$ta'),
		t.spec('two-b', '{}', '$tb')))" 2>&1)
check "... and creates nothing" eq "$(on coord -c "SELECT count(*) FROM workload.workloads")" "$before"
wa=$(on coord -c "SELECT t.create('hb-a', '{}', '$ta')")
wb=$(on coord -c "SELECT t.create('hb-b', '{}', '$tb')")
items=$(on coord <<-SQL
	WITH c AS (SELECT * FROM workload_claim_id('$wa', 'wk2', ARRAY['*'], '1 minute')
	           UNION ALL SELECT * FROM workload_claim_id('$wb', 'wk2', ARRAY['*'], '1 minute')),
	     s AS (SELECT c.*, workload_start(c.workload_id, c.claim_id, 'wk2', c.fencing_token) FROM c)
	SELECT jsonb_agg(jsonb_build_object('workload_id', s.workload_id, 'claim_id', s.claim_id,
	       'fencing_token', s.fencing_token, 'result_id', 'r-' || s.workload_id, 'output', '{}'::jsonb))
	FROM s;
SQL
)
beats=$(on coord -v i="$items" <<<"SELECT jsonb_agg(e - 'result_id' - 'output') FROM jsonb_array_elements(:'i'::jsonb) e")
check "a workload_heartbeat_many naming workloads of two tenants is refused (WORKLOAD_INVALID)" refused \
	< <(on coord -v i="$beats" <<<"SELECT count(*) FROM workload_heartbeat_many('wk2', :'i'::jsonb, '1 minute')" 2>&1)
check "a workload_complete_many naming workloads of two tenants is refused (WORKLOAD_INVALID)" refused \
	< <(on coord -v i="$items" <<<"SELECT count(*) FROM workload_complete_many('wk2', :'i'::jsonb)" 2>&1)
check "... and both stay RUNNING" \
	eq "$(on coord -c "SELECT string_agg(workload_get(id) ->> 'state', ',') FROM unnest(ARRAY['$wa', '$wb']) id")" "RUNNING,RUNNING"
check "one tenant's items, each call with its own, still complete" \
	eq "$(on coord -v i="$items" <<<"SELECT count(*) FILTER (WHERE outcome = 'succeeded') FROM jsonb_array_elements(:'i'::jsonb) e,
		LATERAL workload_complete_many('wk2', jsonb_build_array(e))")" 2

signed=$(on coord -c "SELECT t.grant('${tenant_on[w1]:-x}')")
for node in w1 w2; do
	check "a grant signed on the coordinator verifies on $node" \
		eq "$(on $node -v g="$signed" <<<"SELECT workload_verify_grant(:'g'::jsonb)")" t
done
check "... and a tampered copy of it does not" \
	eq "$(on w2 -v g="$signed" <<<"SELECT workload_verify_grant(jsonb_set(:'g'::jsonb, '{grant,capabilities}', '[\"x\"]'))")" f
check "a raw write is refused on the coordinator" \
	eq "$(on coord -c "UPDATE workload.workload_rows SET priority = 9" 2>&1 | grep -o WORKLOAD_RAW_WRITE_DENIED)" WORKLOAD_RAW_WRITE_DENIED
check "a raw write is refused on a worker (distributed name)" \
	eq "$(on w1 -c "UPDATE workload.workload_rows SET priority = 9" 2>&1 | grep -o WORKLOAD_RAW_WRITE_DENIED)" WORKLOAD_RAW_WRITE_DENIED
# workload.workloads is a view of workload_rows: Citus refuses a write through
# a view of a distributed table itself, before our guard
check "a raw write through the view workload.workloads is refused on the coordinator" \
	eq "$(on coord -c "UPDATE workload.workloads SET priority = 9" 2>&1 | grep -c '^ERROR:')" 1
check "... and no row was changed by any of them" \
	eq "$(on coord -c "SELECT count(*) FROM workload.workloads WHERE priority = 9")" 0
shard=$(on w1 -c "SELECT 'workload.workload_rows_' || shardid FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
	WHERE logicalrelid = 'workload.workload_rows'::regclass AND p.groupid = (SELECT groupid FROM pg_dist_local_group) LIMIT 1")
check "a raw write is refused on a worker (shard name)" \
	eq "$(on w1 -c "SET citus.enable_manual_changes_to_shards = on; UPDATE $shard SET priority = 9" 2>&1 | grep -o WORKLOAD_RAW_WRITE_DENIED)" WORKLOAD_RAW_WRITE_DENIED
check "a reference table written raw on the coordinator is refused" \
	eq "$(on coord -c "INSERT INTO workload.tenant_members VALUES ('x', 'y', 'z')" 2>&1 | grep -o WORKLOAD_RAW_WRITE_DENIED)" WORKLOAD_RAW_WRITE_DENIED

# The regression suite through the coordinator: pg_regress's database is made
# on every node (Citus does not propagate CREATE DATABASE) and given Citus;
# each test's helpers recreate the extension and distribute it.
# CITUS_REGRESS is the part that passes there; test/citus_regress.list
# names the rest with the reason.
CITUS_REGRESS=${CITUS_REGRESS:-$(grep -v '^#' "$WL_ROOT/test/citus_regress.list" | tr '\n' ' ')}
# pg_regress gives its own session PGTZ and PGDATESTYLE; the shard statements
# Citus runs on the workers build their part of a document in the worker's
# session, so the workers' database gets the same settings.
for node in coord w1 w2; do
	on "$node" -d postgres -c 'CREATE DATABASE contrib_regression' \
		-c "ALTER DATABASE contrib_regression SET timezone = 'PST8PDT'" \
		-c "ALTER DATABASE contrib_regression SET datestyle = 'Postgres, MDY'" >/dev/null
	on "$node" -d contrib_regression -c 'CREATE EXTENSION citus' >/dev/null
done
on coord -d contrib_regression -c "SELECT citus_set_coordinator_host('localhost', $WL_CITUS_COORD_PORT)" \
	-c "SELECT citus_add_node('localhost', $WL_CITUS_W1_PORT)" -c "SELECT citus_add_node('localhost', $WL_CITUS_W2_PORT)" \
	-c 'CREATE EXTENSION pgcrypto' -c 'CREATE EXTENSION workload' >/dev/null
out=$(mktemp -d)
chmod 777 "$out"
mkdir -p "$out/expected" && cp "$WL_ROOT"/expected/*.out "$out/expected/"
(cd "$WL_ROOT" && make -s installcheck-regress REGRESS="$CITUS_REGRESS" \
	EXTRA_REGRESS_OPTS="--use-existing --outputdir=$out" >"$out/log" 2>&1)
# pg_regress compares the output with Citus's warnings in it; compared here
# without the one about a test's own pg_temp helper functions, which Citus
# creates on the coordinator only (the API creates no such function)
differ=""
for t in $CITUS_REGRESS; do
	sed -E '/^WARNING:  "function pg_temp_[0-9]+\..*" has dependency on unsupported object "schema pg_temp_[0-9]+"$/{N;d}' \
		"$out/results/$t.out" >"$out/$t.normalized" 2>/dev/null
	diff -u "$WL_ROOT/expected/$t.out" "$out/$t.normalized" >"$out/$t.diff" || differ="$differ $t"
done
if [ -z "$differ" ]; then
	check "regression suite through the coordinator: $(echo $CITUS_REGRESS | wc -w) tests pass" true
else
	for t in $differ; do echo "#   $t differs:"; head -n 30 "$out/$t.diff" | sed 's/^/#   /'; done
	check "regression suite through the coordinator (differ:$differ)" false
fi
rm -rf "$out"

done_testing
