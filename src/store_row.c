/*
 * store_row.c: a workload row into a WlRow, from a statement's result (its
 * columns in ROW_COLUMNS order, store_sql.c) or from the table's own row
 * values (store_fenced.c).  Layer 2.
 *
 * A result row is taken apart once (heap_deform_tuple): read column by
 * column, each column after the first text one would be found by walking
 * the tuple from its start.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "store.h"

/* ROW_COLUMNS, in its order: what a row of the table gives, by name */
#define ROW_NCOLS (27 + WL_TIMEOUT_COUNT)
#define TIMEOUT_NAME(f) #f,
static const char *const row_cols[ROW_NCOLS] = {"tenant_id", "application_id", "state",
	"attempt_count", "retry_count", "fencing_token", "checkpoint_sequence", "claim_id",
	"worker_id", "lease_expires_at", "next_attempt_at", "state_entered_at", "created_at",
	"last_heartbeat_at", "capability_snapshot", WL_TIMEOUTS(TIMEOUT_NAME) "deadline_at",
	"wait_count", "has_criteria", "claimed_by", "seq", "priority", "has_dependencies",
"claimed_at", "started_at", "result_id", "authority_expires_at", "in_run"};
#define IN_RUN (ROW_NCOLS - 1)		/* not a column of the table: a statement's */
#undef TIMEOUT_NAME

/* the attribute numbers of row_cols in workload.workload_rows, once per catalog generation */
static uint64 cols_generation = 0;
static int	cols_attno[ROW_NCOLS];	/* 0-based */

typedef struct RowCols
{
	Datum		v[ROW_NCOLS];
	bool		n[ROW_NCOLS];
	Oid			type[ROW_NCOLS];
} RowCols;

static void
resolve_cols(void)
{
	uint64		gen = wl_store_generation();

	if (cols_generation == gen)
		return;
	(void) wl_store_attnums("workload_rows", row_cols, ROW_NCOLS - 1, cols_attno);
	cols_generation = gen;
}

/*
 * cols_whole: ROW_COLUMNS from a workload row's values (rd: the table's
 * descriptor), its run row's read over them when in_run
 */
static void
cols_whole(TupleDesc rd, const Datum *v, const bool *n, bool in_run, RowCols *c)
{
	resolve_cols();
	c->v[IN_RUN] = BoolGetDatum(in_run);
	c->n[IN_RUN] = false;
	c->type[IN_RUN] = BOOLOID;
	for (int k = 0; k < ROW_NCOLS - 1; k++)
	{
		int			a = cols_attno[k];

		if (a >= rd->natts)
			elog(ERROR, "a workload row has %d columns", rd->natts);
		c->v[k] = v[a];
		c->n[k] = n[a];
		c->type[k] = TupleDescAttr(rd, a)->atttypid;
	}
}

/* cols_read: row i of t as ROW_COLUMNS, taken apart once */
static void
cols_read(SPITupleTable *t, int i, RowCols *c)
{
	TupleDesc	desc = t->tupdesc;
	Datum	   *v;
	bool	   *n;

	if (desc->natts < ROW_NCOLS)
		elog(ERROR, "a workload row read from %d columns", desc->natts);
	v = palloc(sizeof(Datum) * desc->natts);
	n = palloc(sizeof(bool) * desc->natts);
	heap_deform_tuple(t->vals[i], desc, v, n);
	for (int k = 0; k < ROW_NCOLS; k++)
	{
		c->v[k] = v[k];
		c->n[k] = n[k];
		c->type[k] = TupleDescAttr(desc, k)->atttypid;
	}
}

/* a column read as the wrong type is a bug in a statement; an error, never the wrong bytes */
static void
expect(const RowCols *c, int k, Oid a, Oid b)
{
	if (c->type[k] != a && c->type[k] != b)
		elog(ERROR, "workload row column \"%s\" is of type %u, not %u", row_cols[k],
			 c->type[k], a);
}

static char *
col_text(const RowCols *c, int k)
{
	expect(c, k, TEXTOID, TEXTOID);
	return c->n[k] ? NULL : TextDatumGetCString(c->v[k]);
}

static int64
col_int(const RowCols *c, int k)
{
	expect(c, k, INT4OID, INT8OID);
	if (c->n[k])
		return 0;
	return c->type[k] == INT4OID ? DatumGetInt32(c->v[k]) : DatumGetInt64(c->v[k]);
}

static bool
col_bool(const RowCols *c, int k)
{
	expect(c, k, BOOLOID, BOOLOID);
	return !c->n[k] && DatumGetBool(c->v[k]);
}

static TimestampTz
col_ts(const RowCols *c, int k, bool *isnull)
{
	expect(c, k, TIMESTAMPTZOID, TIMESTAMPTZOID);
	*isnull = c->n[k];
	return c->n[k] ? 0 : DatumGetTimestampTz(c->v[k]);
}

/* row_fill fills row from the ROW_COLUMNS cp (copied into the current memory context) */
static void
row_fill(const RowCols *cp, const char *workload_id, WlRow *row)
{
	bool		isnull;
	int			k = 15;

	memset(row, 0, sizeof(*row));
	row->workload_id = pstrdup(workload_id);
	row->tenant_id = col_text(cp, 0);
	row->application_id = col_text(cp, 1);
	expect(cp, 2, wl_catalog_state_type(), wl_catalog_state_type());
	row->state = wl_catalog_state_from_oid(DatumGetObjectId(cp->v[2]));
	row->attempt_count = (int) col_int(cp, 3);
	row->retry_count = (int) col_int(cp, 4);
	row->fencing_token = col_int(cp, 5);
	row->checkpoint_sequence = (int) col_int(cp, 6);
	row->claim_id = col_text(cp, 7);
	row->worker_id = col_text(cp, 8);
	row->lease_expires_at = col_ts(cp, 9, &isnull);
	row->next_attempt_at = col_ts(cp, 10, &isnull);
	row->state_entered_at = col_ts(cp, 11, &isnull);
	row->created_at = col_ts(cp, 12, &isnull);
	row->last_heartbeat_at = col_ts(cp, 13, &isnull);
	row->has_heartbeat = !isnull;
	expect(cp, 14, TEXTARRAYOID, TEXTARRAYOID);
	row->capability_snapshot = cp->n[14] ? NULL : DatumGetArrayTypePCopy(cp->v[14]);
#define WL_TIMEOUT_READ(f) row->timeouts.f = col_int(cp, k++);
	WL_TIMEOUTS(WL_TIMEOUT_READ)
#undef WL_TIMEOUT_READ
	row->deadline_at = col_ts(cp, k++, &isnull);
	row->has_deadline = !isnull;
	row->wait_count = (int) col_int(cp, k++);
	row->has_criteria = col_bool(cp, k++);
	row->claimed_by = col_text(cp, k++);
	row->seq = col_int(cp, k++);
	row->priority = (int) col_int(cp, k++);
	row->has_dependencies = col_bool(cp, k++);
	row->claimed_at = col_ts(cp, k++, &isnull);
	row->started_at = col_ts(cp, k++, &isnull);
	row->result_id = col_text(cp, k++);
	row->authority_expires_at = col_ts(cp, k++, &isnull);
	row->in_run = col_bool(cp, k++);
	row->queued = row->state == WL_READY ? WL_QUEUED_READY :
		row->claim_id ? WL_QUEUED_HELD : WL_QUEUED_NONE;
	row->attempt_claim_id = row->claim_id;
	row->attempt_worker_id = row->worker_id;
	row->attempt_lease = row->lease_expires_at;
}

/*
 * wl_store_row_read fills row from row i of t (ROW_COLUMNS).  What it
 * returns is copied into the current memory context.
 */
void
wl_store_row_read(SPITupleTable *t, int i, const char *workload_id, WlRow *row)
{
	RowCols		c;

	cols_read(t, i, &c);
	row_fill(&c, workload_id, row);
}

/*
 * wl_store_row_from fills row from a workload row's values (desc:
 * workload.workload_rows'), with its run row's read over them when in_run
 */
void
wl_store_row_from(TupleDesc desc, const Datum *v, const bool *n, bool in_run,
				  const char *workload_id, WlRow *row)
{
	RowCols		c;

	cols_whole(desc, v, n, in_run, &c);
	row_fill(&c, workload_id, row);
}
