#!/usr/bin/env bash
# b_crash.sh: a distributed function called with its argument taken from a one-row
# subquery in FROM crashes the coordinator backend (signal 11 in Citus's
# TryToDelegateFunctionCall -> deparse -> AcquireRewriteLocks), and the postmaster
# then restarts every backend of the coordinator.  Any role allowed to EXECUTE a
# distributed function can do it.  A two-row VALUES list does not crash.
. "$(dirname "$0")/lib.sh"
crashes() { grep -c 'terminated by signal 11' "$WL_CITUS_TMP/coord.log"; }
for q in "SELECT probe_deleg(t, 'SELECT 1', 1) FROM (VALUES ('acme'), ('hooli')) v(t)" \
         "SELECT probe_deleg(t, 'SELECT 1', 1) FROM (SELECT 'acme'::text) v(t)" \
         "SELECT probe_deleg(t, 'SELECT 1', 1) FROM (VALUES ('acme'::text)) v(t)" \
         "SELECT probe_run(t, 'SELECT 1', 1) FROM (VALUES ('acme'::text)) v(t)"; do
  before=$(crashes)
  out=$(c -qAt -v ON_ERROR_STOP=0 -c "$q" 2>&1 | tail -n 1)
  for i in $(seq 1 50); do c -qAt -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
  echo "$q"
  echo "   -> ${out:0:70}; coordinator crashes: $(($(crashes) - before))"
done
grep -A1 'terminated by signal 11' "$WL_CITUS_TMP/coord.log" | head -n 2 | cut -c1-200
