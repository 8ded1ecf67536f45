#!/bin/sh
# test/t/worker_task.sh: the command the workload-worker tests run (not a
# test itself).  The input says what to do: {"do": ..., "ms": ..., "n": ...}.
#   ok       sleep ms, print {"n": n, "attempt": a, "worker": w, "started": t0,
#            "ended": t1} (t0, t1: when it started and ended, Unix seconds)
#   flaky    exit 75 (transient) on attempt 1, then as ok
#   fail     print to stderr, exit 1 (command_failed)
#   timeout  exit 124 (timeout)
#   crash    kill itself with SIGKILL (worker_failure)
#   badjson  print text that is not JSON (invalid_output)
#   sleep    write its pid to $T_DIR/<id>.pid, sleep ms; on SIGTERM write
#            the time to $T_DIR/<id>.term and exit 143
#   steps    checkpoints {"step": k} for k after the last checkpoint, up to 3,
#            with progress; on attempt 1 it crashes after step 2
#   tree     starts a grandchild in its process group and one that leaves
#            it (setsid), writes <id>.pgid, <id>.child and <id>.escaped, and
#            sleeps ms (attempt 1 only; later attempts are as ok)
#   leaves   the same descendants, then prints its output and exits at once
#   env      writes its environment to <id>.env, whether it could read the
#            environment of its guard and of the worker to <id>.proc, and
#            prints {"checkpoint": $WORKLOAD_CHECKPOINT or null,
#            "wake": $WORKLOAD_WAKE or null, "context": $WORKLOAD_CONTEXT}
#   gate     waits until the file $T_DIR/<gate> exists, writes <id>.done,
#            then prints as ok; with "out": "secret" an output with a
#            "password" key, with "out": "nul" one holding "\u0000" (JSON
#            that jsonb refuses)
# Every run first creates <id>.ran.<attempt>.
read -r input
started=$(date +%s.%N)
[ -n "${T_DIR:-}" ] && : >"$T_DIR/$WORKLOAD_ID.ran.$WORKLOAD_ATTEMPT"
field() { printf '%s' "$input" | sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p"; }
what=$(field do)
ms=$(field ms)
n=$(field n)
nap() { sleep "$(awk -v ms="${1:-0}" 'BEGIN { printf "%.3f", ms / 1000 }')"; }
case "$what" in
ok) nap "$ms" ;;
flaky)
	if [ "$WORKLOAD_ATTEMPT" = 1 ]; then echo "flaky: try again" >&2; exit 75; fi
	nap "$ms" ;;
fail) echo "fail: this input is refused" >&2; exit 1 ;;
timeout) exit 124 ;;
crash) kill -9 $$ ;;
badjson) echo "this is not JSON"; exit 0 ;;
sleep)
	echo $$ >"$T_DIR/$WORKLOAD_ID.pid"
	trap 'date +%s.%N >"$T_DIR/$WORKLOAD_ID.term"; exit 143' TERM
	sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.3f", ms / 1000 }')" &
	wait $!
	;;
steps)
	last=$(printf '%s' "${WORKLOAD_CHECKPOINT:-}" | sed -n 's/.*"step": \([0-9]*\).*/\1/p')
	k=${last:-0}
	while [ "$k" -lt 3 ]; do
		k=$((k + 1))
		echo "{\"progress\": {\"done\": $k, \"of\": 3}}" >&3
		echo "{\"step\": $k}" >&3
		nap 100
		if [ "$k" = 2 ] && [ "$WORKLOAD_ATTEMPT" = 1 ]; then kill -9 $$; fi
	done
	printf '{"n": %s, "resumed_after": %s, "attempt": %s}\n' "$n" "${last:-0}" "$WORKLOAD_ATTEMPT"
	exit 0
	;;
tree | leaves)
	if [ "$what" = tree ] && [ "$WORKLOAD_ATTEMPT" != 1 ]; then nap 10; else
		read -r st </proc/$$/stat
		set -- ${st##*) }
		echo "$3" >"$T_DIR/$WORKLOAD_ID.pgid.tmp"
		sleep 60 </dev/null >/dev/null 2>&1 3>&- &
		echo $! >"$T_DIR/$WORKLOAD_ID.child"
		setsid sleep 61 </dev/null >/dev/null 2>&1 3>&- &
		echo $! >"$T_DIR/$WORKLOAD_ID.escaped"
		mv "$T_DIR/$WORKLOAD_ID.pgid.tmp" "$T_DIR/$WORKLOAD_ID.pgid"
		[ "$what" = tree ] && nap "$ms"
	fi
	;;
env)
	env >"$T_DIR/$WORKLOAD_ID.env"
	# up the tree: sh -c, the guard (wlw-guard), the worker
	pid=$$ guard="" worker=""
	while [ "$pid" -gt 1 ] && [ -z "$worker" ]; do
		read -r st </proc/$pid/stat
		comm=${st#*(}; comm=${comm%)*}
		set -- ${st##*) }
		if [ -n "$guard" ]; then worker=$pid; fi
		[ "$comm" = wlw-guard ] && guard=$pid
		pid=$2
	done
	{
		echo "guard=$guard worker=$worker"
		for p in $guard $worker; do
			if cat /proc/$p/environ >/dev/null 2>&1; then echo "readable $p"; else echo "unreadable $p"; fi
		done
	} >"$T_DIR/$WORKLOAD_ID.proc"
	printf '{"checkpoint": %s, "wake": %s, "context": %s}\n' "${WORKLOAD_CHECKPOINT:-null}" \
		"${WORKLOAD_WAKE:-null}" "${WORKLOAD_CONTEXT:-null}"
	exit 0
	;;
gate)
	gate="$T_DIR/$(field gate)"
	while [ ! -e "$gate" ]; do sleep 0.05; done
	: >"$T_DIR/$WORKLOAD_ID.done"
	case "$(field out)" in
	secret) printf '%s\n' '{"password": "hunter2"}'; exit 0 ;;
	nul) printf '%s\n' '{"x": "\u0000"}'; exit 0 ;;
	esac
	;;
*) echo "unknown task: $input" >&2; exit 2 ;;
esac
printf '{"n": %s, "attempt": %s, "worker": "%s", "started": %s, "ended": %s}\n' "${n:-0}" \
	"$WORKLOAD_ATTEMPT" "$WORKLOAD_WORKER_ID" "$started" "$(date +%s.%N)"
