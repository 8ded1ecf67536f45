#!/usr/bin/env bash
# scripts/dev-pg.sh NAME: a private copy of the installed PostgreSQL 15 (server,
# headers, PGXS) under /opt/wl-pg/NAME, for development only.  PostgreSQL finds
# its files relative to its binaries, so `make install` and the test, demo and
# bench commands run against the copy when PG_CONFIG points at it:
#
#   export PG_CONFIG=$(scripts/dev-pg.sh mine)
#   ./test/run-all.sh
#
# Several checkouts can then build, install and test side by side on one
# machine without overwriting each other's workload.so.  Prints PG_CONFIG.
set -euo pipefail
name=${1:?usage: scripts/dev-pg.sh NAME}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/cluster.sh"
wl_need_root
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config wl_install_deps >&2
dest=/opt/wl-pg/$name
if [ ! -x "$dest/usr/lib/postgresql/15/bin/pg_config" ]; then
	mkdir -p "$dest"
	(cd / && cp -a --parents usr/lib/postgresql/15 usr/share/postgresql/15 usr/include/postgresql "$dest/")
fi
echo "$dest/usr/lib/postgresql/15/bin/pg_config"
