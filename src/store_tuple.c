/*
 * store_tuple.c: finding, locking, changing and deleting one row version as
 * the executor does, for the writes made without a plan on a single node
 * (store_fenced.c, store_claim_direct.c, store_direct.c).  Layer 2.
 *
 * Each meets a concurrent change as the statement it stands in for would:
 * under READ COMMITTED the newest version is followed (and the caller tests
 * it again, as EvalPlanQual does), under REPEATABLE READ or SERIALIZABLE it
 * is a serialization failure.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/rel.h"

#include "store.h"

/*
 * wl_store_row_triggers: whether rel has a row trigger for inserts (insert),
 * updates (update) or deletes (del): none of ours has one; where a user
 * added one, the statement (or a row-by-row insert) is the one to fire it,
 * and the write made without a plan is not.
 */
bool
wl_store_row_triggers(Relation rel, bool insert, bool update, bool del)
{
	TriggerDesc *t = rel->trigdesc;

	return t != NULL &&
		((insert && (t->trig_insert_before_row || t->trig_insert_after_row)) ||
		 (update && (t->trig_update_before_row || t->trig_update_after_row)) ||
		 (del && (t->trig_delete_before_row || t->trig_delete_after_row)));
}

/* wl_store_serialization_failure: 40001, as the executor raises it on a concurrent change */
void
wl_store_serialization_failure(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent %s", what)));
}

/*
 * wl_store_lock_skip: the row at tid locked as ExecLockRows locks it for
 * SKIP LOCKED (slot: the version locked); false when it is passed over.
 * *moved: the version locked is newer than the snapshot's (its conditions
 * are to be tested again).
 */
bool
wl_store_lock_skip(Relation rel, ItemPointer tid, Snapshot snap, TupleTableSlot *slot,
				   LockTupleMode mode, bool *moved)
{
	TM_FailureData tmfd;
	int			flags = TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS;
	TM_Result	res;

	if (!IsolationUsesXactSnapshot())
		flags |= TUPLE_LOCK_FLAG_FIND_LAST_VERSION;
	res = table_tuple_lock(rel, tid, snap, slot, GetCurrentCommandId(true), mode,
						   LockWaitSkip, flags, &tmfd);
	*moved = res == TM_Ok && tmfd.traversed;
	switch (res)
	{
		case TM_Ok:
			return true;
		case TM_WouldBlock:
		case TM_SelfModified:
			return false;
		case TM_Updated:
			if (IsolationUsesXactSnapshot())
				wl_store_serialization_failure("update");
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
			break;
		case TM_Deleted:
			if (IsolationUsesXactSnapshot())
				wl_store_serialization_failure("delete");
			return false;
		default:
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
	}
	return false;
}

/* wl_store_by_key: the version the snapshot sees (in slot) of the row with key values a, b */
bool
wl_store_by_key(Relation rel, Relation idx, Snapshot snap, TupleTableSlot *slot,
				RegProcedure eq_a, Datum a, RegProcedure eq_b, Datum b)
{
	IndexScanDesc scan = NULL;
	bool		found = wl_store_by_key_in(&scan, rel, idx, snap, slot, eq_a, a, eq_b, b);

	index_endscan(scan);
	return found;
}

/*
 * wl_store_lookup_in: whether idx leads to a row of rel the snapshot sees
 * whose first nkeys key columns equal vals (by eqs, in the index's
 * collations), that row in slot; through *scan, begun here (when NULL, or
 * begun for another snapshot) and otherwise rescanned, so that the lookups
 * of a call or of a batch in one index share one (beginning and ending a
 * scan is a noticeable part of a lookup's cost).  Always the same nkeys
 * for one scan; the caller ends it (index_endscan).
 */
static bool
wl_store_lookup_in(IndexScanDesc *scan, Relation rel, Relation idx, Snapshot snap,
				   TupleTableSlot *slot, const RegProcedure *eqs, const Datum *vals, int nkeys)
{
	ScanKeyData keys[INDEX_MAX_KEYS];

	for (int i = 0; i < nkeys; i++)
		ScanKeyEntryInitialize(&keys[i], 0, i + 1, BTEqualStrategyNumber, InvalidOid,
							   idx->rd_indcollation[i], eqs[i], vals[i]);
	if (*scan != NULL && (*scan)->xs_snapshot != snap)
	{
		index_endscan(*scan);
		*scan = NULL;
	}
	if (*scan == NULL)
		*scan = index_beginscan(rel, idx, snap, nkeys, 0);
	Assert((*scan)->numberOfKeys == nkeys);
	index_rescan(*scan, keys, nkeys, NULL, 0);
	return index_getnext_slot(*scan, ForwardScanDirection, slot);
}

/*
 * wl_store_by_key_in is wl_store_by_key through *scan (wl_store_lookup_in),
 * for the lookups of one call (a claim's); the caller ends it (index_endscan).
 */
bool
wl_store_by_key_in(IndexScanDesc *scan, Relation rel, Relation idx, Snapshot snap,
				   TupleTableSlot *slot, RegProcedure eq_a, Datum a, RegProcedure eq_b, Datum b)
{
	return wl_store_lookup_in(scan, rel, idx, snap, slot, (RegProcedure[2]) {eq_a, eq_b},
							  (Datum[2]) {a, b}, 2);
}

/*
 * wl_store_index_has: whether the index (by oid) leads to a row the
 * snapshot sees whose first nkeys key columns equal vals (by eqs, each in
 * its column's collation); with no keys, whether it leads to any row.
 */
bool
wl_store_index_has(Oid index, Snapshot snap, const RegProcedure *eqs, const Datum *vals,
				   int nkeys)
{
	Relation	idx = index_open(index, AccessShareLock);
	Relation	rel = table_open(idx->rd_index->indrelid, AccessShareLock);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	IndexScanDesc scan = NULL;
	bool		found = wl_store_index_has_in(rel, idx, &scan, slot, snap, eqs, vals, nkeys);

	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	index_close(idx, NoLock);
	return found;
}

/*
 * wl_store_index_has_in is wl_store_index_has on the open index idx of rel,
 * through slot (cleared) and the scan *scan (wl_store_lookup_in)
 */
bool
wl_store_index_has_in(Relation rel, Relation idx, IndexScanDesc *scan, TupleTableSlot *slot,
					  Snapshot snap, const RegProcedure *eqs, const Datum *vals, int nkeys)
{
	bool		found = wl_store_lookup_in(scan, rel, idx, snap, slot, eqs, vals, nkeys);

	ExecClearTuple(slot);
	return found;
}

/*
 * wl_store_index_version_in: the index entries of a version of rel's row
 * that was not a HOT update, through ix (its indexes opened on first use,
 * and their predicates prepared once, until wl_store_indexer_close)
 */
void
wl_store_index_version_in(WlIndexer *ix, Relation rel, TupleTableSlot *slot)
{
	if (ix->estate == NULL)
	{
		RangeTblEntry *rte = makeNode(RangeTblEntry);

		ix->estate = CreateExecutorState();
		ix->rri = makeNode(ResultRelInfo);
		rte->rtekind = RTE_RELATION;
		rte->relid = RelationGetRelid(rel);
		rte->relkind = rel->rd_rel->relkind;
		rte->rellockmode = RowExclusiveLock;
		ExecInitRangeTable(ix->estate, list_make1(rte));
		InitResultRelInfo(ix->rri, rel, 1, NULL, 0);
		ExecOpenIndices(ix->rri, false);
	}
	Assert(ix->rri->ri_RelationDesc == rel);
	ix->estate->es_output_cid = GetCurrentCommandId(true);
	list_free(ExecInsertIndexTuples(ix->rri, slot, ix->estate, true, false, NULL, NIL));
	ResetPerTupleExprContext(ix->estate);
}

void
wl_store_indexer_close(WlIndexer *ix)
{
	if (ix->estate == NULL)
		return;
	ExecCloseIndices(ix->rri);
	FreeExecutorState(ix->estate);
	ix->estate = NULL;
}

/* wl_store_index_version: the index entries of a version that was not a HOT update */
void
wl_store_index_version(Relation rel, TupleTableSlot *slot)
{
	WlIndexer	ix = {0};

	wl_store_index_version_in(&ix, rel, slot);
	wl_store_indexer_close(&ix);
}

/*
 * wl_store_remove_found: deletes the version at tid (found by snap) as
 * DELETE does: a version another transaction deleted meanwhile is gone
 * (READ COMMITTED) or a serialization failure (REPEATABLE READ); one it
 * updated is followed to its newest version, which is deleted (READ
 * COMMITTED).
 */
void
wl_store_remove_found(Relation rel, ItemPointer tid, Snapshot snap, TupleTableSlot *slot)
{
	CommandId	cid = GetCurrentCommandId(true);

	for (;;)
	{
		TM_FailureData tmfd;
		TM_Result	res = table_tuple_delete(rel, tid, cid, snap, InvalidSnapshot, true, &tmfd,
											 false);

		if (res == TM_Ok || res == TM_SelfModified)
			return;
		if (res != TM_Updated && res != TM_Deleted)
			elog(ERROR, "unexpected table_tuple_delete status: %u", res);
		if (IsolationUsesXactSnapshot())
			wl_store_serialization_failure(res == TM_Updated ? "update" : "delete");
		if (res == TM_Deleted)
			return;
		res = table_tuple_lock(rel, tid, snap, slot, cid, LockTupleExclusive, LockWaitBlock,
							   TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &tmfd);
		if (res != TM_Ok)
			return;
		*tid = slot->tts_tid;
	}
}
