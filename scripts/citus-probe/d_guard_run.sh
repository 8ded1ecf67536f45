#!/usr/bin/env bash
# d_guard_run.sh: where the statement guard (probe_guard 'strict': refuses unless the
# backend's own API flag is set) fires, and what it decides, for each kind of write.
. "$(dirname "$0")/lib.sh"
AN=$(node_of acme)
SH=$(c -qAt -c "SELECT 'g.workloads_' || get_shard_id_for_distribution_column('g.workloads', 'acme')")
case_() { # label node sql
  local out
  out=$(wl_citus_psql "$2" -qAt -v ON_ERROR_STOP=0 -c "$3" 2>&1 | grep -E 'WARNING|ERROR|^n=|^[0-9]' | sed 's/^psql:[^ ]* //' | tr '\n' ' ')
  printf '%-44s %s\n' "$1" "${out:0:300}"
}
case_ "0 data load, API, delegated" coord "SELECT probe_deleg('acme', \$q\$INSERT INTO g.workloads SELECT \$1, \$1 || '_' || i FROM generate_series(1, 10) i ON CONFLICT DO NOTHING\$q\$, 2)"
case_ "1 API write on coordinator (router)" coord "SELECT probe_run('acme', \$q\$INSERT INTO g.workloads VALUES (\$1, 'api_coord_' || random())\$q\$, 2)"
case_ "2 API write delegated" coord "SELECT probe_deleg('acme', \$q\$INSERT INTO g.workloads VALUES (\$1, 'api_deleg_' || random())\$q\$, 2)"
case_ "3 raw INSERT on coordinator" coord "INSERT INTO g.workloads VALUES ('acme', 'raw_coord')"
case_ "4 raw UPDATE on coordinator, multi-shard" coord "UPDATE g.workloads SET n = n + 1"
case_ "5 raw UPDATE on acme's worker via dist. table" "$AN" "UPDATE g.workloads SET n = n + 1 WHERE tenant_id = 'acme'"
case_ "6 raw UPDATE there directly on the shard" "$AN" "UPDATE $SH SET n = n + 1"
case_ "7 raw INSERT into reference table, coord" coord "INSERT INTO g.keys VALUES ('raw', '\\x00')"
case_ "8 API write to reference table, coord" coord "SELECT probe_run('x', \$q\$INSERT INTO g.keys VALUES (\$1 || random(), '\\x00')\$q\$, 2)"
case_ "9 API write to reference table, delegated" coord "SELECT probe_deleg('acme', \$q\$INSERT INTO g.keys VALUES (\$1 || random(), '\\x00')\$q\$, 2)"
case_ "10 raw TRUNCATE on coordinator" coord "TRUNCATE g.workloads"
case_ "11 raw TRUNCATE of the shard there" "$AN" "TRUNCATE $SH"
case_ "12 raw DELETE on the shard, manual ok" "$AN" "SET citus.enable_manual_changes_to_shards = on; DELETE FROM $SH"
c -qAt -c "SELECT 'rows now: ' || string_agg(workload_id, ',') FROM g.workloads" -c "SELECT 'keys now: ' || count(*) FROM g.keys"
