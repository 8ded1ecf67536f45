/*
 * store_direct.c: appending one row to one of our tables without a plan.
 * Layer 2.
 *
 * An event, a result: one heap insert and its index entries.  Through a
 * saved plan the same insert also pays the plan cache's check and locks, a
 * snapshot, the executor's start-up and end of a ModifyTable plan and the
 * raw-write guard's statement trigger: about 70,000 instructions, of which
 * the insert itself is under a third (callgrind, bench/README.md "Stop 23").
 * Here the row goes in as PostgreSQL's logical replication applies a row
 * (execReplication.c: ExecSimpleRelationInsert), with the table's NOT NULL
 * and CHECK constraints, its indexes (unique ones checked, partial ones by
 * their predicate) and its row triggers, if it ever has any.
 *
 * Only on a single node: on Citus our tables are distributed, and only
 * Citus's planner may write them; there wl_store_append returns false and
 * the caller runs its statement.  A table column the caller does not name is
 * a bug here (the library speaks to the tables of its own version only), not
 * a NULL: no default is applied.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "catalog.h"
#include "store.h"

/* resolve: the target's table and its columns' attribute numbers, once per catalog generation */
static Relation
resolve(WlAppendTarget *t)
{
	uint64		gen = wl_catalog_generation();
	Relation	rel;
	TupleDesc	desc;
	int			given = 0;

	if (t->generation == gen && OidIsValid(t->relid))
		return table_open(t->relid, RowExclusiveLock);
	t->relid = get_relname_relid(t->table, wl_catalog_store_schema());
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
 * wl_store_append inserts one row into workload.<t->table>: values[i] (NULL
 * when nulls[i]) is column t->cols[i], every column named.  Returns false,
 * having written nothing, where it cannot (on Citus): the caller runs its
 * statement instead.  Errors as the statement would raise them (a unique
 * index violated: ERRCODE_UNIQUE_VIOLATION).
 */
bool
wl_store_append(WlAppendTarget *t, const Datum *values, const bool *nulls)
{
	Relation	rel;
	EState	   *estate;
	RangeTblEntry *rte;
	ResultRelInfo *rri;
	TupleTableSlot *slot;

	if (wl_store_citus())
		return false;
	rel = resolve(t);
	estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = t->relid;
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	ExecInitRangeTable(estate, list_make1(rte));
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	estate->es_output_cid = GetCurrentCommandId(true);
	ExecOpenIndices(rri, false);
	slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rel), &TTSOpsVirtual);
	ExecClearTuple(slot);
	for (int a = 0; a < slot->tts_tupleDescriptor->natts; a++)
		slot->tts_isnull[a] = true;
	for (int i = 0; i < t->ncols; i++)
	{
		slot->tts_values[t->attnums[i] - 1] = values[i];
		slot->tts_isnull[t->attnums[i] - 1] = nulls[i];
	}
	ExecStoreVirtualTuple(slot);
	/* AFTER ROW triggers (none of ours has one) queue their events in a query level */
	AfterTriggerBeginQuery();
	ExecSimpleRelationInsert(rri, estate, slot);
	AfterTriggerEndQuery(estate);
	ExecCloseIndices(rri);
	ExecResetTupleTable(estate->es_tupleTable, false);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	return true;
}
