#!/usr/bin/env bash
# Upgrade: the oldest version in sql/ is installed with the library it shipped with (built from git, test/reliability/versions.txt), workloads are created (some left READY, some held by a worker, some finished), the extension is updated along every sql/workload--A--B.sql step to the control file's default_version, each step's library installed first and then ALTER EXTENSION workload UPDATE TO, as an operator upgrades, the invariants hold after each step, the held workloads are completed with the fences they got before the upgrade, the rest are claimed and completed, and the upgraded objects equal a fresh install's (SPEC 1 "every later schema change ships an upgrade script and a test that upgrades"; issue "Upgrade").  With one version only, the upgrade is reported as skipped: nothing is faked.
# Usage: upgrade_walks_every_path.sh
. "$(dirname "$0")/lib.sh"

default=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$WL_ROOT/workload.control")
installs=$(ls "$WL_ROOT"/sql/workload--*.sql | xargs -n1 basename | grep -vE '^workload--[^-]+--[^-]+\.sql$' \
	| sed -E 's/^workload--(.*)\.sql$/\1/' | sort -V | xargs)
updates=$(ls "$WL_ROOT"/sql/workload--*--*.sql 2>/dev/null | xargs -rn1 basename \
	| sed -E 's/^workload--(.*)--(.*)\.sql$/\1->\2/' | sort -V | xargs)
oldest=$(printf '%s\n' $installs $(echo "$updates" | tr ' ' '\n' | sed 's/->.*//') | grep . | sort -V | head -n 1)
note "sql/: install scripts for ${installs:-none}; update scripts ${updates:-none}; default_version $default; oldest $oldest"

rl_setup
rl_node_init db
rl_node_start db || bail "the server did not start"

# the server offers what sql/ holds (the installed copy is the one it uses)
offered=$(rl_psql db postgres "SELECT string_agg(version, ' ' ORDER BY string_to_array(version, '.')::int[])
                              FROM pg_available_extension_versions WHERE name = 'workload'")
listed=$(printf '%s\n' $installs $(echo "$updates" | tr ' ' '\n' | sed 's/.*->//') | grep . | sort -uV | tr '\n' ' ')
is "$offered" "${listed% }" "the installed extension offers exactly the versions in sql/ ($offered)"

if [ "$oldest" = "$default" ]; then
	skip "only $default exists: there is no earlier version to upgrade from"
	done_testing
	exit $?
fi

# lib_of VERSION: the library VERSION shipped with (the default: the one under test)
lib_of() {
	if [ "$1" = "$default" ]; then rl_library_use current; else rl_library_use "$1"; fi
}

# walk DB START STEP...: install START, make workloads, update through each
# STEP, finish them, compare with a fresh install
walk() {
	local db=$1 start=$2 step n id claim token; shift 2
	local label="$start -> $(echo "$@" | sed 's/ / -> /g')"
	note "walk $label"
	rl_psql db postgres "CREATE DATABASE $db" >/dev/null
	lib_of "$start"
	rl_psql db "$db" "SET client_min_messages = warning; CREATE EXTENSION workload VERSION '$start' CASCADE" >/dev/null
	psql -X -q -v ON_ERROR_STOP=1 -h "$RL_TMP/db" -p "${RL_NODE_PORT[db]}" -U postgres -d "$db" \
		-f "$RL_DIR/setup.sql" >"$RL_TMP/setup-$db.log" 2>&1 || { sed 's/^/#   /' "$RL_TMP/setup-$db.log"; bail "setup failed"; }
	is "$(rl_psql db "$db" "SELECT extversion FROM pg_extension WHERE extname = 'workload'")" "$start" "$label: installed version $start"

	# under the old version: 30 workloads; 10 claimed and started (held
	# through the upgrade), 5 of those completed; 2 cancelled
	rl_psql db "$db" "SELECT count(workload_create(rl.spec('up-' || i))) FROM generate_series(1, 30) i" >/dev/null
	rl_psql db "$db" "SELECT workload_id || '|' || claim_id || '|' || fencing_token
	                  FROM workload_claim('up-w', '{}', 't1', 'app', '1 hour', 10, true)" >"$RL_TMP/held-$db"
	n=0
	while IFS='|' read -r id claim token; do
		n=$((n + 1))
		[ $n -le 5 ] || break
		rl_psql db "$db" "SELECT workload_complete('$id', '$claim', 'up-w', $token, 'r-$id', '{\"before\": true}')" >/dev/null
	done <"$RL_TMP/held-$db"
	rl_psql db "$db" "SELECT workload_cancel(workload_id, 'up') FROM workload.workloads WHERE state = 'READY'
	                  ORDER BY workload_id LIMIT 2" >/dev/null
	is "$(rl_psql db "$db" "$counts")" \
		"CANCELLED=2 READY=18 RUNNING=5 SUCCEEDED=5" "$label: under $start, 18 READY, 5 RUNNING, 5 SUCCEEDED, 2 CANCELLED"
	# the results stored under $start, every column (a table there, from 1.3 on
	# the run rows' results seen through a view), and as workload_get shows them
	local results_q="SELECT md5(string_agg(row(r.result_id, r.workload_id, r.output, r.output_hash, r.artifacts,
	      r.schema_version, r.claim_id, r.worker_id, r.fencing_token, r.attempt_number, r.created_at)::text
	      || (workload_get(r.workload_id) -> 'result')::text, '|' ORDER BY r.result_id))
	      || ' ' || count(*) FROM workload.results r"
	local results_before
	results_before=$(rl_psql db "$db" "$results_q")
	# and a saga cancelled with one undo step recorded, to be compensated after the upgrade
	rl_psql db "$db" "SELECT count(workload_create(rl.spec('saga-1', '{}', '{\"capability_snapshot\": [\"refund\"]}')))" >/dev/null
	# and a dependent of the last workload held through the upgrade, waiting for it
	dep_on=$(tail -n 1 "$RL_TMP/held-$db" | cut -d'|' -f1)
	rl_psql db "$db" "SELECT count(workload_create(rl.spec('dep-1', '{}', jsonb_build_object('dependencies',
	                  jsonb_build_array(jsonb_build_object('workload_id', '$dep_on'))))))" >/dev/null
	IFS='|' read -r id claim token < <(rl_psql db "$db" "SELECT workload_id || '|' || claim_id || '|' || fencing_token
	      FROM workload_claim_id((SELECT workload_id FROM workload.specs WHERE idempotency_key = 'saga-1'), 'up-s', '{refund}')")
	rl_psql db "$db" "SELECT workload_start('$id', '$claim', 'up-s', $token);
	                  SELECT workload_add_compensation('$id', '$claim', 'up-s', $token, 'refund', '{\"amount\": 5}');
	                  SELECT workload_cancel('$id', 'up');
	                  SELECT workload_confirm_cancel('$id', '$claim', 'up-s', $token)" >/dev/null

	# what a deployment of $start holds outside the tables: a grant signed by its
	# key (an application keeps it) and the channel its workers LISTEN on
	local grant_before chan_before chan_after heard
	grant_before=$(rl_psql db "$db" "SELECT rl.grant('grant-before')::text")
	chan_before=$(rl_psql db "$db" "SELECT workload_channel('t1', 'app')")

	for step in "$@"; do
		lib_of "$step"
		if rl_psql db "$db" "ALTER EXTENSION workload UPDATE TO '$step'" >"$RL_TMP/alter.log" 2>&1; then
			ok "$label: ALTER EXTENSION workload UPDATE TO '$step'"
		else
			not_ok "$label: ALTER EXTENSION workload UPDATE TO '$step'"; sed 's/^/#   /' "$RL_TMP/alter.log"
		fi
		RL_INV_LABEL="$label: after the update to $step every invariant holds" rl_invariants db "$db"
	done
	is "$(rl_psql db "$db" "SELECT extversion FROM pg_extension WHERE extname = 'workload'")" "$default" "$label: now at $default"
	is "$(rl_psql db "$db" "$results_q")" "$results_before" \
		"$label: the 5 results stored under $start read the same, column by column and in workload_get"

	# existing data keeps working: the run authorities and grants of the held
	# claims verify, a grant signed before the upgrade is accepted, and the
	# result ids recorded before it replay
	is "$(rl_psql db "$db" "SELECT count(*) FILTER (WHERE workload_execution_context(workload_id, claim_id, 'up-w',
	      fencing_token) ->> 'workload_id' = workload_id) || '/' || count(*) FROM workload.workloads WHERE state = 'RUNNING'")" \
		"5/5" "$label: the 5 claims held through the upgrade pass workload_execution_context (grant and run authority verify)"
	is "$(rl_psql db "$db" "SELECT workload_create(rl.spec('after-up') || jsonb_build_object('authorization_snapshot',
	      '$grant_before'::jsonb)) ->> 'state'" 2>&1)" "READY" "$label: a grant signed under $start creates work after the update"
	n=0
	heard=0
	while IFS='|' read -r id claim token; do
		n=$((n + 1))
		[ $n -le 5 ] || break
		[ "$(rl_psql db "$db" "SELECT workload_complete('$id', '$claim', 'up-w', $token, 'r-$id', '{\"before\": true}') ->> 'outcome'" 2>&1)" \
			= succeeded ] && heard=$((heard + 1))
	done <"$RL_TMP/held-$db"
	is "$heard" 5 "$label: the 5 completions made under $start replay with their result ids (idempotent)"
	# workers that LISTEN ask for the channel again: from 1.2 on it is a secret name
	chan_after=$(rl_psql db "$db" "SELECT workload_channel('t1', 'app')")
	if [ "$(printf '%s\n' "$start" 1.2 | sort -V | head -n 1)" != 1.2 ]; then
		is "$([ "$chan_after" != "$chan_before" ] && echo differs)" differs \
			"$label: workload_channel names a new channel after the update to 1.2 or later"
	fi
	heard=$(timeout 60 psql -X -qAt -h "$RL_TMP/db" -p "${RL_NODE_PORT[db]}" -U postgres -d "$db" \
		-c "LISTEN \"$chan_after\"" -c "SELECT count(workload_create(rl.spec('after-up-2')))" -c "SELECT 1" 2>&1 \
		| grep -c "notification \"$chan_after\" with payload \"")
	is "$heard" 1 "$label: a worker LISTENing on that name is woken by a new workload"

	# the held ones' leases, taken under $start, extended by a 1.1 function
	is "$(rl_psql db "$db" "SELECT string_agg(outcome, ',') FROM (SELECT DISTINCT outcome FROM workload_heartbeat_many('up-w',
	      (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id, 'claim_id', claim_id,
	       'fencing_token', fencing_token)) FROM workload.workloads WHERE state = 'RUNNING'), '1 hour')) x")" \
		"extended" "$label: the claims held through the upgrade are extended by workload_heartbeat_many (1.1)"

	dep_q="SELECT %s FROM workload.workloads w JOIN workload.specs s ON s.tenant_id = w.tenant_id
	       AND s.workload_seq = w.seq LEFT JOIN workload.queue q ON q.tenant_id = w.tenant_id AND q.seq = w.seq
	       WHERE s.idempotency_key = 'dep-1'"
	is "$(rl_psql db "$db" "$(printf "$dep_q" "w.state || ' ' || q.blocked")")" "READY true" \
		"$label: the dependent made under $start waits through the upgrade with a blocked queue row"
	# finish: the held ones with their pre-upgrade fences, the rest by a new claim
	: >"$RL_TMP/held-failed"
	tail -n +6 "$RL_TMP/held-$db" | while IFS='|' read -r id claim token; do
		rl_psql db "$db" "SELECT workload_complete('$id', '$claim', 'up-w', $token, 'r-$id', '{\"after\": true}')" >/dev/null \
			|| echo "$id" >>"$RL_TMP/held-failed"
	done
	is "$(wc -l <"$RL_TMP/held-failed")" 0 "$label: the 5 workloads held through the upgrade complete with their old fences"
	rl_psql db "$db" "SELECT count(workload_complete(workload_id, claim_id, 'up-w2', fencing_token, 'r-' || workload_id, '{}'))
	                  FROM workload_claim('up-w2', '{}', 't1', 'app', '1 hour', 100, true)" >/dev/null
	is "$(rl_psql db "$db" "$counts")" \
		"CANCELLED=2 SUCCEEDED=28" "$label: after the upgrade every workload finishes (28 SUCCEEDED, 2 CANCELLED)"
	is "$(rl_psql db "$db" "$(printf "$dep_q" "w.state")")" "SUCCEEDED" \
		"$label: its dependency, completed with a fence from before the upgrade, unblocked the dependent, and it ran"
	# the undo step recorded before the upgrade is still bound to the saga's authorization
	is "$(rl_psql db "$db" "SELECT count(*) FROM workload_compensate((SELECT workload_id FROM workload.specs
	      WHERE idempotency_key = 'saga-1'), 'up')" 2>&1)" 1 \
		"$label: the saga cancelled before the upgrade is compensated after it (its undo step still bound)"
	RL_INV_LABEL="$label: at the end every invariant holds" rl_invariants db "$db"

	# the upgraded extension is the fresh one: same objects, same definitions
	rl_psql db "$db" "$objects" >"$RL_TMP/objects.$db"
	if diff "$RL_TMP/objects.fresh" "$RL_TMP/objects.$db" >"$RL_TMP/objects.diff"; then
		ok "$label: the upgraded extension's $(wc -l <"$RL_TMP/objects.$db") objects equal a fresh install's"
	else
		not_ok "$label: the upgraded extension's objects equal a fresh install's"; head -n 20 "$RL_TMP/objects.diff" | sed 's/^/#   /'
	fi
}

# the states of the walk's own workloads (up-1 .. up-30)
counts="SELECT string_agg(state || '=' || n, ' ' ORDER BY state) FROM
      (SELECT w.state::text, count(*) n FROM workload.workloads w JOIN workload.specs s USING (workload_id)
       WHERE s.idempotency_key LIKE 'up-%' GROUP BY 1) s"
objects="SELECT pg_describe_object(d.classid, d.objid, d.objsubid) || ' ' || coalesce(md5(CASE
        WHEN d.classid = 'pg_proc'::regclass THEN pg_get_functiondef(d.objid)
        WHEN d.classid = 'pg_class'::regclass THEN (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod)
            || ':' || a.attnotnull, ',' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = d.objid AND a.attnum > 0 AND NOT a.attisdropped)
        END), '')
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE e.extname = 'workload' AND d.deptype = 'e' ORDER BY 1"
rl_psql db postgres "CREATE DATABASE fresh" >/dev/null
rl_psql db fresh "SET client_min_messages = warning; CREATE EXTENSION workload CASCADE" >/dev/null
rl_psql db fresh "$objects" >"$RL_TMP/objects.fresh"

# the main walk: from the oldest version, one script at a time
path=$(rl_psql db postgres "SELECT path FROM pg_extension_update_paths('workload')
                           WHERE source = '$oldest' AND target = '$default'")
if [ -z "$path" ]; then
	not_ok "an update path leads from $oldest to $default"; done_testing; exit 1
fi
ok "an update path leads from $oldest to $default: $path"
walk up_main "$oldest" $(echo "$path" | sed 's/--/ /g' | cut -d' ' -f2-)

# every other script (a shortcut, a branch) is walked too: install its
# source, run exactly it, then update to the default
k=0
for u in $updates; do
	from=${u%->*}; to=${u#*->}
	echo " $path " | sed 's/--/ /g' | grep -q " $from $to " && continue
	k=$((k + 1))
	if [ "$to" = "$default" ]; then walk "up_$k" "$from" "$to"; else walk "up_$k" "$from" "$to" "$default"; fi
done
done_testing
