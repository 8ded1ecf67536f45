#!/usr/bin/env bash
# a_cpu.sh FILE.sql [N]: server CPU per call (the caller's backend + the backends Citus opened for it),
# and wall time, for N calls of the one statement in FILE.sql in one session.
. "$(dirname "$0")/lib.sh"
f=$1; N=${2:-2000}
{
  echo "\\o /dev/null"
  cat "$f"; cat "$f"
  echo "\\o"
  echo "SELECT pg_backend_pid() AS bpid \\gset"
  echo "\\setenv BPID :bpid"
  echo "\\! CPU_NODEID=${CPU_NODEID:-1} bash $P/cpu_mark.sh \$BPID 0"
  echo "\\o /dev/null"
  for i in $(seq 1 "$N"); do cat "$f"; done
  echo "\\o"
  echo "\\! CPU_NODEID=${CPU_NODEID:-1} bash $P/cpu_mark.sh \$BPID 1"
} | wl_citus_psql "${A_NODE:-coord}" -qAt 2>&1 | awk -v N="$N" -v f="$(basename "$f" .sql)" 'NF==6 {
   printf "%-24s cpu/call %.3f ms  wall/call %.3f ms  backends %d\n", f, ($4-$1)/N, ($6-$3)/1e6/N, $5 }'
