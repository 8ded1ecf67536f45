/*
 * store.c: prepares and runs the statements of store_sql.c (the only SQL
 * text for our tables).  Every statement is a plan prepared once per backend
 * (SPI_prepare + SPI_keepplan) and run with typed parameters; the raw-write
 * trigger lets a write through only while one of these plans runs.  It
 * decides nothing: no membership, no tick, no NOTIFY, no cascade.  Layer 2.
 *
 * Lock order, everywhere: the workload row (FOR NO KEY UPDATE), then its
 * attempts, checkpoints, results, events, waits and compensation steps.
 * workload_signal reads open waits without locking them, then locks each
 * workload row in workload_id order and re-reads its wait under that lock.
 * A dependent is made with each dependency's row read FOR SHARE (fe6c476):
 * a transition of the dependency waits until the dependent is committed,
 * then finds it and unblocks it; the create in turn waits while a worker's
 * transaction holds the dependency's row (FOR KEY SHARE would not wait, and
 * the dependency could finish unseen: isolation spec
 * dependency_met_while_its_dependent_is_made).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "jit/jit.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "tcop/pquery.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "errors.h"
#include "guc.h"
#include "jsonb_util.h"
#include "states.h"
#include "store.h"
#include "store_ops.h"

/* Backend-lifetime cache: the saved plans, made with the catalog generation. */
static SPIPlanPtr plans[P_COUNT];
static uint64 plans_generation = 0;
static int	api_writing = 0;

/* Citus: whether this database has Citus, per catalog generation */
static bool citus_here = false;
static uint64 citus_generation = 0;

/* executors running in this backend (the raw-write guard's test on Citus) */
static int	exec_nest = 0;
static ExecutorRun_hook_type prev_run_hook = NULL;
static ExecutorFinish_hook_type prev_finish_hook = NULL;
static ExecutorCheckPerms_hook_type prev_perms_hook = NULL;

/*
 * While one of our statements is planned (by_keys: build_by_keys makes its
 * plan, or the plan cache makes it again inside the run, after an
 * invalidation such as autovacuum's), every table of schema workload
 * (planning_for) counts as holding at least WL_PLAN_MIN_ROWS rows
 * (as_if_grown).  On a
 * small or new table every path looks as cheap as any other, and a scan of
 * all of a tenant's rows (tenant_id = $1, through any index that holds the
 * column) would be kept over the key lookup that follows it: seen in the
 * claim of a new database, whose every call then read all of the tenant's
 * workloads, and took ten times as long as the lookups it stands for.
 * Planned as if grown, the key lookups win, and they stay right as the
 * tables do grow.  Partial indexes keep their own size: what the claim and
 * the tick read through them is a small part of a table.
 */
#define WL_PLAN_MIN_ROWS 1000000.0
static Oid	planning_for = InvalidOid;
static bool by_keys = false;
static get_relation_info_hook_type prev_relation_info_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;

static void
as_if_grown(PlannerInfo *root, Oid relid, bool inhparent, RelOptInfo *rel)
{
	ListCell   *lc;

	if (prev_relation_info_hook)
		prev_relation_info_hook(root, relid, inhparent, rel);
	if (!OidIsValid(planning_for) || rel->tuples >= WL_PLAN_MIN_ROWS ||
		get_rel_namespace(relid) != planning_for)
		return;
	rel->tuples = WL_PLAN_MIN_ROWS;
	rel->pages = Max(rel->pages, (BlockNumber) (WL_PLAN_MIN_ROWS / 40));
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);

		if (index->indpred != NIL)
			continue;
		index->tuples = rel->tuples;
		index->pages = Max(index->pages, (BlockNumber) (WL_PLAN_MIN_ROWS / 200));
	}
}

/*
 * plan_by_keys is the planner for our statements (by_keys): it plans them
 * to reach rows through indexes and nested loops, in index order, and
 * never to JIT.  Every statement here names the rows it touches by key (or
 * by one of the partial indexes), but a plan made while the tables are
 * small would scan, hash or sort them, and a generic plan lives as long as
 * the backend: a worker that connected to an empty store would go on
 * scanning it as it grows.  So, for its plan only: no sequential scan, hash
 * or merge join; no bitmap scan (planned on a queue no ANALYZE had seen, the
 * claim read all of its tenant's READY rows through the claim's index,
 * sorted them and took the first: 64 ms a claim with 100,000 of them, where
 * the index scan in its order stops at the first; a plain index scan also
 * serves the = ANY(array) lookups a bitmap scan was chosen for); and no JIT
 * (the plan decides at planning time whether it is compiled, by its cost,
 * and a path disabled here costs more than any threshold: a statement on a
 * small table would be compiled again on every run, tens of milliseconds
 * each time).  Planned as if the tables had grown (as_if_grown), the plan
 * need not be made again as they do.  The planner's switches are set for
 * the call and put back, as the GUCs they are would be.
 */
static PlannedStmt *
plan_by_keys(Query *parse, const char *query_string, int cursor_options,
			 ParamListInfo bound)
{
	bool		seqscan = enable_seqscan;
	bool		hashjoin = enable_hashjoin;
	bool		mergejoin = enable_mergejoin;
	bool		bitmapscan = enable_bitmapscan;
	bool		jit = jit_enabled;
	Oid			was = planning_for;
	PlannedStmt *stmt;

	if (!by_keys)
		return prev_planner_hook ? prev_planner_hook(parse, query_string, cursor_options, bound) :
			standard_planner(parse, query_string, cursor_options, bound);
	planning_for = wl_catalog_store_schema();
	enable_seqscan = enable_hashjoin = enable_mergejoin = enable_bitmapscan = false;
	jit_enabled = false;
	PG_TRY();
	{
		stmt = prev_planner_hook ? prev_planner_hook(parse, query_string, cursor_options, bound) :
			standard_planner(parse, query_string, cursor_options, bound);
	}
	PG_FINALLY();
	{
		enable_seqscan = seqscan;
		enable_hashjoin = hashjoin;
		enable_mergejoin = mergejoin;
		enable_bitmapscan = bitmapscan;
		jit_enabled = jit;
		planning_for = was;
	}
	PG_END_TRY();
	return stmt;
}

/*
 * build_by_keys makes the generic plan of a statement now, by keys
 * (plan_by_keys), so that its first run does not pay for it; the plan cache
 * makes it again the same way whenever it has been invalidated (run_plan).
 */
static void
build_by_keys(SPIPlanPtr plan)
{
	bool		was = by_keys;
	CachedPlan *cp;

	by_keys = true;
	PG_TRY();
	{
		cp = SPI_plan_get_cached_plan(plan);
	}
	PG_FINALLY();
	{
		by_keys = was;
	}
	PG_END_TRY();
	if (cp)
		ReleaseCachedPlan(cp, CurrentResourceOwner);
}

/* the state sets a statement may name (store_sql.h), from the transition table */
static const struct
{
	const char *marker;
	bool		(*has) (WlState);
}			state_sets[] = {
	{SQL_FINAL, wl_state_is_final},
	{SQL_HOLDS_CLAIM, wl_state_holds_claim},
	{SQL_CAN_TIME_OUT, wl_state_can_time_out},
};

/* append_states: "('A', 'B')", the states of one set, in the type's order */
static void
append_states(StringInfo out, bool (*has) (WlState))
{
	const char *sep = "(";

	for (int s = 0; s < WL_STATE_COUNT; s++)
	{
		if (!has((WlState) s))
			continue;
		appendStringInfo(out, "%s'%s'", sep, wl_state_name((WlState) s));
		sep = ", ";
	}
	appendStringInfoChar(out, ')');
}

/* append_count_by_state: jsonb_build_object('CREATED', count(*) FILTER (WHERE x.state = 'CREATED'), ...) */
static void
append_count_by_state(StringInfo out)
{
	appendStringInfoString(out, "jsonb_build_object(");
	for (int s = 0; s < WL_STATE_COUNT; s++)
		appendStringInfo(out, "%s'%s', count(*) FILTER (WHERE x.state = '%s')", s ? ", " : "",
						 wl_state_name((WlState) s), wl_state_name((WlState) s));
	appendStringInfoChar(out, ')');
}

/* with_state_sets: sql with each state-set marker replaced by its list */
char *
wl_store_sql_text(const char *sql)
{
	StringInfoData out;

	initStringInfo(&out);
	while (*sql)
	{
		int			i;

		if (strncmp(sql, SQL_COUNT_BY_STATE, strlen(SQL_COUNT_BY_STATE)) == 0)
		{
			append_count_by_state(&out);
			sql += strlen(SQL_COUNT_BY_STATE);
			continue;
		}
		for (i = 0; i < lengthof(state_sets); i++)
		{
			size_t		len = strlen(state_sets[i].marker);

			if (strncmp(sql, state_sets[i].marker, len) == 0)
			{
				append_states(&out, state_sets[i].has);
				sql += len;
				break;
			}
		}
		if (i == lengthof(state_sets))
			appendStringInfoChar(&out, *sql++);
	}
	return out.data;
}

/* forget every saved plan: they were typed with OIDs that changed */
static void
forget_plans(void)
{
	for (int i = 0; i < P_COUNT; i++)
	{
		if (plans[i])
			SPI_freeplan(plans[i]);
		plans[i] = NULL;
	}
}

/* the types of statement id's parameters */
static void
plan_types(const WlPlanDef *def, Oid *types)
{
	Oid			state_type = wl_catalog_state_type();

	for (int i = 0; i < def->nargs; i++)
		types[i] = def->types[i] == ST ? state_type :
			def->types[i] == STA ? get_array_type(state_type) : def->types[i];
}

/*
 * In a shard scope on Citus (store_shard.c), a statement runs on the
 * tenant's shards as the plain tables they are on this node: its text with
 * each of our tables named as its shard, planned once per shard group and
 * kept, generic, by keys, as on one node.  A statement that cannot run
 * there as it is (wl_store_shard_sql) runs as Citus plans it.
 */
typedef struct ShardPlanKey
{
	int64		anchor;
	int			id;
} ShardPlanKey;

typedef struct ShardPlan
{
	ShardPlanKey key;
	SPIPlanPtr	plan;			/* NULL: not on the shards */
} ShardPlan;

#define SHARD_PLANS_MAX 4096

static HTAB *shard_plans = NULL;

static void
forget_shard_plans(void)
{
	HASH_SEQ_STATUS s;
	ShardPlan  *p;

	if (shard_plans == NULL)
		return;
	hash_seq_init(&s, shard_plans);
	while ((p = hash_seq_search(&s)) != NULL)
	{
		if (p->plan)
			SPI_freeplan(p->plan);
	}
	hash_destroy(shard_plans);
	shard_plans = NULL;
}

/* shard_plan: statement id on the shards in scope, or NULL where it runs as Citus plans it */
static SPIPlanPtr
shard_plan(WlPlanId id)
{
	ShardPlanKey key = {wl_store_shard_anchor(), (int) id};
	ShardPlan  *p;
	bool		found;

	if (shard_plans == NULL || hash_get_num_entries(shard_plans) >= SHARD_PLANS_MAX)
	{
		HASHCTL		ctl;

		forget_shard_plans();
		ctl.keysize = sizeof(ShardPlanKey);
		ctl.entrysize = sizeof(ShardPlan);
		shard_plans = hash_create("workload shard plans", 256, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	p = hash_search(shard_plans, &key, HASH_ENTER, &found);
	if (!found)
	{
		const WlPlanDef *def = &wl_plan_defs[id];
		char	   *sql;
		Oid			types[MAX_ARGS];

		p->plan = NULL;
		sql = wl_store_shard_sql(wl_store_sql_text(def->citus_sql ? def->citus_sql : def->sql));
		if (sql != NULL)
		{
			SPIPlanPtr	plan;

			plan_types(def, types);
			plan = SPI_prepare_cursor(sql, def->nargs, types, CURSOR_OPT_GENERIC_PLAN);
			if (plan == NULL)
			{
				(void) hash_search(shard_plans, &key, HASH_REMOVE, NULL);
				elog(ERROR, "could not prepare workload statement %d on shards: %s", (int) id,
					 SPI_result_code_string(SPI_result));
			}
			if (SPI_keepplan(plan) != 0)
				elog(ERROR, "could not keep workload statement %d", (int) id);
			p->plan = plan;
			build_by_keys(plan);
		}
	}
	return p->plan;
}

/*
 * get_plan: statement id's saved plan; *on_shards: a plan on the shards in
 * scope (shard_plan)
 */
static pg_noinline SPIPlanPtr
get_plan(WlPlanId id, bool *on_shards)
{
	uint64		gen = wl_catalog_generation();

	if (gen != plans_generation)
	{
		forget_plans();
		forget_shard_plans();
		plans_generation = gen;
	}
	*on_shards = false;
	if (wl_store_shard_active())
	{
		SPIPlanPtr	plan = shard_plan(id);

		if (plan != NULL)
		{
			*on_shards = true;
			return plan;
		}
	}
	if (plans[id] == NULL)
	{
		const WlPlanDef *def = &wl_plan_defs[id];
		Oid			types[MAX_ARGS];
		SPIPlanPtr	plan;

		plan_types(def, types);
		/*
		 * Always the generic plan: a custom plan would be re-planned on every
		 * call, which for the claim statement costs more than running it.
		 * On Citus, a statement reading more than one table is planned for
		 * each call (Citus routes it only with its parameters' values; its
		 * generic plan fails with "could not create distributed plan").
		 */
		plan = SPI_prepare_cursor(wl_store_sql_text(wl_store_citus() && def->citus_sql ?
												  def->citus_sql : def->sql),
								  def->nargs, types,
								  wl_store_citus() && !def->one_table && !def->catalog_only ?
								  CURSOR_OPT_CUSTOM_PLAN : CURSOR_OPT_GENERIC_PLAN);
		if (plan == NULL)
			elog(ERROR, "could not prepare workload statement %d: %s", (int) id,
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "could not keep workload statement %d", (int) id);
		if (!wl_store_citus() || def->one_table || def->catalog_only)
			build_by_keys(plan);
		plans[id] = plan;
	}
	return plans[id];
}

/*
 * run_plan executes plan id (with snapshot, when given) and checks the SPI
 * result is expect.  The raw-write guard is open only while the plan runs,
 * and is closed again on error too.  A plan the plan cache makes again
 * meanwhile (it was invalidated) is made by keys (plan_by_keys), as
 * build_by_keys made it first.  Returns the tuple table (valid until
 * SPI_finish).
 */
static SPITupleTable *
run_plan(WlPlanId id, Datum *values, const char *nulls, long tcount, int expect,
		 Snapshot snapshot)
{
	volatile int rc = 0;
	bool		on_shards;
	SPIPlanPtr	plan = get_plan(id, &on_shards);
	bool		was = by_keys;

	api_writing++;
	by_keys = on_shards || !wl_store_citus() || wl_plan_defs[id].one_table ||
		wl_plan_defs[id].catalog_only;
	PG_TRY();
	{
		if (snapshot)
			rc = SPI_execute_snapshot(plan, values, nulls, snapshot, InvalidSnapshot,
									  false, true, tcount);
		else
			rc = SPI_execute_plan(plan, values, nulls, false, tcount);
	}
	PG_FINALLY();
	{
		api_writing--;
		by_keys = was;
	}
	PG_END_TRY();
	/* a Citus variant returns its rows from a SELECT over the write */
	if (rc == SPI_OK_SELECT && wl_plan_defs[id].citus_sql && wl_store_citus() &&
		(expect == SPI_OK_INSERT_RETURNING || expect == SPI_OK_UPDATE_RETURNING ||
		 expect == SPI_OK_DELETE_RETURNING))
		rc = expect;
	if (rc != expect)
		elog(ERROR, "workload statement %d: expected %s, got %s", (int) id,
			 SPI_result_code_string(expect), SPI_result_code_string(rc));
	return SPI_tuptable;
}

/* wl_store_run executes plan id and checks the SPI result is expect (see run_plan). */
SPITupleTable *
wl_store_run(WlPlanId id, Datum *values, const char *nulls, long tcount, int expect)
{
	return run_plan(id, values, nulls, tcount, expect, NULL);
}

/*
 * wl_store_result_duplicate runs write(arg), which stores results: a
 * result id another workload's result took (the caller's check saw it free,
 * or a single completion's statement did not look) violates runs_result_key:
 * that is WORKLOAD_RESULT_DUPLICATE, naming result_id (NULL: one of a
 * batch), and the transaction ends with it, as it would have with the
 * caller's refusal.
 */
void
wl_store_result_duplicate(const char *result_id, void (*write) (void *), void *arg)
{
	MemoryContext here = CurrentMemoryContext;

	PG_TRY();
	{
		write(arg);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(here);
		e = CopyErrorData();
		if (e->sqlerrcode != ERRCODE_UNIQUE_VIOLATION)
			PG_RE_THROW();
		FlushErrorState();
		if (result_id)
			wl_refuse(WL_E_RESULT_DUPLICATE,
					  errdetail("Result \"%s\" belongs to another workload.", result_id));
		wl_refuse(WL_E_RESULT_DUPLICATE,
				  errdetail("A result id of this batch belongs to another workload."));
	}
	PG_END_TRY();
}

typedef struct ResultRun
{
	WlPlanId	id;
	Datum	   *values;
	const char *nulls;
	int			expect;
	SPITupleTable *t;
} ResultRun;

static void
result_run(void *arg)
{
	ResultRun  *r = arg;

	r->t = run_plan(r->id, r->values, r->nulls, 0, r->expect, NULL);
}

/*
 * wl_store_run_results is wl_store_run for a statement that stores results
 * (a plain insert: a speculative one, ON CONFLICT, logs a confirmation
 * record and takes a lock more each); a result id taken is
 * WORKLOAD_RESULT_DUPLICATE (wl_store_result_duplicate).
 */
SPITupleTable *
wl_store_run_results(WlPlanId id, Datum *values, const char *nulls, int expect,
					 const char *result_id)
{
	ResultRun	r = {id, values, nulls, expect, NULL};

	wl_store_result_duplicate(result_id, result_run, &r);
	return r.t;
}

/*
 * wl_store_run_latest is wl_store_run that sees what was committed before it
 * began, also in a REPEATABLE READ or SERIALIZABLE transaction (whose own
 * snapshot may predate it): for the writes one transaction makes on behalf
 * of rows another committed meanwhile, as PostgreSQL's foreign keys do.
 */
SPITupleTable *
wl_store_run_latest(WlPlanId id, Datum *values, const char *nulls, long tcount, int expect)
{
	if (!IsolationUsesXactSnapshot())
		return run_plan(id, values, nulls, tcount, expect, NULL);
	return run_plan(id, values, nulls, tcount, expect, GetLatestSnapshot());
}

Datum
wl_store_datum(SPITupleTable *t, int row, int col, bool *isnull)
{
	return SPI_getbinval(t->vals[row], t->tupdesc, col, isnull);
}

/*
 * expect_type: a column read as the wrong type is a bug in a statement's
 * column list; it is an error, never a read of the wrong bytes.
 */
static void
expect_type(SPITupleTable *t, int col, Oid a, Oid b)
{
	Oid			type = SPI_gettypeid(t->tupdesc, col);

	if (type != a && type != b)
		elog(ERROR, "workload statement column %d is of type %u, not %u", col, type, a);
}

char *
wl_store_text(SPITupleTable *t, int row, int col)
{
	bool		isnull;
	Datum		d;

	expect_type(t, col, TEXTOID, TEXTOID);
	d = SPI_getbinval(t->vals[row], t->tupdesc, col, &isnull);
	return isnull ? NULL : TextDatumGetCString(d);
}

int64
wl_store_int(SPITupleTable *t, int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(t->vals[row], t->tupdesc, col, &isnull);
	Oid			type = SPI_gettypeid(t->tupdesc, col);

	expect_type(t, col, INT4OID, INT8OID);
	if (isnull)
		return 0;
	if (type == INT4OID)
		return DatumGetInt32(d);
	return DatumGetInt64(d);
}

bool
wl_store_bool(SPITupleTable *t, int row, int col)
{
	bool		isnull;
	Datum		d;

	expect_type(t, col, BOOLOID, BOOLOID);
	d = SPI_getbinval(t->vals[row], t->tupdesc, col, &isnull);

	return !isnull && DatumGetBool(d);
}

/*
 * wl_store_lock_moved: whether row i of a LOCKED_SEEN statement (the
 * workload's state and whether it has a run row as read) is not what its
 * locks found: a queue row or a run row the snapshot sees
 * that the lock did not get (held by another transaction, which SKIP LOCKED
 * passed over, or deleted by one that committed while the lock waited), or
 * a workload the snapshot shows READY with no run row whose queue row is
 * gone (a claim committed meanwhile: its run row is newer than the snapshot).
 */
bool
wl_store_lock_moved(SPITupleTable *t, int i, WlState state, bool in_run)
{
	int			queued = SPI_fnumber(t->tupdesc, "queued");

	return wl_store_bool(t, i, queued + 1) || wl_store_bool(t, i, queued + 2) ||
		(state == WL_READY && !in_run && !wl_store_bool(t, i, queued));
}

/*
 * wl_store_read_locked runs the LOCKED_SEEN statement id (one row at most;
 * nulls as wl_store_run's) and hands its row to read, which keeps what it
 * needs from it in into and answers whether the row moved while the
 * statement's locks waited (wl_store_lock_moved).  A row that moved is read
 * again by the statement run anew (READ COMMITTED: a new snapshot, which
 * sees the claim that committed), or with skip answered -1 at once; else 1
 * found, 0 no row.  Claims would have to commit 100 times in a row between
 * one run and the next for it to give up.
 */
int
wl_store_read_locked(WlPlanId id, Datum *args, const char *nulls, bool skip,
					 bool (*read) (SPITupleTable *t, void *into), void *into, const char *name)
{
	for (int tries = 0; tries < 100; tries++)
	{
		SPITupleTable *t = wl_store_run(id, args, nulls, 1, SPI_OK_SELECT);
		int			got = SPI_processed == 0 ? 0 : !read(t, into) ? 1 : skip ? -1 : 2;

		SPI_freetuptable(t);
		if (got != 2)
			return got;
	}
	elog(ERROR, "workload \"%s\" could not be locked: claims kept taking it", name);
	return 0;
}

/* wl_store_run_bool runs a SELECT of one row (no NULL arguments) and answers its first column. */
bool
wl_store_run_bool(WlPlanId id, Datum *values)
{
	SPITupleTable *t = wl_store_run(id, values, NULL, 1, SPI_OK_SELECT);
	bool		yes = wl_store_bool(t, 0, 1);

	SPI_freetuptable(t);
	return yes;
}

TimestampTz
wl_store_ts(SPITupleTable *t, int row, int col, bool *isnull)
{
	Datum		d;

	expect_type(t, col, TIMESTAMPTZOID, TIMESTAMPTZOID);
	d = SPI_getbinval(t->vals[row], t->tupdesc, col, isnull);

	return *isnull ? 0 : DatumGetTimestampTz(d);
}

/* wl_store_jsonb: a copy, in the current memory context, of a jsonb column (NULL if null). */
Jsonb *
wl_store_jsonb(SPITupleTable *t, int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(t->vals[row], t->tupdesc, col, &isnull);

	return isnull ? NULL : DatumGetJsonbPCopy(d);
}

/* wl_store_array: a copy, in the current memory context, of an array column (NULL if null). */
ArrayType *
wl_store_array(SPITupleTable *t, int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(t->vals[row], t->tupdesc, col, &isnull);

	return isnull ? NULL : DatumGetArrayTypePCopy(d);
}

/*
 * wl_store_run_text runs a statement that is not one of the saved plans (a
 * maintenance statement on one Citus shard, whose name is in its text),
 * with the raw-write guard open as wl_store_run has it.  Returns its rows
 * (valid until SPI_finish).
 */
SPITupleTable *
wl_store_run_text(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
				  int expect)
{
	volatile int rc = 0;

	api_writing++;
	PG_TRY();
	{
		rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
	}
	PG_FINALLY();
	{
		api_writing--;
	}
	PG_END_TRY();
	if (rc != expect)
		elog(ERROR, "workload statement on a shard: expected %s, got %s",
			 SPI_result_code_string(expect), SPI_result_code_string(rc));
	return SPI_tuptable;
}

/* wl_store_int8_array: a bigint[] of n values */
ArrayType *
wl_store_int8_array(int64 *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(v[i]);
	return wl_array_of(d, NULL, n, INT8OID);
}

/* wl_store_ts_arg: a timestamptz parameter, NULL (in *null) when ts is 0. */
Datum
wl_store_ts_arg(TimestampTz ts, char *null)
{
	*null = ts != 0 ? ' ' : 'n';
	return TimestampTzGetDatum(ts);
}

/* wl_store_state_arg: a workload_state parameter. */
Datum
wl_store_state_arg(int state)
{
	return wl_catalog_state_datum((WlState) state);
}

/*
 * copy_into_itself: whether this insert is a COPY into this very table FROM
 * the client or a file: the statement a restore loads each table with.
 */
static bool
copy_into_itself(TriggerData *td)
{
	PlannedStmt *ps;
	CopyStmt   *copy;

	if (!TRIGGER_FIRED_BY_INSERT(td->tg_event))
		return false;
	if (ActivePortal == NULL || list_length(ActivePortal->stmts) != 1)
		return false;
	ps = linitial_node(PlannedStmt, ActivePortal->stmts);
	if (ps->commandType != CMD_UTILITY || ps->utilityStmt == NULL || !IsA(ps->utilityStmt, CopyStmt))
		return false;
	copy = (CopyStmt *) ps->utilityStmt;
	return copy->is_from && copy->relation != NULL && copy->query == NULL &&
		RangeVarGetRelid(copy->relation, NoLock, true) == RelationGetRelid(td->tg_relation);
}

/*
 * restore_load: whether this insert is a restore loading the table, as
 * pg_restore does with the documented command (docs/operations.md, "Backup
 * and restore"): a COPY into this very table (copy_into_itself), by a
 * superuser, under session_replication_role = replica (which only a
 * superuser may set).  Nothing else passes: no INSERT, UPDATE, DELETE or
 * TRUNCATE in that mode, no COPY in any other, no COPY by a role that is not
 * a superuser.
 */
static bool
restore_load(TriggerData *td)
{
	return SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA && superuser() &&
		copy_into_itself(td);
}

/*
 * restore_refused: whether a refused insert is a restore made without the
 * documented setting (a plain pg_restore, or psql running a plain dump):
 * the dump's COPY into the table itself, in a session where row_security is
 * off, which every script pg_dump writes and every pg_restore sets first.
 * Its refusal then says how to restore.
 */
static bool
restore_refused(TriggerData *td)
{
	return !row_security && copy_into_itself(td);
}

/*
 * wl_store_direct: whether the paths that write without a plan (the direct
 * claim, the fenced calls, the appenders) may run: on a single node, and on
 * Citus inside a shard scope (store_shard.c: a call on the node that holds
 * its tenant, on the node's shards), not under workload.statement_path,
 * which runs every call through its statements.
 */
bool
wl_store_direct(void)
{
	return !wl_statement_path && (!wl_store_citus() || wl_store_shard_active());
}

/*
 * wl_store_citus: whether Citus is installed in this database (then the
 * multi-table statements are planned per call, and the claim runs as one
 * statement per table).  Asked again when the catalog generation changes.
 */
bool
wl_store_citus(void)
{
	uint64		gen = wl_catalog_generation();

	if (gen != citus_generation)
	{
		citus_here = OidIsValid(get_extension_oid("citus", true));
		citus_generation = gen;
	}
	return citus_here;
}

/*
 * citus_sent: this backend runs a statement Citus sent from another node
 * (application_name as Citus's IsCitusInternalBackend tests it, or its
 * rebalancer), and it is the top-level statement of that backend (at most
 * top executors deep), not one planned inside a function Citus delegated
 * here.  run_command_on_* ('citus_run_command gpid=') is a user's command
 * and does not count.  Any session may set its application_name, so the
 * name alone proves nothing: Citus must be installed in this database, and
 * the session must be one only Citus (or a superuser) opens, a superuser's;
 * Citus connects to a node as the role that planned the statement, and our
 * statements are planned inside the API, as the extension's owner.  Never
 * true on a single node.
 */
static bool
citus_sent(int top)
{
	const char *app;

	if (exec_nest > top)
		return false;
	app = GetConfigOption("application_name", true, false);
	if (app == NULL || (strncmp(app, "citus_internal gpid=", 20) != 0 &&
						strncmp(app, "citus_rebalancer gpid=", 22) != 0))
		return false;
	return IsTransactionState() && superuser_arg(GetSessionUserId()) &&
		OidIsValid(get_extension_oid("citus", true));
}

static void
count_run(QueryDesc *qd, ScanDirection dir, uint64 count, bool once)
{
	exec_nest++;
	PG_TRY();
	{
		if (prev_run_hook)
			prev_run_hook(qd, dir, count, once);
		else
			standard_ExecutorRun(qd, dir, count, once);
	}
	PG_FINALLY();
	{
		exec_nest--;
	}
	PG_END_TRY();
}

static void
count_finish(QueryDesc *qd)
{
	exec_nest++;
	PG_TRY();
	{
		if (prev_finish_hook)
			prev_finish_hook(qd);
		else
			standard_ExecutorFinish(qd);
	}
	PG_FINALLY();
	{
		exec_nest--;
	}
	PG_END_TRY();
}

/*
 * refuse_where_planned: on Citus, a raw INSERT/UPDATE/DELETE (or COPY FROM)
 * on one of our tables is refused on the node where it is planned, before
 * Citus ships it to a worker, where it would arrive as Citus's own top-level
 * statement.  On a single node the
 * statement triggers alone decide.
 */
static bool
refuse_where_planned(List *range_table, bool ereport_on_violation)
{
	ListCell   *lc;
	Oid			ns = InvalidOid;

	if (prev_perms_hook && !prev_perms_hook(range_table, ereport_on_violation))
		return false;
	if (api_writing > 0 || citus_sent(0))
		return true;
	foreach(lc, range_table)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind != RTE_RELATION ||
			(rte->requiredPerms & (ACL_INSERT | ACL_UPDATE | ACL_DELETE)) == 0)
			continue;
		if (!OidIsValid(ns))
			ns = get_namespace_oid("workload", true);
		if (!OidIsValid(ns) || get_rel_namespace(rte->relid) != ns)
			continue;
		if (creating_extension && CurrentExtensionObject == get_extension_oid("workload", true))
			return true;
		if (!IsTransactionState() || !OidIsValid(get_extension_oid("citus", true)))
			return true;
		wl_refuse(WL_E_RAW_WRITE_DENIED,
				  errdetail("Table \"workload.%s\" is written only by the workload_* functions.",
							get_rel_name(rte->relid)));
	}
	return true;
}

/*
 * wl_store_init installs the executor hooks of the raw-write guard, and
 * the planner hooks that plan our statements by keys (from _PG_init).
 */
void
wl_store_init(void)
{
	prev_run_hook = ExecutorRun_hook;
	ExecutorRun_hook = count_run;
	prev_finish_hook = ExecutorFinish_hook;
	ExecutorFinish_hook = count_finish;
	prev_perms_hook = ExecutorCheckPerms_hook;
	ExecutorCheckPerms_hook = refuse_where_planned;
	prev_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = as_if_grown;
	prev_planner_hook = planner_hook;
	planner_hook = plan_by_keys;
}

/*
 * workload.refuse_raw_write(): the statement trigger on every table.  A
 * write that does not come from a workload plan (or from the extension's own
 * install or update script, or a superuser's restore: restore_load) is
 * WORKLOAD_RAW_WRITE_DENIED.
 */
PG_FUNCTION_INFO_V1(workload_refuse_raw_write);
Datum
workload_refuse_raw_write(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "workload.refuse_raw_write must be called as a trigger");
	/*
	 * our own install and update scripts write as the extension itself; on
	 * Citus, the statement another node's Citus sent here (the shard's part
	 * of a statement planned, and checked, there) is the top-level one
	 */
	if (api_writing == 0 && !(creating_extension &&
							  CurrentExtensionObject == get_extension_oid("workload", true)) &&
		!restore_load(td) && !citus_sent(1))
		wl_refuse(WL_E_RAW_WRITE_DENIED,
				  errdetail("Table \"workload.%s\" is written only by the workload_* functions.",
							RelationGetRelationName(td->tg_relation)),
				  restore_refused(td) ?
				  errhint("Restore as a superuser with PGOPTIONS='-c session_replication_role=replica' pg_restore --single-transaction; see \"Backup and restore\" in docs/operations.md.") : 0);
	return PointerGetDatum(NULL);
}
