#!/usr/bin/env bash
# d_move.sh: move acme's shard group w1 -> w3 (block_writes) -> w1 (force_logical) with
# the guard in place, writing through the API in between; report guard firings.
. "$(dirname "$0")/lib.sh"
for n in coord w1 w2 w3; do : > $WL_CITUS_TMP/$n.log; done
S=$(c -qAt -c "SELECT get_shard_id_for_distribution_column('g.workloads', 'acme')")
AP=$(port_of acme)
c -qAt -c "SELECT 'move block_writes ' || citus_move_shard_placement($S, 'localhost', $AP, 'localhost', $WL_CITUS_W3_PORT, shard_transfer_mode := 'block_writes')" 2>&1 | tail -1
c -qAt -c "SELECT probe_deleg('acme', \$q\$INSERT INTO g.workloads VALUES (\$1, 'on_w3_' || random())\$q\$, 2)" 2>&1 | grep -v WARNING
c -qAt -c "SELECT 'move force_logical ' || citus_move_shard_placement($S, 'localhost', $WL_CITUS_W3_PORT, 'localhost', $AP, shard_transfer_mode := 'force_logical')" 2>&1 | tail -1
c -qAt -c "SELECT 'acme rows ' || count(*) FROM g.workloads WHERE tenant_id = 'acme'"
for n in coord w1 w2 w3; do echo "== $n"; grep -E 'guard fired|denied' $WL_CITUS_TMP/$n.log | sed 's/^.*\(WARNING\|ERROR\): *//; s/gpid=[0-9]*/gpid=N/' | sort | uniq -c; done
