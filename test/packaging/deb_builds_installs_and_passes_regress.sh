#!/usr/bin/env bash
# The Debian package, as a packager and then a DBA meet it: from a copy of the
# source and an orig tarball, `dpkg-buildpackage -us -uc` builds
# postgresql-15-workload with pg_buildext (its own build-time tests included);
# the .deb installs on this machine into the system PostgreSQL 15
# (/usr/lib/postgresql/15), puts workload-worker on the PATH and the docs in
# /usr/share/doc; the installed extension passes its regress suite and
# isolation specs (debian/tests/installcheck: `pg_buildext installcheck`, i.e.
# `make installcheck` on a throwaway cluster against the installed files);
# then the package is purged.
#
# The system tree may already hold a `make install` of the extension (the test
# command installs there when PG_CONFIG is not set): every file the package
# would overwrite is saved first and put back after the purge, so the machine
# is left as it was.  Run as root; prints TAP.
set -uo pipefail
# the system PostgreSQL, on clusters of pg_virtualenv's own: nothing from a
# caller's cluster (test/run-all.sh exports its port) may leak in
unset PG_CONFIG PGHOST PGPORT PGUSER PGDATABASE PGDATA PGSERVICE
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PKG=postgresql-15-workload
SYS=/usr/lib/postgresql/15

. "$WL_ROOT/test/tap.sh"
finish() {
	done_testing
	exit
}

if [ "$(id -u)" != 0 ]; then
	echo "run this as root (it installs packages)" >&2
	exit 1
fi

# what a fresh Debian 12 machine lacks to build and install the package
missing=""
for p in build-essential debhelper dpkg-dev postgresql-15 postgresql-server-dev-15 \
	postgresql-server-dev-all libpq-dev make git; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	note "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq $missing >/dev/null
fi

tmp=$(mktemp -d /tmp/workload-deb.XXXXXX)
chmod 755 "$tmp"   # the test clusters run as postgres and read the built files here
backup="$tmp/backup"
restored=0
# restore puts back what a `make install` had left in the system tree
restore() {
	[ "$restored" = 1 ] && return
	restored=1
	if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "ok installed"; then
		dpkg --purge "$PKG" >/dev/null 2>&1
	fi
	if [ -d "$backup" ]; then
		(cd "$backup" && find . ! -type d -printf '%P\n') | while read -r f; do
			mkdir -p "/$(dirname "$f")" && cp -a "$backup/$f" "/$f"
		done
	fi
}
trap 'restore; rm -rf "$tmp"' EXIT

version=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$WL_ROOT/workload.control")
deb_version=$(dpkg-parsechangelog -l "$WL_ROOT/debian/changelog" -S Version)
check "debian/changelog's upstream version ($deb_version) is workload.control's default_version ($version)" \
	test "${deb_version%-*}" = "$version"

# debian/control is generated from control.in (pg_buildext checkcontrol fails
# when it is stale)
check "debian/control is what pg_buildext generates from debian/control.in" \
	sh -c "cd '$WL_ROOT' && pg_buildext checkcontrol >/dev/null"

# the source as a tarball would carry it: tracked files and new ones, nothing
# ignored (no objects, no results)
src="$tmp/workload-$version"
mkdir -p "$src"
if git -C "$WL_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$WL_ROOT" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$src"
else
	(cd "$WL_ROOT" && tar --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=results \
		--exclude=output_iso --exclude=src/worker/workload-worker -cf - .) | tar -xf - -C "$src"
fi
(cd "$tmp" && tar czf "workload_$version.orig.tar.gz" --exclude="workload-$version/debian" "workload-$version")

note "dpkg-buildpackage -us -uc (build, install into debian/, build-time installcheck)"
(cd "$src" && dpkg-buildpackage -us -uc) >"$tmp/build.log" 2>&1
rc=$?
deb="$tmp/${PKG}_${deb_version}_$(dpkg --print-architecture).deb"
if [ "$rc" = 0 ] && [ -f "$deb" ] && [ -f "$tmp/workload_$deb_version.dsc" ]; then
	ok "dpkg-buildpackage -us -uc builds the source package and $PKG"
else
	not_ok "dpkg-buildpackage -us -uc builds the source package and $PKG (exit $rc)"
	tail -n 40 "$tmp/build.log" | sed 's/^/# /'
	finish
fi
check "the build ran the regress suite and the isolation specs against the built files" \
	test "$(grep -cE '^ All [0-9]+ tests passed' "$tmp/build.log")" = 2

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/contents"
lacks=""
for f in $SYS/lib/workload.so /usr/share/postgresql/15/extension/workload.control \
	/usr/share/postgresql/15/extension/workload--1.0.sql $SYS/bin/workload-worker \
	/usr/bin/workload-worker /usr/share/doc/$PKG/README.md.gz /usr/share/doc/$PKG/copyright; do
	grep -qxF "$f" "$tmp/contents" || lacks="$lacks $f"
done
for f in "$WL_ROOT"/sql/workload--*.sql; do
	grep -qxF "/usr/share/postgresql/15/extension/$(basename "$f")" "$tmp/contents" || lacks="$lacks $f"
done
check "the package holds the library, the control file, every SQL script, the worker and the docs" \
	test -z "$lacks"
[ -z "$lacks" ] || note "missing:$lacks"

# save what the package will overwrite (a `make install` leaves unowned files)
mkdir -p "$backup"
saved=0
while read -r f; do
	[ -n "$f" ] && [ ! -d "$f" ] && [ -e "$f" -o -L "$f" ] || continue
	mkdir -p "$backup$(dirname "$f")" && cp -a "$f" "$backup$f" && saved=$((saved + 1))
done <"$tmp/contents"
note "saved $saved file(s) of an earlier installation"

export DEBIAN_FRONTEND=noninteractive
if apt-get install -y -qq "$deb" >"$tmp/install.log" 2>&1; then
	ok "the .deb installs (apt-get install ./${PKG}_${deb_version}_*.deb)"
else
	not_ok "the .deb installs"
	sed 's/^/# /' "$tmp/install.log" | tail -n 20
	finish
fi
check "the installed files are the package's (dpkg --verify finds no difference)" \
	test -z "$(dpkg --verify "$PKG" 2>&1)"
check "dpkg knows workload.so as the package's" \
	sh -c "dpkg -S $SYS/lib/workload.so | grep -q '^$PKG:'"
check "workload-worker is on the PATH (/usr/bin) and runs" \
	sh -c 'test "$(command -v workload-worker)" = /usr/bin/workload-worker && workload-worker --help | grep -q -- --dsn'
check "the README is installed in /usr/share/doc/$PKG" test -s "/usr/share/doc/$PKG/README.md.gz"

# the installed extension's own suite, as Debian's autopkgtest runs it
cp -a "$src" "$tmp/check"
rm -rf "$tmp/check/debian/$PKG"
if (cd "$tmp/check" && debian/tests/installcheck) >"$tmp/installcheck.log" 2>&1; then
	ok "the installed package passes make installcheck (debian/tests/installcheck)"
else
	not_ok "the installed package passes make installcheck (debian/tests/installcheck)"
	grep -E 'FAILED|failed|ERROR|error' "$tmp/installcheck.log" | head -n 40 | sed 's/^/# /'
fi
grep -E '^ All [0-9]+ tests passed' "$tmp/installcheck.log" | sed 's/^/#/'
check "it ran the regress suite and the isolation specs" \
	test "$(grep -cE '^ All [0-9]+ tests passed' "$tmp/installcheck.log")" = 2

if apt-get purge -y -qq "$PKG" >"$tmp/purge.log" 2>&1; then
	ok "the package is purged"
else
	not_ok "the package is purged"; sed 's/^/# /' "$tmp/purge.log" | tail -n 10
fi
check "its files are gone (library, worker, control file)" \
	test ! -e $SYS/lib/workload.so -a ! -e /usr/bin/workload-worker -a ! -e /usr/share/postgresql/15/extension/workload.control

restore
same=1
while read -r f; do
	[ -n "$f" ] && [ ! -d "$backup$f" ] && { [ -e "$backup$f" ] || [ -L "$backup$f" ]; } || continue
	if [ -L "$backup$f" ]; then
		[ "$(readlink "$backup$f")" = "$(readlink "$f")" ] || same=0
	else
		cmp -s "$backup$f" "$f" || same=0
	fi
done <"$tmp/contents"
check "the $saved file(s) of the earlier installation are back as they were" test "$same" = 1
# the tests after this one run clusters as the postgres OS user: the system
# tree must still be readable to it (directories the package shares with the
# server keep their modes)
check "the postgres OS user can still read the server's library directory" \
	runuser -u postgres -- test -r /usr/lib/postgresql/15/lib/plpgsql.so
finish
