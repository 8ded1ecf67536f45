/*
 * store_direct.c: appending one row to one of our tables without a plan.
 * Layer 2.
 *
 * An event, a result: one heap insert and its index entries.  Through a
 * saved plan the same insert also pays the plan cache's check and locks, a
 * snapshot, the executor's start-up and end of a ModifyTable plan and the
 * raw-write guard's statement trigger, which together cost more than twice
 * the insert itself.
 * Here the row goes in as PostgreSQL's logical replication applies a row
 * (execReplication.c: ExecSimpleRelationInsert), with the table's NOT NULL
 * and CHECK constraints, its indexes (unique ones checked, partial ones by
 * their predicate) and its row triggers, if it ever has any.  A held
 * appender (wl_store_appender_hold) keeps the rows of one call and writes
 * them when it closes with one multi-insert, as COPY does.
 *
 * Only on a single node: on Citus our tables are distributed, and only
 * Citus's planner may write them; there wl_store_append returns false and
 * the caller runs its statement.  A table column the caller does not name is
 * a bug here (the library speaks to the tables of its own version only), not
 * a NULL: no default is applied.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "access/genam.h"
#include "access/nbtree.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "catalog.h"
#include "store.h"

/*
 * wl_store_writable refuses a write where the executor would refuse the
 * statement: in a read-only transaction (a standby's sessions are all read
 * only) and in parallel mode.  Each write made here without a plan asks it
 * first, whether or not a row then matches, as the statement's start does.
 */
void
wl_store_writable(const char *command)
{
	PreventCommandIfReadOnly(command);
	PreventCommandIfParallelMode(command);
}

/*
 * wl_store_attnums: the 0-based attribute numbers (out[i]) of the columns
 * names[0..n) of workload.<table>, and the table's oid.  A table or column
 * not found is an error: the library speaks to the tables of its own
 * version only.
 */
Oid
wl_store_attnums(const char *table, const char *const *names, int n, int *out)
{
	Oid			relid = wl_store_relid(table);

	if (!OidIsValid(relid))
		elog(ERROR, "table workload.%s not found", table);
	for (int i = 0; i < n; i++)
	{
		out[i] = get_attnum(relid, names[i]) - 1;
		if (out[i] < 0)
			elog(ERROR, "column \"%s\" of workload.%s not found", names[i], table);
	}
	return relid;
}

/*
 * wl_store_index_of: the btree index workload.<name>, whose key columns must
 * be cols (0-based attribute numbers, from wl_store_attnums; -1: an
 * expression; -2: not checked); anything else is an error, as a missing
 * column is.
 */
Oid
wl_store_index_of(const char *name, int ncols, const int *cols)
{
	Oid			oid = wl_store_relid(name);
	Relation	idx;

	if (!OidIsValid(oid))
		elog(ERROR, "index workload.%s not found", name);
	idx = index_open(oid, AccessShareLock);
	if (idx->rd_rel->relam != BTREE_AM_OID || idx->rd_index->indnkeyatts != ncols)
		elog(ERROR, "workload.%s is not the index it should be", name);
	for (int i = 0; i < ncols; i++)
	{
		if (cols[i] >= -1 && idx->rd_index->indkey.values[i] != cols[i] + 1)
			elog(ERROR, "workload.%s is not on the columns it should be", name);
	}
	index_close(idx, AccessShareLock);
	return oid;
}

/* target_open: the target's table, opened; its columns' attribute numbers found once per catalog generation */
static Relation
target_open(WlAppendTarget *t)
{
	uint64		gen = wl_store_generation();
	Relation	rel;
	TupleDesc	desc;
	int			given = 0;

	if (t->generation == gen && OidIsValid(t->relid))
		return table_open(t->relid, RowExclusiveLock);
	if (t->ncols > WL_APPEND_MAX_COLS)
		elog(ERROR, "an append to workload.%s names %d columns, more than %d", t->table, t->ncols,
			 WL_APPEND_MAX_COLS);
	t->relid = wl_store_relid(t->table);
	if (!OidIsValid(t->relid))
		elog(ERROR, "table workload.%s not found", t->table);
	rel = table_open(t->relid, RowExclusiveLock);
	desc = RelationGetDescr(rel);
	for (int i = 0; i < t->ncols; i++)
	{
		t->attnums[i] = get_attnum(t->relid, t->cols[i]);
		if (t->attnums[i] <= 0 || t->attnums[i] > desc->natts)
			elog(ERROR, "column \"%s\" of workload.%s not found", t->cols[i], t->table);
	}
	for (int a = 0; a < desc->natts; a++)
		given += TupleDescAttr(desc, a)->attisdropped ? 0 : 1;
	if (given != t->ncols)
		elog(ERROR, "workload.%s has %d columns, an append names %d", t->table, given, t->ncols);
	t->generation = gen;
	return rel;
}

/*
 * wl_store_appender_open readies a to insert rows into workload.<t->table>
 * (its relation, indexes and executor state opened once, for the rows of
 * one call); false, having opened nothing, where it cannot (on Citus): the
 * caller runs its statement instead.
 */
bool
wl_store_appender_open(WlAppender *a, WlAppendTarget *t)
{
	RangeTblEntry *rte;

	memset(a, 0, sizeof(*a));
	if (!wl_store_direct())
		return false;
	wl_store_writable("INSERT");
	a->t = t;
	a->rel = target_open(t);
	a->estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = t->relid;
	rte->relkind = a->rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	ExecInitRangeTable(a->estate, list_make1(rte));
	a->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(a->rri, a->rel, 1, NULL, 0);
	/* an AFTER ROW trigger's event finds the table here, not opened again (and left open) */
	a->estate->es_opened_result_relations = list_make1(a->rri);
	a->estate->es_output_cid = GetCurrentCommandId(true);
	ExecOpenIndices(a->rri, false);
	a->slot = ExecInitExtraTupleSlot(a->estate, RelationGetDescr(a->rel), &TTSOpsVirtual);
	return true;
}

/*
 * wl_store_appender_hold makes a, just opened, keep its rows until it is
 * closed and write them then as one multi-insert (as COPY does): a page's
 * rows in one WAL record instead of one record a row, its buffer locked
 * once.  For rows nothing reads before the call ends (a claim's events and
 * run rows, a batch's events).  Not where the table has a row trigger for
 * inserts (each row is then inserted as it comes, and fires it), a stored
 * generated column, or is a partition.
 */
void
wl_store_appender_hold(WlAppender *a)
{
	TupleConstr *c = RelationGetDescr(a->rel)->constr;

	a->hold = !wl_store_row_triggers(a->rel, true, false, false) &&
		!(c != NULL && c->has_generated_stored) && !a->rel->rd_rel->relispartition;
}

/* held_write: the rows a holds, inserted with their index entries */
static void
held_write(WlAppender *a)
{
	CommandId	cid = GetCurrentCommandId(true);

	if (a->nheld == 0)
		return;
	a->estate->es_output_cid = cid;
	table_multi_insert(a->rel, a->held, a->nheld, cid, 0, NULL);
	for (int i = 0; i < a->nheld; i++)
	{
		if (a->rri->ri_NumIndices > 0)
			list_free(ExecInsertIndexTuples(a->rri, a->held[i], a->estate, false, false, NULL,
											NIL));
		ResetPerTupleExprContext(a->estate);
		if (a->t->written)
			a->t->written(a->held[i]);
	}
	a->nheld = 0;
}

/* slot_fill: the slot holding the row whose columns t->cols[i] are values[i] (NULL when nulls[i]) */
static void
slot_fill(TupleTableSlot *slot, const WlAppendTarget *t, const Datum *values, const bool *nulls)
{
	ExecClearTuple(slot);
	for (int i = 0; i < slot->tts_tupleDescriptor->natts; i++)
		slot->tts_isnull[i] = true;
	for (int i = 0; i < t->ncols; i++)
	{
		slot->tts_values[t->attnums[i] - 1] = values[i];
		slot->tts_isnull[t->attnums[i] - 1] = nulls[i];
	}
	ExecStoreVirtualTuple(slot);
}

/*
 * wl_store_appender_put inserts one row: values[i] (NULL when nulls[i]) is
 * column t->cols[i], every column named.  Errors as the statement would
 * raise them (a unique index violated: ERRCODE_UNIQUE_VIOLATION; by a held
 * appender when it writes).  A held appender checks the row's constraints
 * now and keeps a copy of it.
 */
void
wl_store_appender_put(WlAppender *a, const Datum *values, const bool *nulls)
{
	TupleTableSlot *slot = a->slot;

	if (a->hold)
	{
		if (a->nheld == WL_APPEND_HELD)
			held_write(a);
		if (a->held[a->nheld] == NULL)
		{
			/* in the executor state's memory: freed with it, copies included */
			MemoryContext was = MemoryContextSwitchTo(a->estate->es_query_cxt);

			a->held[a->nheld] = table_slot_create(a->rel, &a->estate->es_tupleTable);
			MemoryContextSwitchTo(was);
		}
		slot = a->held[a->nheld];
		slot_fill(slot, a->t, values, nulls);
		if (RelationGetDescr(a->rel)->constr)
			ExecConstraints(a->rri, slot, a->estate);
		ExecMaterializeSlot(slot);
		a->nheld++;
		return;
	}
	slot_fill(slot, a->t, values, nulls);
	/* the caller's command (it may have made others since the appender opened) */
	a->estate->es_output_cid = GetCurrentCommandId(true);
	/* AFTER ROW triggers (none of ours has one) queue their events in a query level */
	AfterTriggerBeginQuery();
	ExecSimpleRelationInsert(a->rri, a->estate, slot);
	AfterTriggerEndQuery(a->estate);
	ResetPerTupleExprContext(a->estate);
	if (a->t->written)
		a->t->written(slot);
}

/*
 * wl_store_appender_close: the rows a holds written, and what
 * wl_store_appender_open opened closed (nothing if it did not)
 */
void
wl_store_appender_close(WlAppender *a)
{
	if (a->rel == NULL)
		return;
	held_write(a);
	ExecCloseResultRelations(a->estate);
	ExecResetTupleTable(a->estate->es_tupleTable, false);
	FreeExecutorState(a->estate);
	table_close(a->rel, NoLock);
	a->rel = NULL;
}

/*
 * wl_store_append inserts one row into workload.<t->table> (as
 * wl_store_appender_put); false, having written nothing, where it cannot
 * (on Citus).
 */
bool
wl_store_append(WlAppendTarget *t, const Datum *values, const bool *nulls)
{
	WlAppender	a;

	if (!wl_store_appender_open(&a, t))
		return false;
	wl_store_appender_put(&a, values, nulls);
	wl_store_appender_close(&a);
	return true;
}

/* keyed_find: the target's table and index, once per catalog generation */
static void
keyed_find(WlKeyedTarget *t)
{
	uint64		gen = wl_store_generation();

	if (t->generation == gen)
		return;
	t->relid = wl_store_relid(t->table);
	t->index = wl_store_relid(t->index_name);
	if (!OidIsValid(t->relid) || !OidIsValid(t->index))
		elog(ERROR, "workload.%s or its index %s not found", t->table, t->index_name);
	t->generation = gen;
}

/*
 * wl_store_any_by_keys: for each of the n text keys (a[i], b[i]), whether
 * workload.<t->table> has a row whose index t->index_name leads with it
 * (has[i]), as a statement would see it now (under REPEATABLE READ, what was
 * committed since the transaction's snapshot too, as wl_store_run_latest
 * asks): 0; -1 where it cannot ask without a plan (Citus).  For the question
 * asked before a statement whose answer is almost always "none": one
 * snapshot and one index scan for the n keys, and none at all while the
 * index has never held an entry.
 */
int
wl_store_any_by_keys(WlKeyedTarget *t, const Datum *a, const Datum *b, int n, bool *has)
{
	Relation	idx;
	Snapshot	snap;

	memset(has, 0, sizeof(bool) * n);
	if (!wl_store_direct())
		return -1;
	keyed_find(t);
	CommandCounterIncrement();
	PushActiveSnapshot(IsolationUsesXactSnapshot() ? GetLatestSnapshot() : GetTransactionSnapshot());
	snap = GetActiveSnapshot();
	idx = index_open(t->index, AccessShareLock);
	/*
	 * A B-tree that never held an entry is its metapage alone (its first
	 * insert adds the root page at once, before its transaction commits, and
	 * a B-tree's pages are never given back but by a rebuild): no row has
	 * the key, whoever asks.  A store that has never had a dependency.
	 */
	if (idx->rd_rel->relam != BTREE_AM_OID || RelationGetNumberOfBlocks(idx) > BTREE_METAPAGE + 1)
	{
		Relation	rel = table_open(idx->rd_index->indrelid, AccessShareLock);
		TupleTableSlot *slot = table_slot_create(rel, NULL);
		IndexScanDesc scan = index_beginscan(rel, idx, snap, 2, 0);
		ScanKeyData keys[2];

		for (int i = 0; i < n; i++)
		{
			ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
								   idx->rd_indcollation[0], F_TEXTEQ, a[i]);
			ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid,
								   idx->rd_indcollation[1], F_TEXTEQ, b[i]);
			index_rescan(scan, keys, 2, NULL, 0);
			has[i] = index_getnext_slot(scan, ForwardScanDirection, slot);
			ExecClearTuple(slot);
		}
		index_endscan(scan);
		ExecDropSingleTupleTableSlot(slot);
		table_close(rel, NoLock);
	}
	index_close(idx, NoLock);
	PopActiveSnapshot();
	return 0;
}

/* wl_store_any_by_key is wl_store_any_by_keys for one key: 1 or 0; -1 on Citus. */
int
wl_store_any_by_key(WlKeyedTarget *t, Datum a, Datum b)
{
	bool		has;

	if (wl_store_any_by_keys(t, &a, &b, 1, &has) < 0)
		return -1;
	return has ? 1 : 0;
}

/*
 * wl_store_remove deletes the row of workload.<t->table> whose primary key
 * t->index, (seq, tenant_id), is (seq, tenant), if there is one, as
 * `DELETE ... WHERE tenant_id = $1 AND seq = $2` would.  False, having done
 * nothing, where it cannot (Citus; a row trigger for deletes): the caller
 * runs its statement.
 */
bool
wl_store_remove(WlKeyedTarget *t, Datum tenant, Datum seq)
{
	Relation	rel;
	Relation	idx;
	TupleTableSlot *slot;
	ItemPointerData tid;
	bool		found;

	if (!wl_store_direct())
		return false;
	wl_store_writable("DELETE");
	keyed_find(t);
	rel = table_open(t->relid, RowExclusiveLock);
	if (wl_store_row_triggers(rel, false, false, true))
	{
		table_close(rel, NoLock);
		return false;
	}
	idx = index_open(t->index, RowExclusiveLock);
	if (idx->rd_index->indnkeyatts != 2 || idx->rd_opcintype[0] != INT8OID ||
		idx->rd_opcintype[1] != TEXTOID)
		elog(ERROR, "workload.%s is not on (seq, tenant_id)", t->index_name);
	/* as SPI does before a statement: see what this transaction wrote so far */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	slot = table_slot_create(rel, NULL);
	found = wl_store_by_key(rel, idx, GetActiveSnapshot(), slot, F_INT8EQ, seq, F_TEXTEQ, tenant);
	tid = slot->tts_tid;
	if (found)
		wl_store_remove_found(rel, &tid, GetActiveSnapshot(), slot);
	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	index_close(idx, NoLock);
	table_close(rel, NoLock);
	return true;
}
