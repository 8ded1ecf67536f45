#!/bin/sh
# demo/task.sh: the command the demo's workload-workers run, one per workload.
# It reads the input JSON on stdin, e.g. {"n": 17, "ms": 230, "kind": "render"},
# and behaves by kind:
#   render, urgent, publish, report   work for ms, print the result JSON on stdout
#   encode           four steps; a checkpoint ({"step": k}) and a progress
#                    line on fd 3 after each; resumes after $WORKLOAD_CHECKPOINT
#   upload           storage is "busy" on the first attempt: exit 75 (retried)
#   corrupt          exit 1 with a message on stderr (not retried)
#   poison           kills itself with SIGKILL on every attempt (retried, then dead)
#   legacy           prints text that is not JSON (invalid_output)
#   archive          runs for ms (long); the demo cancels it
read -r input
field() { printf '%s' "$input" | sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p"; }
kind=$(field kind)
n=$(field n)
ms=$(field ms)
nap() { sleep "$(awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }')"; }

case "$kind" in
render | urgent | publish | report)
	nap "$ms"
	printf '{"kind": "%s", "n": %s, "by": "%s"}\n' "$kind" "$n" "$WORKLOAD_WORKER_ID"
	;;
encode)
	last=$(printf '%s' "${WORKLOAD_CHECKPOINT:-}" | sed -n 's/.*"step": \([0-9]*\).*/\1/p')
	step=${last:-0}
	while [ "$step" -lt 4 ]; do
		nap "$ms"
		step=$((step + 1))
		echo "{\"step\": $step}" >&3
		echo "{\"progress\": {\"steps_done\": $step, \"of\": 4}}" >&3
	done
	printf '{"kind": "encode", "n": %s, "resumed_after_step": %s, "by": "%s"}\n' \
		"$n" "${last:-0}" "$WORKLOAD_WORKER_ID"
	;;
upload)
	if [ "$WORKLOAD_ATTEMPT" = 1 ]; then
		echo "upload $n: storage busy, try again later" >&2
		exit 75
	fi
	nap "$ms"
	printf '{"kind": "upload", "n": %s, "attempt": %s}\n' "$n" "$WORKLOAD_ATTEMPT"
	;;
corrupt)
	echo "corrupt $n: input frame is damaged" >&2
	exit 1
	;;
poison)
	kill -9 $$
	;;
legacy)
	echo "OK"
	;;
archive)
	nap "$ms"
	echo '{"kind": "archive"}'
	;;
*)
	echo "unknown kind in $input" >&2
	exit 2
	;;
esac
