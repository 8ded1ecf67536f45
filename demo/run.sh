#!/usr/bin/env bash
# demo/run.sh: the demo, as root on Debian 12.  Installs what is missing,
# builds, starts a throwaway cluster, creates ~300 workloads (priorities,
# dependencies, deliberate failures; 270 of them in one workload_create_many
# call) and a schedule that fires every 3 seconds, runs four workload-workers,
# kills one with SIGKILL and pauses another mid-run, and shows the recovery,
# the fence refusing the late completions, and a summary per state.  About
# two minutes; everything it starts is stopped on exit.
# DEMO_LOGS=dir keeps the workers' logs.  demo/walkthrough.sh is the SQL-only tour.
# With --citus it runs on a Citus cluster of a coordinator and two workers
# (the server's Citus, or one built from CITUS_SRC or ../shared/citus:
# scripts/citus.sh): the same demo through the coordinator, the
# workers of tenant acme moved to the node that holds it.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
CITUS=0
[ "${1:-}" = --citus ] && CITUS=1
if [ $CITUS = 1 ]; then . "$WL_ROOT/scripts/citus.sh"; else . "$WL_ROOT/scripts/cluster.sh"; fi
wl_need_root
wl_install_deps
wl_build
# The library is preloaded: its background worker runs workload_tick() every
# second in the demo database, recovering expired leases with nobody calling it
# (on Citus on every node, each for the tenants it holds).
if [ $CITUS = 1 ]; then
	wl_citus_build >/dev/null
	export WL_CITUS_LIBS='citus,workload' WL_CITUS_DB=demo
	wl_citus_start "workload.database = 'demo'" "workload.tick_interval = '1s'"
	wl_cluster_stop() { wl_citus_stop; }
else
	wl_cluster_start "shared_preload_libraries = 'workload'" "workload.database = 'demo'" \
		"workload.tick_interval = '1s'"
fi

WORKER_BIN=$("$PG_CONFIG" --bindir)/workload-worker
DEMO=$(mktemp -d /tmp/workload-demo.XXXXXX)
export PGDATABASE=demo
LEASE=4
declare -A WPID=()
TTY=0; [ -t 1 ] && TTY=1

demo_stop() {
	local id
	for id in "${!WPID[@]}"; do
		kill -CONT "${WPID[$id]}" 2>/dev/null || true
		kill -KILL "${WPID[$id]}" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [ -n "${DEMO_LOGS:-}" ]; then mkdir -p "$DEMO_LOGS" && cp "$DEMO"/*.log "$DEMO_LOGS"/ 2>/dev/null || true; fi
	rm -rf "$DEMO"
	wl_cluster_stop
}
trap demo_stop EXIT

q() { psql -X -qAt -v ON_ERROR_STOP=1 -c "$1"; }
clear_line() { if [ "$TTY" = 1 ]; then printf '\r\033[K'; fi; }
say() { clear_line; echo "$*"; }
elapsed() { awk -v s="$START" -v n="$(date +%s.%N)" 'BEGIN { printf "%5.1fs", n - s }'; }

echo "== creating the workloads"
if [ $CITUS = 1 ]; then
	psql -X -qc "CREATE EXTENSION workload CASCADE" -c "SELECT workload_citus_distribute()" >/dev/null
	echo "   on Citus: the tables distributed by tenant; acme is held by the worker on port" \
		"$(psql -X -qAt -c "SELECT port FROM workload_tenant_node('acme')")"
else
	psql -X -d postgres -qc "CREATE DATABASE demo"
fi
psql -X -q -f "$WL_ROOT/demo/workloads.sql"
N=$(q "SELECT count(*) FROM demo.created")
q "SELECT '   ' || count(*) || ' ' || kind || CASE kind
        WHEN 'render' THEN ' (priority 0)'
        WHEN 'urgent' THEN ' (renders created last, priority 10)'
        WHEN 'encode' THEN ' (four checkpointed steps each)'
        WHEN 'upload' THEN ' (fail once with exit 75, then succeed)'
        WHEN 'corrupt' THEN ' (exit 1: not retried)'
        WHEN 'poison' THEN ' (SIGKILL themselves: retried, then dead-lettered)'
        WHEN 'legacy' THEN ' (print no JSON: invalid_output)'
        WHEN 'publish' THEN ' (each waits for 3 renders; 2 wait for a corrupt frame)'
        WHEN 'archive' THEN ' (60 s each, priority 5: to be cancelled)' END
   FROM demo.created GROUP BY kind ORDER BY min(seq)"
echo "   = $N workloads in tenant acme, application media, all READY; the first $(q "SELECT items FROM demo.bulk")"
echo "     were made by one workload_create_many call in $(q "SELECT ms FROM demo.bulk") ms, each item answered on its own"

echo "== a schedule: a media.report workload (priority 20) every 3 seconds (workload_schedule '@every 3 seconds')"
q "SELECT '   first slot ' || to_char((workload_schedule('acme', 'media', 'media-report', '@every 3 seconds',
        demo.spec('report', 0, 100, 20) - 'tenant_id' - 'application_id' - 'idempotency_key')
        ->> 'next_run_at')::timestamptz, 'HH24:MI:SS') || '; the tick fires each slot through the create path,'"
echo "   with idempotency key schedule:media-report:<slot>, so a slot makes one workload however many ticks race"

echo "== the server's background worker runs workload_tick() every second in this database"
echo "   (recovering expired leases and enforcing timeouts; nothing else calls it)"

for i in 1 2 3 4; do
	batch=1; [ $i = 3 ] && batch=4
	"$WORKER_BIN" --dsn "dbname=demo user=demo_worker" --tenant acme --application media \
		--capability media --worker-id "worker-$i" --lease $LEASE --batch $batch --poll 1 \
		--exec "$WL_ROOT/demo/task.sh" >"$DEMO/worker-$i.log" 2>&1 &
	WPID[worker-$i]=$!
done
echo "== started worker-1..worker-4 (workload-worker, role demo_worker, lease ${LEASE}s,"
echo "   heartbeat every $(awk -v l=$LEASE 'BEGIN { printf "%.1f", l / 3 }')s; worker-3 claims 4 at a time)"
if [ $CITUS = 1 ]; then
	# each worker says where it moved once it has asked the coordinator (up to 10 s)
	for _ in $(seq 20); do
		[ "$(cat "$DEMO"/worker-*.log | grep -c "is held by the node")" -ge 4 ] && break
		sleep 0.5
	done
	echo "   on Citus each worker, given the coordinator, moved to the node that holds acme and LISTENs there:"
	{ grep -h "is held by the node" "$DEMO"/worker-*.log || true; } | sed 's/^.*workload-worker/   workload-worker/' | head -n 4
fi
START=$(date +%s.%N)

STATUS_SQL="SELECT count(*) FILTER (WHERE state IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')),
    count(*) FILTER (WHERE state = 'READY'),
    count(*) FILTER (WHERE state IN ('CLAIMED', 'RUNNING', 'CHECKPOINTED', 'CANCELLATION_REQUESTED')),
    count(*) FILTER (WHERE state = 'SUCCEEDED'), count(*) FILTER (WHERE state = 'DEAD_LETTER'),
    count(*) FILTER (WHERE state = 'CANCELLED'),
    (SELECT count(*) FROM demo.attempt_log WHERE outcome = 'WORKER_LOST'),
    count(*) FILTER (WHERE state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED') AND NOT EXISTS (
        SELECT 1 FROM demo.dependencies d JOIN demo.workloads x ON x.workload_id = d.depends_on
        WHERE d.workload_id = w.workload_id AND x.state = 'DEAD_LETTER')),
    (SELECT count(*) FROM demo.specs s WHERE s.idempotency_key LIKE 'schedule:media-report:%')
  FROM demo.workloads w JOIN demo.created USING (workload_id)"

cancelled_archives=0; killed=0; paused=0; resumed=0; last_print=0; printed=
paused_id=""
while :; do
	IFS='|' read -r done ready running ok dead cancelled lost open fired < <(q "$STATUS_SQL" | tr -d '\n'; echo)
	line="$(elapsed)  done $done/$N  ready $ready  running $running  succeeded $ok  dead-letter $dead  cancelled $cancelled  lost $lost  scheduled $fired"
	if [ "$TTY" = 1 ]; then printf '\r\033[K%s' "$line"
	elif [ $((SECONDS - last_print)) -ge 3 ]; then echo "$line"; last_print=$SECONDS; printed=$line; fi

	# the operator cancels the two archives once both run
	if [ $cancelled_archives = 0 ] && [ "$(q "SELECT count(*) FROM demo.created c JOIN demo.workloads w USING (workload_id)
	        WHERE c.kind = 'archive' AND w.state = 'RUNNING'")" = 2 ]; then
		say "== $(elapsed): the operator cancels the 2 archives while they run (workload_cancel):"
		# the ids first, then one call each: on Citus a call made inside a query over
		# the tables would be sent with the query into the tenant's shards
		q "SELECT c.workload_id || ' ' || w.worker_id FROM demo.created c JOIN demo.workloads w USING (workload_id)
		   WHERE c.kind = 'archive'" | while read -r id on; do
			q "SELECT '   $id on $on: ' || workload_cancel('$id', 'operator')"
		done
		cancelled_archives=1
	fi

	# SIGKILL worker-3 once a fifth is done and it holds claims
	if [ $killed = 0 ] && [ "$done" -ge $((N / 5)) ] && [ "$(q "SELECT count(*) FROM demo.workloads
	        WHERE worker_id = 'worker-3' AND state IN ('RUNNING', 'CHECKPOINTED')")" -ge 2 ]; then
		kill -KILL "${WPID[worker-3]}"
		wait "${WPID[worker-3]}" 2>/dev/null || true
		KILLED_AT=$(date +%s.%N)
		sleep 0.3
		q "SELECT workload_id || '|' || claim_id || '|' || fencing_token || '|' || attempt_count
		   FROM demo.workloads WHERE worker_id = 'worker-3' ORDER BY 1" >"$DEMO/held"
		say "== $(elapsed): SIGKILL worker-3 (pid ${WPID[worker-3]}) while it holds $(wc -l <"$DEMO/held") claims:"
		q "SELECT '   ' || w.workload_id || '  ' || c.kind || ' #' || c.n || '  ' || w.state || ', fencing token ' || w.fencing_token
		   FROM demo.workloads w JOIN demo.created c USING (workload_id) WHERE w.worker_id = 'worker-3' ORDER BY 1"
		unset 'WPID[worker-3]'
		killed=1
	fi

	# SIGSTOP worker-4 (a long pause) halfway, while it runs a command
	if [ $paused = 0 ] && [ $killed = 1 ] && [ "$done" -ge $((N / 2)) ]; then
		kill -STOP "${WPID[worker-4]}"
		sleep 0.2
		paused_id=$(q "SELECT workload_id FROM demo.workloads JOIN demo.created c USING (workload_id)
		               WHERE worker_id = 'worker-4' AND state = 'RUNNING' AND c.kind IN ('render', 'publish')")
		if [ -n "$paused_id" ]; then
			q "SELECT claim_id || '|' || fencing_token FROM demo.workloads WHERE workload_id = '$paused_id'" >"$DEMO/paused"
			say "== $(elapsed): SIGSTOP worker-4 (a stalled worker) while it runs $paused_id"
			paused=1
		else
			kill -CONT "${WPID[worker-4]}"	# between two renders: try again
		fi
	fi
	if [ $paused = 1 ] && [ $resumed = 0 ] && [ "$(q "SELECT (worker_id IS NOT NULL AND worker_id <> 'worker-4')
	        OR state IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED') FROM demo.workloads WHERE workload_id = '$paused_id'")" = t ]; then
		say "== $(elapsed): worker-4's lease ran out; the background tick recovered $paused_id and it is now"
		say "   $(q "SELECT w.state || coalesce(' on ' || w.worker_id, ' by ' || r.worker_id, '') || ', fencing token ' || w.fencing_token
		            FROM demo.workloads w LEFT JOIN demo.results r USING (workload_id) WHERE workload_id = '$paused_id'"); SIGCONT worker-4"
		kill -CONT "${WPID[worker-4]}"
		resumed=1
	fi

	if [ "$open" = 0 ] && { [ $paused = 0 ] || [ $resumed = 1 ]; }; then break; fi
	if awk -v s="$START" -v n="$(date +%s.%N)" 'BEGIN { exit !(n - s > 240) }'; then
		say "== gave up waiting after 240 s"; break
	fi
	sleep 0.5
done
clear_line
[ "$line" = "$printed" ] || echo "$line"

echo "== $(elapsed): nothing left to run but the 2 publishes waiting for a dead-lettered corrupt frame;"
echo "   the operator cancels that frame, and its dependents are cancelled with it:"
corrupt=$(q "SELECT depends_on FROM demo.dependencies d JOIN demo.created c USING (workload_id)
             WHERE c.kind = 'publish' AND c.n = 13")
q "SELECT '   ' || '$corrupt' || ': ' || workload_cancel('$corrupt', 'operator')"
q "SELECT '   ' || c.kind || ' #' || c.n || ': ' || w.state || ' (' || (SELECT evidence ->> 'cause' FROM demo.event_log e
          WHERE e.workload_id = w.workload_id AND e.to_state = 'CANCELLED') || ')'
   FROM demo.workloads w JOIN demo.created c USING (workload_id) WHERE c.kind = 'publish' AND c.n IN (13, 14) ORDER BY c.n"

echo "== the schedule is paused (workload_schedule_pause); what it fired while the workers ran:"
q "SELECT '   paused: ' || (workload_schedule_pause('acme', 'media', 'media-report') ->> 'paused')"
REPORTS_SQL="SELECT substr(s.idempotency_key, length('schedule:media-report:') + 1)::timestamptz AS slot, w.state
    FROM demo.specs s JOIN demo.workloads w USING (workload_id)
    WHERE s.idempotency_key LIKE 'schedule:media-report:%'"
q "SELECT '   ' || count(*) || ' media.report workloads, one per slot (' || count(DISTINCT slot) || ' distinct slots), slots '
          || to_char(min(slot), 'HH24:MI:SS') || ' .. ' || to_char(max(slot), 'HH24:MI:SS')
          || coalesce(', ' || (SELECT string_agg(DISTINCT round(extract(epoch FROM g))::text, '/') FROM
               (SELECT slot - lag(slot) OVER (ORDER BY slot) g FROM ($REPORTS_SQL) x) d WHERE g IS NOT NULL) || ' s apart', '')
   FROM ($REPORTS_SQL) r"
q "SELECT '   their states: ' || string_agg(state || ' ' || n, ', ' ORDER BY state)
   || '; slots skipped (the previous report still open: overlap skip): '
   || (SELECT count(*) FROM workload.schedule_events WHERE schedule_id = 'media-report' AND event_type = 'schedule.skipped')
   FROM (SELECT state, count(*) n FROM ($REPORTS_SQL) r GROUP BY state) s"

echo "== stopping the workers with SIGTERM (each lets its command finish, then exits)"
for id in worker-1 worker-2 worker-4; do
	kill -TERM "${WPID[$id]}"
	rc=0; wait "${WPID[$id]}" || rc=$?
	echo "   $id exited with status $rc"
	unset "WPID[$id]"
done

echo
echo "== recovery: what happened to worker-3's claims"
while IFS='|' read -r id claim token attempt; do
	q "SELECT '   ' || c.kind || ' #' || c.n || ': ' || string_agg('attempt ' || a.attempt_number || ' ' || a.worker_id || ' '
	          || coalesce(a.outcome, 'running'), ' -> ' ORDER BY a.attempt_number)
	          || ' (recovered ' || (SELECT to_char(extract(epoch FROM min(e.at)) - $KILLED_AT, 'FM990.0')
	                                FROM demo.event_log e WHERE e.workload_id = '$id' AND e.to_state = 'RECOVERING')
	          || 's after the SIGKILL)'
	   FROM demo.attempt_log a JOIN demo.created c USING (workload_id) WHERE a.workload_id = '$id' GROUP BY c.kind, c.n"
done <"$DEMO/held"
echo "   the background tick recovered $(q "SELECT count(*) FROM demo.event_log WHERE to_state = 'RECOVERING'") expired lease(s) in all"
if [ -n "$(q "SELECT 1 FROM demo.created c JOIN demo.workloads w USING (workload_id)
             WHERE c.workload_id IN ($(cut -d'|' -f1 "$DEMO/held" | sed "s/.*/'&'/" | paste -sd,)) AND c.kind = 'encode'")" ]; then
	q "SELECT '   encode #' || c.n || ' resumed after step ' || (w.output ->> 'resumed_after_step') || ' (its last checkpoint)'
	   FROM demo.results w JOIN demo.created c USING (workload_id)
	   WHERE c.workload_id IN ($(cut -d'|' -f1 "$DEMO/held" | sed "s/.*/'&'/" | paste -sd,)) AND c.kind = 'encode'"
fi

echo
echo "== cancellation: the archives, cancelled while running"
q "SELECT '   archive #' || c.n || ': ' || w.state || ', confirmed by ' || e2.actor || ' '
          || to_char(extract(epoch FROM e2.at - e1.at), 'FM990.0') || 's after the request (heartbeat every '
          || to_char($LEASE / 3.0, 'FM0.0') || 's)'
   FROM demo.created c JOIN demo.workloads w USING (workload_id)
   JOIN demo.event_log e1 ON e1.workload_id = c.workload_id AND e1.to_state = 'CANCELLATION_REQUESTED'
   JOIN demo.event_log e2 ON e2.workload_id = c.workload_id AND e2.to_state = 'CANCELLED'
   WHERE c.kind = 'archive' ORDER BY c.n"

echo
echo "== the fence: late completions are refused"
echo "   worker-3's completion, replayed as if its request arrived late (its claim, its fencing token):"
while IFS='|' read -r id claim token attempt; do
	echo "   $id token $token: $(q "SELECT demo.try_complete('$id', '$claim', 'worker-3', $token, '$id:$attempt', '{\"late\": true}')")"
done <"$DEMO/held"
if [ -s "$DEMO/paused" ]; then
	echo "   worker-4, resumed after its lease ran out, tried to complete $paused_id itself; its log:"
	grep -E "$paused_id: .*(refused|succeeded)" "$DEMO/worker-4.log" | sed 's/^/   /' | head -n 3
fi
echo "   each succeeded workload has exactly one result: $(q "SELECT CASE WHEN count(*) = 0 THEN 'yes' ELSE 'NO' END
     FROM demo.workloads w WHERE (SELECT count(*) FROM demo.results r WHERE r.workload_id = w.workload_id)
     <> CASE WHEN w.state = 'SUCCEEDED' THEN 1 ELSE 0 END"); claims still held: $(q "SELECT count(*) FROM demo.workloads WHERE claim_id IS NOT NULL")"

echo
echo "== workload_stats('acme', 'media'), what an operator looks at first:"
q "SELECT '   ' || string_agg(k || ' ' || v, ', ' ORDER BY k) FROM jsonb_each_text(workload_stats('acme', 'media') -> 'states') e(k, v) WHERE v <> '0'"
q "SELECT '   dead letters ' || (s ->> 'dead_letters') || ', completed in the last minute ' || (s ->> 'completed_last_minute')
          || ', failed in the last minute ' || (s ->> 'failed_last_minute') || ', still held ' || (s ->> 'held')
   FROM workload_stats('acme', 'media') s"
echo "== summary per kind of workload"
psql -X -q -P footer=off -c "SELECT coalesce(c.kind, 'total') AS kind,
        count(*) FILTER (WHERE w.state = 'SUCCEEDED') AS succeeded,
        count(*) FILTER (WHERE w.state = 'DEAD_LETTER') AS dead_letter,
        count(*) FILTER (WHERE w.state = 'CANCELLED') AS cancelled,
        count(*) FILTER (WHERE w.state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')) AS other,
        sum(w.attempt_count) AS attempts
    FROM demo.created c JOIN demo.workloads w USING (workload_id)
    GROUP BY ROLLUP (c.kind) ORDER BY c.kind IS NULL, min(c.seq)" | sed '/^$/d; s/^/   /'
q "SELECT '   attempts that did not succeed, by kind: ' || string_agg(k || ' ' || n, ', ' ORDER BY n DESC, k) FROM
   (SELECT lower(coalesce(failure_kind, outcome)) k, count(*) n FROM demo.attempt_log WHERE outcome <> 'SUCCEEDED' GROUP BY 1) s"
q "SELECT '   the 20 urgent renders (created last, priority 10) finished at positions '
          || min(pos) || '..' || max(pos) || ' of ' || (SELECT count(*) FROM demo.results)
   FROM (SELECT c.kind, row_number() OVER (ORDER BY r.created_at) pos
         FROM demo.results r JOIN demo.created c USING (workload_id)) s WHERE kind = 'urgent'"
echo "   total $(elapsed) since the workers started; stopping the cluster"
