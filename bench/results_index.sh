#!/usr/bin/env bash
# bench/results_index.sh [OUT]: writes the index of bench/results/ (default
# bench/results/README.md): for each measurement its newest result first, then
# every result of each measurement, newest first, with the commit and the
# command its header names.  A result is named YYYY-MM-DD-<measurement>[-<variant>][-N].md
# (N: the Nth of that name that day); its measurement is the longest name of
# MEASUREMENTS below that its name starts with.  test/docs_check.sh checks that
# the committed index is what this writes.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$WL_ROOT/bench/results"
OUT=${1:-$DIR/README.md}

# measurement|the command that measures it (bench/README.md says how to run each)
MEASUREMENTS="compare|bench/run.sh compare
anchors|bench/run.sh anchors
scale|bench/run.sh scale
snapshot|bench/run.sh snapshot
latency|bench/run.sh latency
memory|bench/run.sh memory
profile|bench/run.sh profile
all|bench/run.sh all
cpu|bench/cpu_cost.sh
cpu-wal|bench/cpu_cost.sh
wal|bench/wal_per_relation.sh
scale-wal|bench/scale_wal.sh
create-many|bench/create_many.sh
blocked-dependents|bench/blocked_dependents.sh
drained-queue|bench/drained_queue.sh
wait-profile|bench/wait_profile.sh
queue-walk|bench/queue_walk.sh
held-scan|bench/held_scan.sh
tick|bench/tick_cost.sh
citus-cycle|bench/citus_cycle.sh
citus-scale|bench/citus_scale.sh
spec-reads|ad hoc: the file says how
spec-width|ad hoc: the file says how
claim-new-store|ad hoc: the file says how
layout-model|ad hoc: the file says how
runs-spike|ad hoc: the file says how
run-rows|ad hoc: the file says how"

# measurement NAME: the measurement of a result's name (date and .md removed)
measurement() {
	local name=$1 best="" m
	while IFS='|' read -r m _; do
		if [ "$name" = "$m" ] || [[ "$name" == "$m-"* ]]; then
			[ ${#m} -gt ${#best} ] && best=$m
		fi
	done <<<"$MEASUREMENTS"
	echo "${best:-other}"
}

# one line per result: sort key|measurement|file|commit|command.  From each
# file's first 30 lines: "- date:" (else the name's date), the first commit id
# (7 to 40 hex digits, not in the title), "- command: ..." (else the first
# `bench/<script>.sh ...` in backquotes or opening a line).
rows() {
	local when seq name file commit cmd
	awk 'FNR == 1 { if (NR > 1) out(); f = FILENAME; sub(/.*\//, "", f); when = ""; commit = ""; cmd = ""; cmd2 = "" }
		FNR > 30 { next }
		FNR > 1 && commit == "" {
			s = $0
			while (match(s, /[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+/)) {
				w = substr(s, RSTART, RLENGTH); pre = substr(s, RSTART - 1, 1); post = substr(s, RSTART + RLENGTH, 1)
				s = substr(s, RSTART + RLENGTH)
				if (length(w) > 40 || w !~ /[a-f]/ || w !~ /[0-9]/ || pre ~ /[0-9A-Za-z_-]/ || post ~ /[0-9A-Za-z_-]/) continue
				commit = substr(w, 1, 7); break
			}
		}
		when == "" && /^- date: [0-9-]+ [0-9:]+/ { when = $3 " " $4 }
		cmd == "" && /^- command: / { c = $0; sub(/^- command: /, "", c); if (c ~ /^`/) { sub(/^`/, "", c); sub(/`.*/, "", c) }; cmd = c }
		cmd2 == "" && match($0, /`bench\/[a-z_]+\.sh[^`]*`/) { cmd2 = substr($0, RSTART + 1, RLENGTH - 2) }
		cmd2 == "" && /^bench\/[a-z_]+\.sh( |$)/ { cmd2 = $0 }
		function out() {
			print (when == "" ? substr(f, 1, 10) " 00:00:00" : when) "|" f "|" (commit == "" ? "not recorded" : commit) "|" \
				(cmd != "" ? cmd : (cmd2 != "" ? cmd2 : "see the file"))
		}
		END { out() }' "$DIR"/[0-9][0-9][0-9][0-9]-*.md |
		while IFS='|' read -r when file commit cmd; do
			name=${file:11}
			name=${name%.md}
			seq=${name##*-}
			[[ "$seq" =~ ^[0-9]$ ]] || seq=1
			printf '%s %s|%s|%s|%s|%s\n' "$when" "$seq" "$(measurement "$name")" "$file" "$commit" "$cmd"
		done | sort -r
}

{
	cat <<'EOF'
# Benchmark results

One file per run, named `YYYY-MM-DD-<measurement>[-<variant>][-N].md` (N: the Nth
result of that name that day). Each file's header names the command that made it and
the commit it measured; [bench/README.md](../README.md) says what each measurement
measures and how to run it. A figure is valid only with its file: compare figures from
one machine and one run. A command's `--name` is the name the run gave its file; files
made before this scheme were renamed to it (`git log --follow` shows each one's history).
This index is written by `bench/results_index.sh`, and the test command checks it is
current.

## The newest result of each measurement

| measurement | newest | commit | command |
|---|---|---|---|
EOF
	rows >"${TMPDIR:-/tmp}/wl-results-index.$$"
	while IFS='|' read -r m _; do
		line=$(grep -F "|$m|" "${TMPDIR:-/tmp}/wl-results-index.$$" | head -n 1 || true)
		[ -n "$line" ] || continue
		IFS='|' read -r _ _ file commit cmd <<<"$line"
		printf '| %s | [%s](%s) | `%s` | `%s` |\n' "$m" "$file" "$file" "$commit" "${cmd//|/\\|}"
	done <<<"$MEASUREMENTS"
	echo
	echo "## Every result, newest first"
	while IFS='|' read -r m how; do
		grep -qF "|$m|" "${TMPDIR:-/tmp}/wl-results-index.$$" || continue
		echo
		echo "### $m ($how)"
		echo
		grep -F "|$m|" "${TMPDIR:-/tmp}/wl-results-index.$$" | while IFS='|' read -r _ _ file commit cmd; do
			printf -- '- [%s](%s): `%s`, `%s`\n' "$file" "$file" "$commit" "$cmd"
		done
	done <<<"$MEASUREMENTS"
	rm -f "${TMPDIR:-/tmp}/wl-results-index.$$"
} >"$OUT"
