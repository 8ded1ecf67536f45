#!/usr/bin/env bash
# cpu_of.sh PID [NODEID]: CPU ms (utime+stime) of a coordinator backend plus the worker
# backends Citus opened for it (application_name citus_internal gpid=<NODEID><pid>) on any node.
. "$(dirname "$0")/lib.sh"
pids="$1"
for n in coord w1 w2; do
  pids="$pids $(wl_citus_psql $n -qAt -c "select pid from pg_stat_activity where application_name = 'citus_internal gpid=' || (${2:-1}::bigint * 10000000000 + $1)::text" | tr '\n' ' ')"
done
hz=$(getconf CLK_TCK); t=0
for p in $pids; do
  read -r ut st < <(awk '{print $14, $15}' /proc/$p/stat)
  t=$((t + ut + st))
done
echo "$((t * 1000 / hz)) $(echo $pids | wc -w)"
