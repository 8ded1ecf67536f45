/*
 * store_fenced.c: a fenced call's conditional update (start, heartbeat,
 * complete) without a plan, on a single node.  Layer 2.
 *
 * It does what the statement does (store_sql.c, FENCED_*_SQL), as
 * PostgreSQL's UPDATE does it: the row by workloads_pkey, seen by a snapshot
 * taken after the transaction's earlier commands; the fence, the state, for
 * a batch's completion that its result id is free, and the caller's right
 * to the row tested on it (membership last, through P_MEMBER); then the row
 * updated (HOT where no indexed column changes, else with its index
 * entries).  A row another transaction updated meanwhile, or is updating,
 * is waited for; then under READ COMMITTED its newest version
 * is locked and tested again (as EvalPlanQual does), and under REPEATABLE
 * READ or SERIALIZABLE that is a serialization failure.  A row that does not
 * match is neither written nor locked (but a newest version locked and
 * found not to match stays locked, as it does in an UPDATE).
 *
 * Through its saved plan the index lookup and the heap update are a small
 * part of the statement's cost; the rest is the plan cache's revalidation,
 * executor start-up (its quals compiled at every call) and end.  On Citus the
 * statement runs instead (wl_store_fenced_direct returns -1).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "commands/sequence.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "crypto.h"
#include "deadline.h"
#include "store.h"
#include "store_runs.h"

/* the columns a fenced call reads or writes, by name */
enum
{
	C_WORKLOAD_ID, C_TENANT_ID, C_APPLICATION_ID, C_CLAIM_ID, C_WORKER_ID, C_FENCING_TOKEN,
	C_LEASE_EXPIRES_AT, C_CLAIMED_BY, C_STATE, C_HAS_CRITERIA, C_UPDATED_AT, C_STATE_ENTERED_AT,
	C_STARTED_AT, C_DEADLINE_AT, C_CREATED_AT, C_EXECUTION_MS, C_OVERALL_MS, C_LAST_HEARTBEAT_AT,
	C_PROGRESS, C_RESULT_ID, C_SEQ, C_COUNT
};
static const char *const col_names[C_COUNT] = {"workload_id", "tenant_id", "application_id",
	"claim_id", "worker_id", "fencing_token", "lease_expires_at", "claimed_by", "state",
	"has_criteria", "updated_at", "state_entered_at", "started_at", "deadline_at", "created_at",
"execution_ms", "overall_ms", "last_heartbeat_at", "progress", "result_id", "seq"};

static uint64 resolved_generation = 0;
static Oid	table_oid;
static Oid	pkey_oid;
static Oid	result_key_oid;		/* runs_result_key (result_id, tenant_id, result_application_id) */
static int	col[C_COUNT];		/* 0-based attribute numbers */
static const char *const result_key[3] = {"result_id", "tenant_id", "result_application_id"};
static int	rcol[3];			/* runs_result_key's columns, 0-based */

static void
fenced_resolve(void)
{
	uint64		gen = wl_store_generation();

	if (resolved_generation == gen)
		return;
	table_oid = wl_store_attnums("workload_rows", col_names, C_COUNT, col);
	pkey_oid = wl_store_index_of("workloads_pkey", 2, (int[2]) {col[C_WORKLOAD_ID], col[C_TENANT_ID]});
	wl_store_attnums("runs", result_key, 3, rcol);
	result_key_oid = wl_store_index_of("runs_result_key", 3, rcol);
	resolved_generation = gen;
}

/* text_is: whether column c of the row (v/n) is the text s (compared in place, not copied) */
static bool
text_is(const Datum *v, const bool *n, int c, const char *s)
{
	text	   *t;
	size_t		len;

	if (n[col[c]] || s == NULL)
		return false;
	t = DatumGetTextPP(v[col[c]]);
	len = strlen(s);
	return VARSIZE_ANY_EXHDR(t) == len && memcmp(VARDATA_ANY(t), s, len) == 0;
}

/*
 * The relations and slots of fenced calls, opened once for a batch's calls
 * (wl_store_fenced_open) or for one call: a batch's completion would
 * otherwise open and close seven of them for each item.
 */
struct WlFencedRels
{
	Relation	rows;			/* workload.workload_rows, its key */
	Relation	rows_pkey;
	Relation	runs;			/* workload.runs, its key */
	Relation	runs_pkey;
	Relation	result_key;		/* runs_result_key (a batch's result ids), its scan */
	IndexScanDesc result_scan;
	TupleTableSlot *row;		/* the workload row, the run row, a run row with a result */
	TupleTableSlot *run;
	TupleTableSlot *result;
	TupleTableSlot *next;		/* a run row's new version */
	Datum	   *v;				/* the merged row (store_runs.h) */
	bool	   *n;
	int			plain_events;	/* workload.event_rows has no row trigger: 1, 0, -1 not asked */
	WlIndexer	runs_ix;		/* the index entries of run rows' new versions (a completion's) */
	BlockNumber rows_blocks;	/* rows' and runs' lengths, asked once (wl_store_fetch_at) */
	BlockNumber runs_blocks;
};

/* result_taken: whether a result of the row's tenant and application (v/n) has the id rid */
static bool
result_taken(WlFencedRels *f, const Datum *v, const char *rid, Snapshot snap)
{
	if (f->result_key == NULL)
	{
		f->result_key = index_open(result_key_oid, AccessShareLock);
		f->result = table_slot_create(f->runs, NULL);
	}
	return wl_store_index_has_in(f->runs, f->result_key, &f->result_scan, f->result, snap,
								 (RegProcedure[3]) {F_TEXTEQ, F_TEXTEQ, F_TEXTEQ},
								 (Datum[3]) {CStringGetTextDatum(rid), v[col[C_TENANT_ID]],
								 v[col[C_APPLICATION_ID]]}, 3);
}

/*
 * holds: FENCE_HOLDS, the tenant the call named, the from-state and (for a
 * completion) no criteria and, for a batch's, its result id free, on row
 * values v/n; the caller's membership last
 */
static bool
holds(WlFencedRels *f, const WlFencedCall *c, const char *tenant, TimestampTz now,
	  Snapshot snap, const Datum *v, const bool *n)
{
	const WlCaller *who = c->who;

	if (!text_is(v, n, C_CLAIM_ID, c->fence->claim_id) ||
		!text_is(v, n, C_WORKER_ID, c->fence->worker_id) ||
		n[col[C_FENCING_TOKEN]] || DatumGetInt64(v[col[C_FENCING_TOKEN]]) != c->fence->fencing_token ||
		n[col[C_LEASE_EXPIRES_AT]] || DatumGetTimestampTz(v[col[C_LEASE_EXPIRES_AT]]) <= now)
		return false;
	if (!n[col[C_CLAIMED_BY]] && !who->superuser &&
		!text_is(v, n, C_CLAIMED_BY, who->role ? who->role : ""))
		return false;
	if (tenant && !text_is(v, n, C_TENANT_ID, tenant))
		return false;
	if (c->kind != WL_FENCED_BEAT &&
		wl_catalog_state_from_oid(DatumGetObjectId(v[col[C_STATE]])) != c->from)
		return false;
	if (c->kind == WL_FENCED_COMPLETE && !n[col[C_HAS_CRITERIA]] &&
		DatumGetBool(v[col[C_HAS_CRITERIA]]))
		return false;
	if (c->kind == WL_FENCED_COMPLETE && c->result_free && result_taken(f, v, c->result_id, snap))
		return false;
	if (!who->admin &&
		!wl_store_member(who->role ? who->role : "",
						 TextDatumGetCString(v[col[C_TENANT_ID]]),
						 TextDatumGetCString(v[col[C_APPLICATION_ID]])))
		return false;
	return true;
}

/*
 * carries: whether the run row (v/n) carries the event of c, a start or a
 * completion from RUNNING to SUCCEEDED, as it carries its claim's: the
 * events before it are there (the claim's for a start; the claim's and the
 * start's for a completion), by the worker and the role that make this
 * call, and no row trigger on workload.event_rows waits for the row.
 */
static bool
carries(WlFencedRels *f, const WlFencedCall *c, const Datum *v, const bool *n)
{
	int			claimed = wl_runs_merged_col(WL_RUN_CLAIMED_SEQ);
	int			started = wl_runs_merged_col(WL_RUN_STARTED_SEQ);
	int			finished = wl_runs_merged_col(WL_RUN_FINISHED_SEQ);
	int			worker = wl_runs_merged_col(WL_RUN_EVENT_WORKER);
	int			role = wl_runs_merged_col(WL_RUN_EVENT_ROLE);

	if (c->kind == WL_FENCED_START ? !n[started] :
		(c->kind != WL_FENCED_COMPLETE || c->from != WL_RUNNING || c->to != WL_SUCCEEDED ||
		 n[started] || !n[finished]))
		return false;
	if (n[claimed] || n[worker] || n[role] ||
		strcmp(TextDatumGetCString(v[worker]), c->fence->worker_id) != 0 ||
		strcmp(TextDatumGetCString(v[role]), c->who->role ? c->who->role : "") != 0)
		return false;
	if (f->plain_events < 0)
	{
		Relation	events = table_open(wl_store_attnums("event_rows", (const char *[1]) {"sequence"},
														 1, (int[1]) {0}), AccessShareLock);

		f->plain_events = !wl_store_row_triggers(events, true, false, false);
		table_close(events, NoLock);
	}
	return f->plain_events == 1;
}

/* carry: the event of c on the run row (v/n): its sequence drawn now, and for a completion its time */
static void
carry(const WlFencedCall *c, TimestampTz now, Datum *v, bool *n)
{
	int			seq = wl_runs_merged_col(c->kind == WL_FENCED_START ? WL_RUN_STARTED_SEQ :
										 WL_RUN_FINISHED_SEQ);

	v[seq] = Int64GetDatum(nextval_internal(wl_catalog_event_seq(), false));
	n[seq] = false;
	if (c->kind == WL_FENCED_COMPLETE)
	{
		int			at = wl_runs_merged_col(WL_RUN_FINISHED_AT);

		v[at] = TimestampTzGetDatum(now);
		n[at] = false;
	}
}

/*
 * put_result: the result of completion c on the run row (v/n), as
 * P_FENCED_COMPLETE_MANY's update writes it: the workload's application
 * (whose result ids it is unique among, runs_result_key), the output, its
 * hash, the artifacts, the schema version and the worker
 */
static void
put_result(const WlFencedCall *c, Datum *v, bool *n)
{
	static const int k[6] = {WL_RUN_RESULT_APPLICATION, WL_RUN_OUTPUT, WL_RUN_OUTPUT_HASH,
	WL_RUN_ARTIFACTS, WL_RUN_SCHEMA_VERSION, WL_RUN_RESULT_WORKER};
	Datum		d[6];

	d[0] = v[col[C_APPLICATION_ID]];
	d[1] = JsonbPGetDatum(c->output);
	d[2] = CStringGetTextDatum(wl_jsonb_hash(c->output));
	d[3] = PointerGetDatum(c->artifacts);
	d[4] = Int32GetDatum(c->schema_version);
	d[5] = CStringGetTextDatum(c->fence->worker_id);
	for (int i = 0; i < 6; i++)
	{
		v[wl_runs_merged_col(k[i])] = d[i];
		n[wl_runs_merged_col(k[i])] = false;
	}
}

/* set: the new values of a matched row (v/n, changed in place), as FENCED_*_SQL's SET lists */
static void
set(WlFencedRels *f, const WlFencedCall *c, TimestampTz now, Datum *v, bool *n)
{
#define PUT(k, d) (v[col[k]] = (d), n[col[k]] = false)
#define PUT_NULL(k) (v[col[k]] = (Datum) 0, n[col[k]] = true)
	PUT(C_UPDATED_AT, TimestampTzGetDatum(now));
	if (c->kind == WL_FENCED_BEAT)
	{
		PUT(C_LEASE_EXPIRES_AT, TimestampTzGetDatum(c->until));
		PUT(C_LAST_HEARTBEAT_AT, TimestampTzGetDatum(now));
		if (c->progress)
			PUT(C_PROGRESS, JsonbPGetDatum(c->progress));
		return;
	}
	PUT(C_STATE, wl_catalog_state_datum(c->to));
	PUT(C_STATE_ENTERED_AT, TimestampTzGetDatum(now));
	if (c->kind == WL_FENCED_START)
	{
		/* workload.claim_deadline(created_at, now, NULL, execution_ms, overall_ms, true) */
		WlRow		r;

		memset(&r, 0, sizeof(r));
		r.state = WL_RUNNING;
		r.created_at = DatumGetTimestampTz(v[col[C_CREATED_AT]]);
		r.state_entered_at = now;
		r.timeouts.execution_ms = n[col[C_EXECUTION_MS]] ? 0 : DatumGetInt64(v[col[C_EXECUTION_MS]]);
		r.timeouts.overall_ms = n[col[C_OVERALL_MS]] ? 0 : DatumGetInt64(v[col[C_OVERALL_MS]]);
		wl_deadline_set(&r, WL_CLAIMED);
		PUT(C_STARTED_AT, TimestampTzGetDatum(now));
		if (carries(f, c, v, n))
			carry(c, now, v, n);
		if (r.has_deadline)
			PUT(C_DEADLINE_AT, TimestampTzGetDatum(r.deadline_at));
		else
			PUT_NULL(C_DEADLINE_AT);
		return;
	}
	PUT_NULL(C_CLAIM_ID);
	PUT_NULL(C_WORKER_ID);
	PUT_NULL(C_CLAIMED_BY);
	PUT_NULL(C_DEADLINE_AT);
	PUT(C_RESULT_ID, CStringGetTextDatum(c->result_id ? c->result_id : ""));
	if (carries(f, c, v, n))
		carry(c, now, v, n);
	put_result(c, v, n);
#undef PUT
#undef PUT_NULL
}

/*
 * find: the version of the row the snapshot sees (in f->row), by
 * workloads_pkey, or first where this session last found it (store_memo.c)
 */
static bool
find(WlFencedRels *f, const char *workload_id, const char *tenant, Snapshot snap)
{
	ScanKeyData keys[2];
	int			nkeys = tenant ? 2 : 1;
	IndexScanDesc scan;
	ItemPointerData tid;
	bool		found;

	if (wl_store_memo_row_at(workload_id, &tid))
	{
		if (wl_store_fetch_at(f->rows, &f->rows_blocks, &tid, snap, f->row))
		{
			slot_getsomeattrs(f->row, Max(col[C_WORKLOAD_ID], col[C_TENANT_ID]) + 1);
			if (text_is(f->row->tts_values, f->row->tts_isnull, C_WORKLOAD_ID, workload_id) &&
				(!tenant || text_is(f->row->tts_values, f->row->tts_isnull, C_TENANT_ID, tenant)))
				return true;
		}
		ExecClearTuple(f->row);
	}
	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
						   f->rows_pkey->rd_indcollation[0], F_TEXTEQ,
						   CStringGetTextDatum(workload_id));
	if (tenant)
		ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid,
							   f->rows_pkey->rd_indcollation[1], F_TEXTEQ,
							   CStringGetTextDatum(tenant));
	scan = index_beginscan(f->rows, f->rows_pkey, snap, nkeys, 0);
	index_rescan(scan, keys, nkeys, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, f->row);
	index_endscan(scan);
	if (found)
		wl_store_memo_row(workload_id, &f->row->tts_tid);
	return found;
}

/*
 * update: the matched version in found (values v/n, already changed by set)
 * replaces the row; false when, after another transaction's change, the
 * newest version no longer matches (then it is the values in found).
 */
static bool
update(WlFencedRels *f, const WlFencedCall *c, const char *tenant, TimestampTz now,
	   Snapshot snap)
{
	Relation	rel = f->runs;
	TupleDesc	desc = RelationGetDescr(rel);
	CommandId	cid = GetCurrentCommandId(true);
	TupleTableSlot *found = f->run;
	TupleTableSlot *next = f->next;
	ItemPointerData tid = found->tts_tid;
	Datum	   *v = f->v;
	bool	   *n = f->n;

	for (;;)
	{
		TM_FailureData tmfd;
		LockTupleMode lockmode;
		bool		update_indexes;
		TM_Result	res;

		ExecStoreHeapTuple(wl_runs_form(desc, v, n), next, true);
		res = table_tuple_update(rel, &tid, next, cid, snap, InvalidSnapshot, true, &tmfd,
								 &lockmode, &update_indexes);
		if (res == TM_Ok)
		{
			if (update_indexes)
				wl_store_index_version_in(&f->runs_ix, rel, next);
			/* where the next fenced call of this session will find it */
			wl_store_memo_run(DatumGetInt64(v[col[C_SEQ]]), &next->tts_tid);
			ExecClearTuple(next);
			return true;
		}
		if (res == TM_SelfModified)
		{
			if (tmfd.cmax != cid)
				ereport(ERROR,
						(errcode(ERRCODE_TRIGGERED_DATA_CHANGE_VIOLATION),
						 errmsg("tuple to be updated was already modified by an operation triggered by the current command")));
			break;
		}
		if (res == TM_Deleted)
		{
			if (IsolationUsesXactSnapshot())
				wl_store_serialization_failure("delete");
			break;
		}
		if (res != TM_Updated)
			elog(ERROR, "unexpected table_tuple_update status: %u", res);
		if (IsolationUsesXactSnapshot())
			wl_store_serialization_failure("update");
		/* the newest version, locked, tested again */
		res = table_tuple_lock(rel, &tid, snap, found, cid, lockmode, LockWaitBlock,
							   TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &tmfd);
		if (res == TM_SelfModified && tmfd.cmax != cid)
			ereport(ERROR,
					(errcode(ERRCODE_TRIGGERED_DATA_CHANGE_VIOLATION),
					 errmsg("tuple to be updated was already modified by an operation triggered by the current command")));
		if (res != TM_Ok)
		{
			if (res != TM_Deleted && res != TM_SelfModified)
				elog(ERROR, "unexpected table_tuple_lock status: %u", res);
			break;
		}
		wl_runs_overlay(found, v, n);
		if (!holds(f, c, tenant, now, snap, v, n))
			break;
		set(f, c, now, v, n);
		tid = found->tts_tid;
	}
	ExecClearTuple(next);
	return false;
}

/* update's arguments and answer, for wl_store_result_duplicate */
typedef struct Update
{
	WlFencedRels *f;
	const WlFencedCall *c;
	const char *tenant;
	TimestampTz now;
	Snapshot	snap;
	bool		matched;
} Update;

static void
update_cb(void *arg)
{
	Update	   *u = arg;

	u->matched = update(u->f, u->c, u->tenant, u->now, u->snap);
}

/*
 * wl_store_fenced_open opens what fenced calls without a plan use, for the
 * calls of one statement (a batch's completions); NULL where they cannot run
 * here (Citus, or a row trigger on the tables: run the statement).  Close it
 * with wl_store_fenced_close before the statement returns.
 */
WlFencedRels *
wl_store_fenced_open(void)
{
	WlFencedRels *f;
	Relation	rows;
	Relation	runs_pkey;
	Relation	runs;

	if (!wl_store_direct())
		return NULL;
	wl_store_writable("UPDATE");
	fenced_resolve();
	rows = table_open(table_oid, RowExclusiveLock);
	runs = wl_runs_open(&runs_pkey);
	if (wl_store_row_triggers(rows, false, true, false) ||
		wl_store_row_triggers(runs, false, true, false))
	{
		wl_runs_close(runs, runs_pkey);
		table_close(rows, NoLock);
		return NULL;
	}
	f = palloc0(sizeof(WlFencedRels));
	f->rows = rows;
	f->rows_pkey = index_open(pkey_oid, RowExclusiveLock);
	f->runs = runs;
	f->runs_pkey = runs_pkey;
	f->row = table_slot_create(rows, NULL);
	f->run = table_slot_create(runs, NULL);
	f->next = MakeSingleTupleTableSlot(RelationGetDescr(runs), &TTSOpsHeapTuple);
	f->v = palloc(sizeof(Datum) * wl_runs_merged_natts());
	f->n = palloc(sizeof(bool) * wl_runs_merged_natts());
	f->plain_events = -1;
	f->rows_blocks = InvalidBlockNumber;
	f->runs_blocks = InvalidBlockNumber;
	return f;
}

void
wl_store_fenced_close(WlFencedRels *f)
{
	ExecDropSingleTupleTableSlot(f->next);
	ExecDropSingleTupleTableSlot(f->run);
	ExecDropSingleTupleTableSlot(f->row);
	if (f->result_key != NULL)
	{
		if (f->result_scan != NULL)
			index_endscan(f->result_scan);
		ExecDropSingleTupleTableSlot(f->result);
		index_close(f->result_key, NoLock);
	}
	wl_store_indexer_close(&f->runs_ix);
	index_close(f->rows_pkey, NoLock);
	wl_runs_close(f->runs, f->runs_pkey);
	table_close(f->rows, NoLock);
	pfree(f->v);
	pfree(f->n);
	pfree(f);
}

/*
 * wl_store_fenced_in runs the fenced call c (tenant: the one it named, or
 * NULL) without a plan, through f (the workload row read by workloads_pkey,
 * its run row updated): true when the row matched and moved (row: as it is
 * now), false when nothing matched (nothing written).
 */
bool
wl_store_fenced_in(WlFencedRels *f, const WlFencedCall *c, const char *tenant, WlRow *row)
{
	TimestampTz now = wl_now();
	TupleDesc	desc = RelationGetDescr(f->rows);
	Snapshot	snap;
	bool		matched = false;

	/* as SPI does before a statement: see what this transaction wrote so far */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	snap = GetActiveSnapshot();
	if (find(f, c->fence->workload_id, tenant, snap))
	{
		slot_getallattrs(f->row);
		memcpy(f->v, f->row->tts_values, sizeof(Datum) * desc->natts);
		memcpy(f->n, f->row->tts_isnull, sizeof(bool) * desc->natts);
		/* a fence is held only by a workload that has a run row (its claim made it) */
		if (wl_runs_find(f->runs, f->runs_pkey, snap, f->run, f->v[col[C_SEQ]],
						 f->v[col[C_TENANT_ID]], &f->runs_blocks))
		{
			wl_runs_overlay(f->run, f->v, f->n);
			if (holds(f, c, tenant, now, snap, f->v, f->n))
			{
				Update		u = {f, c, tenant, now, snap, false};

				set(f, c, now, f->v, f->n);
				/* a result id another workload's result took violates runs_result_key */
				if (c->kind == WL_FENCED_COMPLETE)
					wl_store_result_duplicate(c->result_id, update_cb, &u);
				else
					update_cb(&u);
				matched = u.matched;
			}
		}
	}
	if (matched)
	{
		int			seq = wl_runs_merged_col(c->kind == WL_FENCED_COMPLETE ? WL_RUN_FINISHED_SEQ :
											 WL_RUN_STARTED_SEQ);

		wl_store_row_from(desc, f->v, f->n, true, c->fence->workload_id, row);
		/* the start's or the completion's event is on the run row: wl_store_event appends none */
		if (c->kind != WL_FENCED_BEAT && !f->n[seq])
			row->carried_event = DatumGetInt64(f->v[seq]);
		if (c->kind == WL_FENCED_COMPLETE)
			row->result_hash = TextDatumGetCString(f->v[wl_runs_merged_col(WL_RUN_OUTPUT_HASH)]);
	}
	ExecClearTuple(f->run);
	ExecClearTuple(f->row);
	PopActiveSnapshot();
	return matched;
}

/*
 * wl_store_fenced_direct is wl_store_fenced_in on its own: 1 matched, 0
 * not, -1 where it cannot run here (wl_store_fenced_open).
 */
int
wl_store_fenced_direct(const WlFencedCall *c, const char *tenant, WlRow *row)
{
	WlFencedRels *f = wl_store_fenced_open();
	bool		matched;

	if (f == NULL)
		return -1;
	matched = wl_store_fenced_in(f, c, tenant, row);
	wl_store_fenced_close(f);
	return matched ? 1 : 0;
}
