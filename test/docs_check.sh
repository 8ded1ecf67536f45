#!/usr/bin/env bash
# test/docs_check.sh: the documentation against the extension (run by
# test/run-all.sh; alone, against the server in PGHOST/PGPORT as a superuser
# with the extension installed).  Prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/test/tap.sh"
WL_TMP=$(mktemp -d)
trap 'rm -rf "$WL_TMP"' EXIT
export PGUSER=${PGUSER:-postgres}

# The documentation must match the installed extension, run as written and
# speak the present: the error table (README.md, and any other copy) equals
# workload_error_codes(); docs/reference.md gives every API function with its
# exact signature and result, and the docs name no function that does not
# exist; the README's quick start completes its workload on a fresh database;
# every sql block of docs/reference.md and docs/worker.md runs after it with
# exactly the refusals it announces ("-- refused: CODE"), in order; every
# relative link resolves; README.md is at most 15,000 bytes; no stop, issue or
# session number (a development round's, which a user never sees) stands in
# README.md, docs/, CHANGELOG.md, bench/README.md or a comment in src/
# (bench/JOURNAL.md, the development journal, is the one place for them); and
# bench/results/README.md is the index bench/results_index.sh writes; and
# README.md shows each client library example as its tests run it.
docs_sql_blocks() {	# docs_sql_blocks FILE [SECTION]: the ```sql blocks (of one "## " section)
	awk -v sec="${2:-}" '
		BEGIN { insec = (sec == "") }
		!fence && /^## / { insec = (sec == "" || $0 == "## " sec) }
		/^```sql$/ && insec && !fence { code = 1; fence = 1; next }
		/^```/ { if (fence) { fence = 0; code = 0 } else fence = 1; next }
		code' "$1"
}

docs_refusals() {	# docs_refusals OUT: the code of every error psql reported, in order
	awk '/^psql:[^ ]*:[0-9]+: / {
			sub(/^psql:[^ ]*:[0-9]+: /, "")
			if ($0 ~ /^(NOTICE|WARNING|INFO|LOG|DEBUG)/) next
			if ($0 ~ /^ERROR:  /) { sub(/^ERROR:  /, ""); sub(/[^A-Za-z_].*/, "") }
			print
		}' "$1"
}

docs_anchors() {	# docs_anchors FILE: the anchor of every heading, as GitHub makes them
	awk '/^```/ { fence = !fence; next }
		!fence && /^#+ / {
			h = $0; sub(/^#+ +/, "", h); h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
			n = seen[h]++; print (n ? h "-" n : h)
		}' "$1"
}

docs_check() {
	local files=("$WL_ROOT/README.md" "$WL_ROOT"/docs/*.md "$WL_ROOT/CHANGELOG.md"
		"$WL_ROOT/bench/README.md" "$WL_ROOT/bench/results/README.md" "$WL_ROOT/bench/JOURNAL.md"
		"$WL_ROOT/test/reliability/README.md")
	local db=wl_docs_check f name args result missing unknown
	psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1
	psql -X -qAt -d $db -c "CREATE EXTENSION workload CASCADE" >/dev/null 2>&1

	# the error table, wherever a copy of it is
	psql -X -qAt -d $db -c "SELECT code || ' ' || sqlstate FROM workload_error_codes()" \
		| LC_ALL=C sort >"$WL_TMP/codes.db"
	local tables=0 differ=""
	for f in "${files[@]}"; do
		grep -qE '^\| `[A-Z_]+` \| `WL[0-9]{3}`' "$f" || continue
		tables=$((tables + 1))
		grep -oE '^\| `[A-Z_]+` \| `WL[0-9]{3}`' "$f" \
			| sed -E 's/^\| `([A-Z_]+)` \| `(WL[0-9]+)`/\1 \2/' | LC_ALL=C sort >"$WL_TMP/codes.doc"
		diff "$WL_TMP/codes.db" "$WL_TMP/codes.doc" >/dev/null || differ="$differ ${f#$WL_ROOT/}"
	done
	if grep -qE '^\| `[A-Z_]+` \| `WL[0-9]{3}`' "$WL_ROOT/README.md" && [ -z "$differ" ]; then
		ok "the error table in README.md (and in $((tables - 1)) other files) matches workload_error_codes()"
	else
		not_ok "error table missing from README.md or differs from workload_error_codes():$differ"
		note "$(diff "$WL_TMP/codes.db" "$WL_TMP/codes.doc")"
	fi

	# every API function, with its signature and result exactly as \df shows them
	psql -X -qAt -F '|' -d $db -c "SELECT p.proname, pg_get_function_arguments(p.oid),
			pg_get_function_result(p.oid) FROM pg_proc p
			JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
			JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'workload'
			WHERE p.pronamespace <> 'workload'::regnamespace ORDER BY 1" \
		| sed 's/timestamp with time zone/timestamptz/g' >"$WL_TMP/functions"
	missing=""
	while IFS='|' read -r name args result; do
		grep -qF "\`$name($args) → $result\`" "$WL_ROOT/docs/reference.md" || missing="$missing $name"
	done <"$WL_TMP/functions"
	if [ -z "$missing" ]; then
		ok "docs/reference.md gives every API function's signature and result ($(wc -l <"$WL_TMP/functions") functions)"
	else
		not_ok "docs/reference.md lacks the exact signature of:$missing"
	fi
	unknown=""
	for name in $(cat "${files[@]}" | grep -oE '`workload_[a-z_]+\(' | tr -d '`(' | LC_ALL=C sort -u); do
		cut -d'|' -f1 "$WL_TMP/functions" | grep -qx "$name" || unknown="$unknown $name"
	done
	if [ -z "$unknown" ]; then
		ok "the docs call no function the extension lacks"
	else
		not_ok "the docs call functions that do not exist:$unknown"
	fi

	# the README's quick start runs as written on a fresh database and completes its workload
	docs_sql_blocks "$WL_ROOT/README.md" "Quick start" >"$WL_TMP/quick.sql"
	{ cat "$WL_TMP/quick.sql"; echo "SELECT 'quick start: ' || (workload_get(:'workload_id') ->> 'state');"; } \
		>"$WL_TMP/quick-check.sql"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS wl_quick_start" -c "CREATE DATABASE wl_quick_start" >/dev/null 2>&1
	if psql -X -q -v ON_ERROR_STOP=1 -d wl_quick_start -f "$WL_TMP/quick-check.sql" >"$WL_TMP/quick.out" 2>&1 \
		&& grep -q '"outcome": "succeeded"' "$WL_TMP/quick.out" \
		&& grep -q 'quick start: SUCCEEDED' "$WL_TMP/quick.out"; then
		ok "README quick start runs and completes its workload"
	else
		not_ok "README quick start fails:"; note "$(cat "$WL_TMP/quick.out")"
	fi

	# each file's sql blocks run after the quick start with exactly the refusals they announce
	for f in reference worker; do
		docs_sql_blocks "$WL_ROOT/docs/$f.md" >"$WL_TMP/$f.sql"
		cat "$WL_TMP/quick.sql" "$WL_TMP/$f.sql" >"$WL_TMP/$f-all.sql"
		psql -X -q -d postgres -c "DROP DATABASE IF EXISTS wl_docs_$f" -c "CREATE DATABASE wl_docs_$f" >/dev/null 2>&1
		psql -X -q -d wl_docs_$f -f "$WL_TMP/$f-all.sql" >"$WL_TMP/$f.out" 2>&1 || true
		grep -oE -- '-- refused: [A-Z_]+' "$WL_TMP/$f.sql" | awk '{print $3}' >"$WL_TMP/$f.announced"
		docs_refusals "$WL_TMP/$f.out" >"$WL_TMP/$f.raised"
		if [ -s "$WL_TMP/$f.sql" ] && diff "$WL_TMP/$f.announced" "$WL_TMP/$f.raised" >/dev/null; then
			ok "docs/$f.md examples run with the $(wc -l <"$WL_TMP/$f.announced") refusals they announce"
		else
			not_ok "docs/$f.md examples: announced and raised refusals differ"
			note "$(diff "$WL_TMP/$f.announced" "$WL_TMP/$f.raised")"
			note "$(grep -B2 -A3 'ERROR:' "$WL_TMP/$f.out")"
		fi
		psql -X -q -d postgres -c "DROP DATABASE wl_docs_$f" >/dev/null
	done

	# every relative link between the files resolves, anchors included
	local broken="" link target anchor dir
	for f in "${files[@]}"; do
		dir=$(dirname "$f")
		for link in $(awk '/^```/ { fence = !fence; next } !fence { gsub(/`[^`]*`/, ""); print }' "$f" \
				| grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\((.*)\)$/\1/' | grep -vE '^[a-z]+:'); do
			target=${link%%#*}
			anchor=""
			[ "$target" = "$link" ] || anchor=${link#*#}
			if [ -z "$target" ]; then target=$f; else target=$dir/$target; fi
			if [ ! -e "$target" ]; then
				broken="$broken ${f#$WL_ROOT/}:$link"
			elif [ -n "$anchor" ] && ! docs_anchors "$target" | grep -qx -- "$anchor"; then
				broken="$broken ${f#$WL_ROOT/}:$link"
			fi
		done
	done
	if [ -z "$broken" ]; then
		ok "every relative link in the docs resolves"
	else
		not_ok "broken links:$broken"
	fi
	psql -X -qAt -d postgres -c "DROP DATABASE wl_quick_start" -c "DROP DATABASE $db" >/dev/null
}

# docs_present: the checks that need no server (they run first)
docs_present() {
	local size hits
	size=$(wc -c <"$WL_ROOT/README.md")
	if [ "$size" -le 15000 ]; then
		ok "README.md is $size bytes (at most 15,000: the rest lives in docs/)"
	else
		not_ok "README.md is $size bytes, over 15,000: move what a user does not need first to docs/"
	fi

	# a stop, issue or session number: in the documentation's text, and in the
	# comments of src/ (/* ... */ and //, strings left out)
	hits=$( (cd "$WL_ROOT" && grep -nHEi "$DOCS_HISTORY" README.md docs/*.md CHANGELOG.md bench/README.md;
		for f in src/*.[ch] src/worker/*.[ch]; do
			[ -e "$f" ] || continue
			awk -v f="$f" '
				{ line = $0; out = "" }
				{
					while (line != "") {
						if (incom) {
							e = index(line, "*/")
							if (e == 0) { out = out " " line; line = "" } else { out = out " " substr(line, 1, e - 1); line = substr(line, e + 2); incom = 0 }
						} else {
							b = index(line, "/*"); l = index(line, "//"); q = index(line, "\"")
							if (q && (!b || q < b) && (!l || q < l)) { line = substr(line, q + 1); sub(/^([^"\\]|\\.)*"/, "", line); continue }
							if (l && (!b || l < b)) { out = out " " substr(line, l + 2); line = "" }
							else if (b) { line = substr(line, b + 2); incom = 1 }
							else line = ""
						}
					}
					if (out != "") print f ":" FNR ": " out
				}' "$f"
		done | grep -Ei "$DOCS_HISTORY") | cut -c1-160)
	if [ -z "$hits" ]; then
		ok "no stop, issue or session number in README.md, docs/, CHANGELOG.md, bench/README.md or a src/ comment"
	else
		not_ok "stop, issue or session numbers where users read (say what is true now; history is git log and bench/JOURNAL.md)"
		note "$hits"
	fi

	# the client libraries' quick start: README shows each example file, as its tests run it
	local missing="" f
	for f in "$WL_ROOT"/clients/*/examples/*; do
		[ -e "$f" ] || continue
		perl -0777 -e 'open my $r, "<", $ARGV[0] or die; open my $e, "<", $ARGV[1] or die;
			local $/; my ($readme, $ex) = (<$r>, <$e>); exit(index($readme, $ex) >= 0 ? 0 : 1)' \
			"$WL_ROOT/README.md" "$f" || missing="$missing ${f#$WL_ROOT/}"
	done
	if [ -z "$missing" ]; then
		ok "README.md shows every client example (clients/*/examples) as its tests run it"
	else
		not_ok "README.md lacks, or differs from, the client examples:$missing"
	fi

	if bash "$WL_ROOT/bench/results_index.sh" "$WL_TMP/results-index.md" &&
		diff -u "$WL_ROOT/bench/results/README.md" "$WL_TMP/results-index.md" >"$WL_TMP/results-index.diff"; then
		ok "bench/results/README.md indexes every result (bench/results_index.sh)"
	else
		not_ok "bench/results/README.md is not what bench/results_index.sh writes: run it"
		note "$(head -n 20 "$WL_TMP/results-index.diff")"
	fi
}
DOCS_HISTORY='\bstop [0-9]+|\bissue #?[0-9]+|\bsession [0-9]+'
docs_present
docs_check
done_testing
