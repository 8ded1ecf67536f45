#!/usr/bin/env bash
# The C module is built in layers (CONVENTIONS section 1; README,
# "Development"): base -> rules -> storage -> domain -> SQL entry points.
# Each file includes only headers of its own layer or a lower one, so no
# call can climb back up and no file sits in a loop with another.  This
# test holds every #include "..." in src/ and src/worker/ to the map below;
# a new file must be given its layer here.  Prints TAP.
set -u
WL_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$WL_ROOT/test/tap.sh"

# layer NAME: the layer of a file (by its name without .c/.h), or empty
declare -A LAYER=(
	# src/: 0 base, 1 rules (no SPI), 2 storage, 3 domain, 4 SQL entry points
	[compat]=0 [errors]=0 [clock]=0 [guc]=0 [crypto]=0 [jsonb_util]=0
	[row]=1 [states]=1 [deadline]=1 [payload]=1 [spec]=1 [args]=1 [cron]=1
	[catalog]=2 [store_sql]=2 [store]=2 [store_complete]=2 [store_ops]=2 [store_rows]=2 [store_create]=2 [store_claim]=2 [store_parts]=2 [store_direct]=2 [store_claim_direct]=2 [store_tuple]=2 [store_row]=2 [store_fenced]=2 [store_runs]=2 [store_meta]=2 [store_bulk]=2 [store_citus]=2 [store_citus_claim]=2 [store_citus_maint]=2 [store_shard]=2 [store_scope]=2 [store_memo]=2
	[authz]=3 [grants]=3 [keys]=3 [fence]=3 [retry]=3 [transition]=3 [recovery]=3 [waits]=3
	[checkpoint]=3 [saga]=3 [criteria]=3 [create]=3 [complete]=3 [claim]=3 [claim_resume]=3 [finish]=3 [operate]=3 [create_many]=3
	[api]=4 [api_create]=4 [api_read]=4 [api_claim]=4 [api_finish]=4 [api_operate]=4
	[api_orchestrate]=4 [api_authz]=4 [api_meta]=4 [tick]=4 [module]=4 [bgworker]=4
	[bgw_launcher]=4 [bgw_shmem]=4 [api_cron]=4 [api_citus]=4 [api_route]=4
	[store_sched]=2 [schedule]=3 [schedule_tick]=3 [api_schedule]=4
	[pass]=0 [store_ready]=2 [quota]=3
)

check_dir() {
	local dir=$1 f base mine inc target tl bad=0 files=0
	declare -n map=$2
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -e "$f" ] || continue
		base=$(basename "$f"); base=${base%.*}
		files=$((files + 1))
		mine=${map[$base]:-}
		if [ -z "$mine" ]; then
			not_ok "$f has a layer in the map"
			bad=1
			continue
		fi
		while read -r inc; do
			if [ ! -e "$dir/$inc" ]; then
				# a PostgreSQL header: only storage and above may run SQL
				if [ "$inc" = executor/spi.h ] && [ "$2" = LAYER ] && [ "$mine" -lt 2 ]; then
					not_ok "$f (layer $mine) includes SPI: only storage and above touch tables"
					bad=1
				fi
				continue
			fi
			target=${inc%.h}
			tl=${map[$target]:-}
			if [ -z "$tl" ]; then
				not_ok "$f includes \"$inc\", which has no layer in the map"
				bad=1
			elif [ "$tl" -gt "$mine" ]; then
				not_ok "$f (layer $mine) includes \"$inc\" (layer $tl): a call upward"
				bad=1
			fi
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
	[ "$bad" = 0 ] && ok "every one of the $files files in ${dir#$WL_ROOT/} includes only its own layer or lower"
}

check_dir "$WL_ROOT/src" LAYER

# the worker: log -> signals -> options -> json, guard -> spawn -> command ->
# db -> calls -> report -> attempt -> run -> main (docs/worker.md, "Inside")
declare -A WLAYER=(
	[log]=0 [signals]=1 [options]=2 [json]=3 [guard]=3 [spawn]=4 [command]=5 [db]=6
	[calls]=7 [report]=8 [attempt]=9 [run]=10 [main]=11
)
if [ -e "$WL_ROOT/src/worker/log.c" ]; then
	check_dir "$WL_ROOT/src/worker" WLAYER
fi

done_testing
