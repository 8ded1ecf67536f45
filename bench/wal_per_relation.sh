#!/usr/bin/env bash
# bench/wal_per_relation.sh SCRIPT [CLIENTS] [TRANSACTIONS] [PRELOAD]: where one
# job's WAL goes, relation by relation and record by record.
#
# Runs against a running cluster of yours (PGHOST/PGPORT/PGUSER as for psql,
# PG_CONFIG naming its PostgreSQL, WL_DATA its data directory, readable by
# this user), with the extension installed: builds a template database
# (wal_tpl: PRELOAD workloads of tenant acme, application bench, from
# bench/sql/setup.sql, plus the bare queue's rows), then on a fresh clone takes
# a CHECKPOINT, runs `pgbench -M prepared -c CLIENTS -t TRANSACTIONS -f SCRIPT`
# and reads the WAL it wrote with pg_waldump.  Prints bytes, full-page images
# and records per job (jobs = rows added to workload.results, or to the bare
# queue's 'done' rows for bench/scripts/a_*.pgbench).  For bench/scripts/m_*.pgbench,
# a model of a layout (bench/sql/layout_model.sql) is built on the copy first,
# and jobs are the rows added to model.res.
set -euo pipefail
script=${1:?usage: bench/wal_per_relation.sh SCRIPT [CLIENTS] [TRANSACTIONS] [PRELOAD]}
clients=${2:-16} txns=${3:-300} preload=${4:-20000}
BENCH=$(cd "$(dirname "$0")" && pwd)
bin=$(dirname "${PG_CONFIG:?set PG_CONFIG}")
: "${WL_DATA:?set WL_DATA to the data directory of the cluster}"
psql=(psql -qXAt -v ON_ERROR_STOP=1)
# WAL_FIFO=1: every row of both stores at priority 0 (a FIFO queue: the claims
# walk the tables in the order they were written) instead of priorities
# cycling 0..3 (the claims touch every page from the start)
# WAL_TIMEOUTS=1: every workload with a claim timeout (60 s) and an execution
# timeout (10 min), priorities cycling (the bare queue's rows as usual)
tpl=wal_tpl
[ "${WAL_FIFO:-0}" = 1 ] && tpl=wal_tpl_fifo
[ "${WAL_TIMEOUTS:-0}" = 1 ] && tpl=wal_tpl_timeouts
if [ "$("${psql[@]}" -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$tpl'")" = 0 ]; then
	"${psql[@]}" -d postgres -c "CREATE DATABASE $tpl"
	if [ "$tpl" = wal_tpl ]; then
		"${psql[@]}" -d $tpl -c "CREATE EXTENSION workload CASCADE" -f "$BENCH/sql/setup.sql" \
			-c "SELECT bench.create_range('acme', 'bench', 1, $preload)" -c "SELECT bench.q_fill(1, $preload)" >/dev/null
	elif [ "$tpl" = wal_tpl_timeouts ]; then
		"${psql[@]}" -d $tpl -c "CREATE EXTENSION workload CASCADE" -f "$BENCH/sql/setup.sql" \
			-c "SELECT count(workload_create(bench.spec('bench-' || i, 'acme', 'bench', (i % 4)::int)
			        || jsonb_build_object('timeouts', jsonb_build_object('claim_ms', 60000, 'execution_ms', 600000))))
			    FROM generate_series(1, $preload) i" -c "SELECT bench.q_fill(1, $preload)" >/dev/null
	else
		"${psql[@]}" -d $tpl -c "CREATE EXTENSION workload CASCADE" -f "$BENCH/sql/setup.sql" \
			-c "SELECT count(workload_create(bench.spec('bench-' || i, 'acme', 'bench', 0))) FROM generate_series(1, $preload) i" \
			-c "INSERT INTO bench.q (id, priority, state, payload) SELECT i, 0, 'ready', jsonb_build_object('n', i) FROM generate_series(1, $preload) i" >/dev/null
	fi
fi
"${psql[@]}" -d postgres -c "DROP DATABASE IF EXISTS wal_run" -c "CREATE DATABASE wal_run TEMPLATE $tpl STRATEGY file_copy"
case "$(basename "$script")" in
	m_*) "${psql[@]}" -d wal_run -f "$BENCH/sql/layout_model.sql" >/dev/null ;;
esac
"${psql[@]}" -d wal_run -c "VACUUM ANALYZE"
case "$(basename "$script")" in
	a_*) count="SELECT count(*) FROM bench.q WHERE state = 'done'" ;;
	m_*) count="SELECT count(*) FROM model.res" ;;
	*) count="SELECT count(*) FROM workload.results" ;;
esac
"${psql[@]}" -d postgres -c CHECKPOINT
l0=$("${psql[@]}" -d postgres -c "SELECT pg_current_wal_insert_lsn()")
j0=$("${psql[@]}" -d wal_run -c "$count")
"$bin/pgbench" -n -M prepared -c "$clients" -j 2 -t "$txns" -f "$script" wal_run >/dev/null
l1=$("${psql[@]}" -d postgres -c "SELECT pg_current_wal_insert_lsn()")
j1=$("${psql[@]}" -d wal_run -c "$count")
jobs=$((j1 - j0))
rels=$(mktemp); dump=$(mktemp); trap 'rm -f "$rels" "$dump"' EXIT
"${psql[@]}" -d wal_run -c "SELECT pg_relation_filenode(oid) || ' ' || relname FROM pg_class WHERE relkind IN ('r', 'i', 't', 'S')" >"$rels"
"$bin/pg_waldump" -p "$WL_DATA/pg_wal" -s "$l0" -e "$l1" >"$dump" 2>/dev/null || true
echo "$(basename "$script"), $clients clients x $txns transactions: $jobs jobs"
awk -v jobs="$jobs" 'NR == FNR { name[$1] = $2; next }
	{
		len = 0
		if (match($0, /len \(rec\/tot\): *[0-9]+\/ *[0-9]+/)) { s = substr($0, RSTART, RLENGTH); sub(/.*\/ */, "", s); len = s + 0 }
		rm = $0; sub(/^rmgr: */, "", rm); sub(/ .*/, "", rm)
		desc = ""; if (match($0, /desc: [A-Z_+0-9]+/)) desc = substr($0, RSTART + 6, RLENGTH - 6)
		rel = "-"; if (match($0, /rel [0-9]+\/[0-9]+\/[0-9]+/)) { split(substr($0, RSTART + 4, RLENGTH - 4), p, "/"); rel = (p[3] in name) ? name[p[3]] : p[3] }
		fpw = gsub(/FPW/, "FPW")
		bytes[rel] += len; fpi[rel] += fpw; recs[rel]++; tot += len; tf += fpw
		k = rel " " rm " " desc; b2[k] += len; f2[k] += fpw; n2[k]++
	}
	END {
		printf "total: %.0f WAL bytes, %.3f full-page images per job\n\n", tot / jobs, tf / jobs
		print "| relation | bytes/job | FPI/job | records/job |"; print "|---|---:|---:|---:|"
		for (k in bytes) if (bytes[k] / jobs >= 5) printf "| %s | %.0f | %.3f | %.2f |\n", k, bytes[k] / jobs, fpi[k] / jobs, recs[k] / jobs | "sort -t\"|\" -k3 -nr"
		close("sort -t\"|\" -k3 -nr")
		print ""; print "| relation, record | bytes/job | FPI/job | records/job |"; print "|---|---:|---:|---:|"
		for (k in b2) if (b2[k] / jobs >= 20) printf "| %s | %.0f | %.3f | %.2f |\n", k, b2[k] / jobs, f2[k] / jobs, n2[k] / jobs | "sort -t\"|\" -k3 -nr"
	}' "$rels" "$dump"
