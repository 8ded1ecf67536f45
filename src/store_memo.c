/*
 * store_memo.c: where this session last found a workload's row and its run
 * row (their tuple ids), so that the fenced calls that follow a claim in the
 * same session (start, heartbeat, complete: each reads both rows) fetch them
 * there instead of descending workloads_pkey and runs_pkey (two descents
 * for every item of a batch).
 *
 * A memo is a hint, never an answer: the caller fetches the tuple at the id
 * as an index scan fetches the tuple an index entry points to (the version
 * its snapshot sees along the HOT chain from there) and uses it only when it
 * has the key it looked for.  Anything else (a row updated outside its HOT
 * chain, a line pointer pruned and used again, a table rewritten or its end
 * cut off by VACUUM, an id the session never saw) makes the caller ask the
 * index, as it did before.  What a memo points at is read with the caller's
 * snapshot and tested by the caller as the index's row would be (the fence,
 * the tenant, the caller's right to it), so it opens nothing a lookup by the
 * index would not.  Fixed size, per session, never freed.  Layer 2.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "common/hashfn.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "store.h"

#define MEMO_SLOTS 1024			/* a power of two */

typedef struct RowMemo
{
	uint32		hash;			/* of the workload id */
	ItemPointerData tid;
} RowMemo;

typedef struct RunMemo
{
	int64		seq;
	ItemPointerData tid;
} RunMemo;

/* zero: no tid (ItemPointerIsValid is false for offset 0) */
static RowMemo rows[MEMO_SLOTS];
static RunMemo runs[MEMO_SLOTS];

static uint32
id_hash(const char *workload_id)
{
	return hash_bytes((const unsigned char *) workload_id, strlen(workload_id));
}

static uint32
seq_slot(int64 seq)
{
	return hash_bytes_uint32((uint32) seq ^ (uint32) ((uint64) seq >> 32)) & (MEMO_SLOTS - 1);
}

/* wl_store_memo_row: the workload row of workload_id was found at tid */
void
wl_store_memo_row(const char *workload_id, ItemPointer tid)
{
	uint32		h = id_hash(workload_id);
	RowMemo    *m = &rows[h & (MEMO_SLOTS - 1)];

	m->hash = h;
	ItemPointerCopy(tid, &m->tid);
}

/* wl_store_memo_row_at: where the workload row of workload_id may be (false: no memo) */
bool
wl_store_memo_row_at(const char *workload_id, ItemPointer tid)
{
	uint32		h = id_hash(workload_id);
	RowMemo    *m = &rows[h & (MEMO_SLOTS - 1)];

	if (m->hash != h || !ItemPointerIsValid(&m->tid))
		return false;
	ItemPointerCopy(&m->tid, tid);
	return true;
}

/* wl_store_memo_run: the run row of the workload numbered seq was found (or written) at tid */
void
wl_store_memo_run(int64 seq, ItemPointer tid)
{
	RunMemo    *m = &runs[seq_slot(seq)];

	m->seq = seq;
	ItemPointerCopy(tid, &m->tid);
}

/* wl_store_memo_run_at: where the run row of the workload numbered seq may be */
bool
wl_store_memo_run_at(int64 seq, ItemPointer tid)
{
	RunMemo    *m = &runs[seq_slot(seq)];

	if (m->seq != seq || !ItemPointerIsValid(&m->tid))
		return false;
	ItemPointerCopy(&m->tid, tid);
	return true;
}

/* the spec this session wrote last: its workload's sequence, its tid */
static int64 spec_seq;
static ItemPointerData spec_tid;

/* wl_store_memo_spec: the spec of the workload numbered seq was written at tid */
void
wl_store_memo_spec(int64 seq, ItemPointer tid)
{
	spec_seq = seq;
	ItemPointerCopy(tid, &spec_tid);
}

/* wl_store_memo_spec_at: where the spec of the workload numbered seq was written, if this session wrote it last */
bool
wl_store_memo_spec_at(int64 seq, ItemPointer tid)
{
	if (spec_seq != seq || !ItemPointerIsValid(&spec_tid))
		return false;
	ItemPointerCopy(&spec_tid, tid);
	return true;
}

/*
 * wl_store_fetch_keyed: wl_store_fetch_at, kept only if the tuple has the key
 * (seq, tenant) in its attributes seq_att and tenant_att (1-based): true,
 * the tuple in slot; false (slot cleared): ask the index.  *tid may be
 * invalid (no hint).
 */
bool
wl_store_fetch_keyed(Relation rel, BlockNumber *nblocks, ItemPointer tid, Snapshot snap,
					 TupleTableSlot *slot, AttrNumber seq_att, int64 seq, AttrNumber tenant_att,
					 Datum tenant)
{
	bool		isnull;

	if (!ItemPointerIsValid(tid))
		return false;
	if (wl_store_fetch_at(rel, nblocks, tid, snap, slot) &&
		DatumGetInt64(slot_getattr(slot, seq_att, &isnull)) == seq && !isnull &&
		wl_store_text_equal(slot_getattr(slot, tenant_att, &isnull), tenant) && !isnull)
		return true;
	ExecClearTuple(slot);
	return false;
}

/* wl_store_text_equal: whether two text values have the same bytes */
bool
wl_store_text_equal(Datum a, Datum b)
{
	text	   *x = DatumGetTextPP(a);
	text	   *y = DatumGetTextPP(b);

	return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
		memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
}

/*
 * wl_store_fetch_at: into slot, the version of rel's row at tid that snap
 * sees, following its HOT chain as an index scan does; false when there is
 * none.  *nblocks: rel's length in pages, asked once (InvalidBlockNumber:
 * not yet) by whoever holds rel open for a statement, as no VACUUM can cut
 * its end then; an id past it is not fetched (it would be an error).  The
 * caller checks the key of what it gets.
 */
bool
wl_store_fetch_at(Relation rel, BlockNumber *nblocks, ItemPointer tid, Snapshot snap,
				  TupleTableSlot *slot)
{
	IndexFetchTableData *scan;
	ItemPointerData at;
	bool		call_again = false;
	bool		all_dead = false;
	bool		found;

	if (*nblocks == InvalidBlockNumber)
		*nblocks = RelationGetNumberOfBlocks(rel);
	if (!ItemPointerIsValid(tid) || ItemPointerGetBlockNumber(tid) >= *nblocks)
		return false;
	ItemPointerCopy(tid, &at);
	scan = table_index_fetch_begin(rel);
	found = table_index_fetch_tuple(scan, &at, snap, slot, &call_again, &all_dead);
	table_index_fetch_end(scan);
	return found;
}
