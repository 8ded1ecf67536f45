#!/usr/bin/env bash
# scripts/regress-one.sh OUTDIR DBNAME test...: run some regress tests against the
# server in PGHOST/PGPORT without touching the repo's results/ (for working on
# tests side by side).  Expected files are read from the repo's expected/.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1; db=$2; shift 2
mkdir -p "$out"
cd "$root"   # tests include test/include/helpers.sql relative to here
ln -sfn "$root/expected" "$out/expected"
pgc=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
exec "$(dirname "$("$pgc" --pgxs)")/../test/regress/pg_regress" --inputdir="$root/test" \
	--outputdir="$out" --bindir="$("$pgc" --bindir)" --load-extension=pgcrypto \
	--load-extension=workload --dbname="$db" "$@"
