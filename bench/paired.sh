#!/usr/bin/env bash
# bench/paired.sh RESULTS.md...: the batched variants against pg-boss and
# Graphile Worker round by round, from the "every measurement" tables of
# anchors results files (bench/run.sh anchors writes them; one file or many,
# pooled).  A round of anchors runs every variant at each client count one
# after another, so the machine's state in that minute falls on both rates of
# a pair; the medians of a run's summary table compare rounds that ran minutes
# apart.  For each client count, (c) and (c100) against each of the others:
# the median of the per-round ratios (ours / theirs), their range, and in how
# many rounds ours ran at least as fast.  Prints a Markdown table; rows whose
# measurement carried a flag are left out (and counted).  bench/anchors.sh
# runs it on the file it has just written.  Needs only awk and sort.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bench/paired.sh RESULTS.md..." >&2; exit 2; }
awk -F '|' '
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	FNR == 1 { table = 0 }
	/^\| round \| clients \| variant \|/ { table = 1; next }
	table && !/^\|/ { table = 0 }
	table {
		r = trim($2); n = trim($3); v = trim($4); rate = trim($7); flags = trim($(NF - 1))
		if (r !~ /^[0-9]+$/) next
		key = FILENAME SUBSEP r SUBSEP n
		if (flags != "-" && flags != "") { flagged[key, v] = 1; nflagged++ }
		rates[key, v] = rate; keys[key] = n
	}
	END {
		split("c c100", ours, " "); split("pgboss graphile", theirs, " ")
		name["pgboss"] = "pg-boss"; name["graphile"] = "Graphile Worker"
		for (key in keys) for (i in ours) for (j in theirs) {
			o = ours[i]; t = theirs[j]
			if (!((key, o) in rates) || !((key, t) in rates) || rates[key, t] == 0) continue
			if ((key, o) in flagged || (key, t) in flagged) continue
			printf "%s\t(%s)\t%s\t%.4f\n", keys[key], o, name[t], rates[key, o] / rates[key, t]
		}
		if (nflagged) printf "#\t%d flagged measurements left out\n", nflagged
	}' "$@" | sort -t "$(printf '\t')" -k1,1n -k2,2 -k3,3 -k4,4g | awk -F '\t' '
	function flush(   m) {
		if (cnt == 0) return
		m = (cnt % 2) ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
		printf "| %s | %s | %s | %.2f | %.2f–%.2f | %d of %d |\n", pn, po, pt, m, v[1], v[cnt], ahead, cnt
		cnt = 0; ahead = 0
	}
	BEGIN {
		print "| clients | ours | theirs | ratio, median of rounds | min–max | rounds ours ≥ theirs |"
		print "|---:|---|---|---:|---:|---:|"
	}
	$1 == "#" { note = $2; next }
	{
		if ($1 != pn || $2 != po || $3 != pt) { flush(); pn = $1; po = $2; pt = $3 }
		v[++cnt] = $4; if ($4 >= 1) ahead++
	}
	END {
		flush()
		if (NR == 0 || (NR == 1 && note != "")) print "| – | – | – | – | – | no round without a flag ran a batched variant next to pg-boss or Graphile Worker |"
		if (note != "") print "\n" note
	}'
