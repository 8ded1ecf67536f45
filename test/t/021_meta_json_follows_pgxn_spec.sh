#!/usr/bin/env bash
# META.json is what PGXN indexes: it follows the PGXN Meta Spec 1.0.0 and
# stays in step with workload.control (its version and the extension's are
# the control file's default_version; pgcrypto and PostgreSQL are runtime
# prerequisites).  The checker (test/packaging/meta_json_check.pl) is shown
# to refuse each kind of drift and breakage, so a pass means something.
# Needs perl (JSON::PP); prints TAP.
set -uo pipefail
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$WL_ROOT/test/packaging/meta_json_check.pl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$WL_ROOT/test/tap.sh"

out=$(perl "$CHECK" "$WL_ROOT/META.json" "$WL_ROOT/workload.control" 2>&1)
if [ $? = 0 ]; then
	ok "META.json follows the PGXN Meta Spec 1.0.0 and matches workload.control"
else
	not_ok "META.json follows the PGXN Meta Spec 1.0.0 and matches workload.control"
	echo "$out" | sed 's/^/# /'
fi

# where to report bugs: the maintainers' address (the project has no public tracker yet)
if perl -MJSON::PP -e 'local $/; my $m = decode_json(<STDIN>); exit !($m->{resources}{bugtracker}{mailto} eq $m->{maintainer} =~ s/.*<(.*)>.*/$1/r)' <"$WL_ROOT/META.json"; then
	ok "META.json names where to report bugs (resources.bugtracker, the maintainers' address)"
else
	not_ok "META.json names where to report bugs (resources.bugtracker, the maintainers' address)"
fi

# refused DESCRIPTION PERL-EXPRESSION [CONTROL-SED]: the checker fails on a
# copy of META.json changed by the expression (on $m, the decoded document),
# or on the real one beside a control file changed by the sed script, and
# names the problem.
refused() {
	local desc=$1 expr=$2 control_sed=${3:-}
	local d="$tmp/case$TAP_N"
	mkdir -p "$d"
	cp "$WL_ROOT/README.md" "$d/"
	sed -e "${control_sed:-}" "$WL_ROOT/workload.control" >"$d/workload.control"
	if [ "$expr" = RAW ]; then
		head -c 200 "$WL_ROOT/META.json" >"$d/META.json"
	else
		perl -MJSON::PP -e 'local $/; my $m = decode_json(<STDIN>); '"$expr"'; print JSON::PP->new->canonical->encode($m);' \
			<"$WL_ROOT/META.json" >"$d/META.json" || { not_ok "$desc (could not build the case)"; return; }
	fi
	local got
	got=$(perl "$CHECK" "$d/META.json" "$d/workload.control" 2>&1)
	if [ $? = 1 ] && [ -n "$got" ]; then
		ok "refused: $desc"
		echo "$got" | sed 's/^/#   /'
	else
		not_ok "refused: $desc (the checker passed it)"
	fi
}

refused "a version the control file does not have" '$m->{version} = "0.0.1"'
refused "an extension version the control file does not have" '$m->{provides}{workload}{version} = "1.0.0"'
refused "a new default_version in workload.control with META.json left behind" '1' "s/^default_version.*/default_version = '99.0'/"
refused "a version that is not semantic (1.1)" '$m->{version} = "1.1"; $m->{provides}{workload}{version} = "1.1"'
refused "no license" 'delete $m->{license}'
refused "an unknown license name" '$m->{license} = "postgres"'
refused "no maintainer" 'delete $m->{maintainer}'
refused "an abstract that is not a string" '$m->{abstract} = ["x"]'
refused "no meta-spec version 1.0.0" '$m->{"meta-spec"}{version} = "2.0.0"'
refused "provides without the file" 'delete $m->{provides}{workload}{file}'
refused "provides naming a file the distribution does not hold" '$m->{provides}{workload}{file} = "sql/workload.sql"'
refused "pgcrypto missing from the runtime prerequisites" 'delete $m->{prereqs}{runtime}{requires}{pgcrypto}'
refused "a prerequisite version that is not a range" '$m->{prereqs}{runtime}{requires}{PostgreSQL} = "15"'
refused "a tag with a slash" 'push @{$m->{tags}}, "a/b"'
refused "an unknown top-level key" '$m->{homepage} = "https://example.invalid/"'
refused "resources with an unknown kind" '$m->{resources}{forum} = {web => "https://example.invalid/"}'
refused "a bug tracker that is not an object" '$m->{resources}{bugtracker} = "maintainers"'
refused "a file that is not JSON" RAW

done_testing
