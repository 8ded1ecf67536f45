#!/usr/bin/env bash
# c_sequences.sh: where sequence values are drawn (identity, bigserial, explicit nextval)
# by who runs the INSERT, and a per-tenant event sequence that stays strictly increasing
# whichever node draws it (c_floor.sql): across coordinator and worker draws, across a
# shard move to a node whose identity range is lower, and under concurrent writers.
. "$(dirname "$0")/lib.sh"
c -q -f "$P/c_seq.sql" >/dev/null 2>&1
echo "== 1 where the values come from (acme is on port $(port_of acme); the coordinator is group 0, workers 1 and 2; 2^48 = 281474976710656)"
bash "$P/c_seq_run.sh"
echo "== 2 the floor scheme: node-local sequences, ratcheted above the tenant's highest"
c -q -f "$P/c_floor.sql" >/dev/null 2>&1
c -qAt <<'SQL'
SELECT m.add_event('hooli', 'delegated 1');
SELECT m.add_event('hooli', 'delegated 2');
BEGIN; SELECT m.add_event('hooli', 'coordinator, in a block'); COMMIT;
SELECT m.add_event('hooli', 'delegated 3');
SQL
for i in $(seq 1 50); do echo "SELECT m.add_event('hooli', 'before move');"; done | c -qAt | tail -n 1
HP=$(port_of hooli); HG=$(c -qAt -c "SELECT groupid FROM pg_dist_node WHERE nodeport = $HP")
OP=$(other_worker "$HP"); OG=$(c -qAt -c "SELECT groupid FROM pg_dist_node WHERE nodeport = $OP")
echo "== 3 move hooli's shard group from group $HG (port $HP) to group $OG (port $OP), then insert again"
c -qAt -c "SELECT probe_deleg('hooli', 'INSERT INTO m.ev_ident (tenant_id, how) VALUES (\$1, ''before move'') RETURNING sequence', 1)"
H=$(c -qAt -c "SELECT get_shard_id_for_distribution_column('m.workloads', 'hooli')")
c -qAt -c "SELECT citus_move_shard_placement($H, 'localhost', $HP, 'localhost', $OP, shard_transfer_mode := 'force_logical')" >/dev/null
c -qAt -c "SELECT probe_deleg('hooli', 'INSERT INTO m.ev_ident (tenant_id, how) VALUES (\$1, ''after move'') RETURNING sequence', 1)"
c -qAt -c "SELECT m.add_event('hooli', 'after move')" -c "SELECT m.add_event('hooli', 'after move 2')"
echo "identity column, hooli, in insertion order:"
c -qAt -c "SELECT how, sequence FROM m.ev_ident WHERE tenant_id = 'hooli' AND how LIKE '%move%' ORDER BY ctid" 2>/dev/null || \
  c -qAt -c "SELECT how, sequence FROM m.ev_ident WHERE tenant_id = 'hooli' AND how LIKE '%move%'"
echo "floor scheme, hooli, last four by time:"
c -qAt -c "SELECT how, sequence FROM m.ev_floor WHERE tenant_id = 'hooli' ORDER BY at DESC LIMIT 4"
echo "== 4 four concurrent writers right after the sequence of hooli's node (port $OP) is set back to 1"
psql -X -h "$WL_CITUS_TMP" -p "$OP" -U postgres -qAt -c "SELECT setval('m.node_ev_seq', 1)" >/dev/null
echo "SELECT m.add_event('hooli', 'concurrent');" >bench/floor.sql
pgbench -n -c 4 -T 5 -f bench/floor.sql 2>&1 | grep -E 'processed|failed'
c -qAt -c "SELECT 'events ' || count(*) || ', distinct ' || count(DISTINCT sequence) || ', min ' || min(sequence) || ', max ' || max(sequence) FROM m.ev_floor WHERE tenant_id = 'hooli' AND how = 'concurrent'"
c -qAt -c "SELECT 'concurrent events not above the earlier ones: ' || count(*) FROM m.ev_floor f WHERE tenant_id = 'hooli' AND how = 'concurrent' AND sequence <= (SELECT max(sequence) FROM m.ev_floor WHERE tenant_id = 'hooli' AND how <> 'concurrent')"
echo "== 5 move hooli back to port $HP"
c -qAt -c "SELECT citus_move_shard_placement($H, 'localhost', $OP, 'localhost', $HP, shard_transfer_mode := 'block_writes')" >/dev/null
c -qAt -c "SELECT m.add_event('hooli', 'back')"
