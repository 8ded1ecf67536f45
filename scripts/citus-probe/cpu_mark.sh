#!/usr/bin/env bash
# cpu_mark.sh PID 0|1 (run by a_cpu.sh from psql): record (0) or print the difference line (1) of cpu_of.sh + clock.
if [ "$2" = 0 ]; then
  echo "$(bash "$(dirname "$0")/cpu_of.sh" "$1" "${CPU_NODEID:-1}") $(date +%s%N)" > /tmp/cpu0.$1
else
  echo "$(cat /tmp/cpu0.$1) $(bash "$(dirname "$0")/cpu_of.sh" "$1" "${CPU_NODEID:-1}") $(date +%s%N)"
  rm -f /tmp/cpu0.$1
fi
