/*
 * store_runs.c: a claimed workload's mutable columns in its run row
 * (workload.runs, docs/storage.md), for the paths that write rows
 * without a plan (store_claim_direct.c, store_fenced.c): their values are
 * kept in the workload_rows layout (merged), the run row read over them and
 * written from them.  Layer 2.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "executor/tuptable.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "catalog.h"
#include "store.h"
#include "store_runs.h"

static const char *const run_cols[WL_RUN_NCOLS] = {"tenant_id", "seq", "next_attempt_at",
	"unheld_deadline_at", "retry_count", "wait_count", "checkpoint_sequence", "last_failure",
	"attempt_count", "fencing_token", "claimed_at", "claim_id", "worker_id", "claimed_by",
	"result_id", "state", "state_entered_at", "updated_at", "started_at", "deadline_at",
"lease_expires_at", "last_heartbeat_at", "progress",
	/* the run row's own: the events it carries (WL_RUN_CARRIED), its result */
	"started_seq", "claimed_seq", "event_worker", "event_role", "finished_seq", "finished_at",
"result_application_id", "output", "output_hash", "artifacts", "schema_version", "result_worker_id"};

static void run_written(TupleTableSlot *slot);

WlAppendTarget wl_runs_target = {"runs", WL_RUN_NCOLS, run_cols, .written = run_written};

StaticAssertDecl(WL_RUN_NCOLS <= WL_APPEND_MAX_COLS, "the run row's columns fit an append target");

static uint64 generation;
static Oid	runs_oid;
static Oid	runs_pkey;
static int	rcol[WL_RUN_NCOLS];	/* in runs, 0-based */
static int	wcol[WL_RUN_NCOLS];	/* in the merged values, 0-based */
static int	merged_natts;		/* workload_rows' columns, then the run row's own */

static void
runs_resolve(void)
{
	uint64		gen = wl_store_generation();
	Relation	rows;

	if (generation == gen)
		return;
	runs_oid = wl_store_attnums("runs", run_cols, WL_RUN_NCOLS, rcol);
	rows = table_open(wl_store_attnums("workload_rows", run_cols, WL_RUN_CARRIED, wcol),
					  AccessShareLock);
	merged_natts = RelationGetDescr(rows)->natts;
	table_close(rows, AccessShareLock);
	for (int i = WL_RUN_CARRIED; i < WL_RUN_NCOLS; i++)
		wcol[i] = merged_natts++;
	runs_pkey = wl_store_index_of("runs_pkey", 2, (int[2]) {rcol[1], rcol[0]});
	generation = gen;
}

Relation
wl_runs_open(Relation *idx)
{
	runs_resolve();
	*idx = index_open(runs_pkey, RowExclusiveLock);
	return table_open(runs_oid, RowExclusiveLock);
}

void
wl_runs_close(Relation rel, Relation idx)
{
	index_close(idx, NoLock);
	table_close(rel, NoLock);
}

/*
 * wl_runs_merged_natts: how many merged values there are (workload_rows'
 * columns, then the run row's own, NULL until a run row is read over them)
 */
int
wl_runs_merged_natts(void)
{
	runs_resolve();
	return merged_natts;
}

/* wl_runs_merged_col: the merged value of run_cols[i] */
int
wl_runs_merged_col(int i)
{
	runs_resolve();
	return wcol[i];
}

/* the run row's values (run_cols order) from merged values v/n */
void
wl_runs_values(const Datum *v, const bool *n, Datum *out, bool *on)
{
	runs_resolve();
	for (int i = 0; i < WL_RUN_NCOLS; i++)
	{
		out[i] = v[wcol[i]];
		on[i] = n[wcol[i]];
	}
}

/* the run row (in slot) read over merged values v/n */
void
wl_runs_overlay(TupleTableSlot *slot, Datum *v, bool *n)
{
	slot_getallattrs(slot);
	for (int i = 2; i < WL_RUN_NCOLS; i++)
	{
		v[wcol[i]] = slot->tts_values[rcol[i]];
		n[wcol[i]] = slot->tts_isnull[rcol[i]];
	}
}

/* a run row's tuple from merged values v/n */
HeapTuple
wl_runs_form(TupleDesc desc, const Datum *v, const bool *n)
{
	Datum	   *rv = palloc0(sizeof(Datum) * desc->natts);
	bool	   *rn = palloc(sizeof(bool) * desc->natts);

	for (int a = 0; a < desc->natts; a++)
		rn[a] = true;
	for (int i = 0; i < WL_RUN_NCOLS; i++)
	{
		rv[rcol[i]] = v[wcol[i]];
		rn[rcol[i]] = n[wcol[i]];
	}
	return heap_form_tuple(desc, rv, rn);
}

/* the run row of (seq, tenant) the snapshot sees, in slot */
bool
wl_runs_find(Relation rel, Relation idx, Snapshot snap, TupleTableSlot *slot, Datum seq,
			 Datum tenant, BlockNumber *nblocks)
{
	ItemPointerData tid;

	runs_resolve();
	if (nblocks && wl_store_memo_run_at(DatumGetInt64(seq), &tid) &&
		wl_store_fetch_keyed(rel, nblocks, &tid, snap, slot, rcol[1] + 1, DatumGetInt64(seq),
							 rcol[0] + 1, tenant))
		return true;
	if (!wl_store_by_key(rel, idx, snap, slot, F_INT8EQ, seq, F_TEXTEQ, tenant))
		return false;
	if (nblocks)
		wl_store_memo_run(DatumGetInt64(seq), &slot->tts_tid);
	return true;
}

/* run_written: a run row just appended (a claim's), remembered where it is */
static void
run_written(TupleTableSlot *slot)
{
	bool		isnull;

	runs_resolve();
	wl_store_memo_run(DatumGetInt64(slot_getattr(slot, rcol[1] + 1, &isnull)), &slot->tts_tid);
}
