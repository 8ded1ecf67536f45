/* wlprobe: the SPI shapes of workload's store.c, for probing Citus. */
#include "postgres.h"
#include "fmgr.h"
#include "executor/spi.h"
#include "commands/trigger.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "miscadmin.h"
#include "commands/async.h"
#include "access/xact.h"
#include "utils/memutils.h"
#include "postmaster/postmaster.h"

PG_MODULE_MAGIC;

#include "executor/executor.h"
#include "catalog/namespace.h"
#include "parser/parsetree.h"

void _PG_init(void);
static ExecutorCheckPerms_hook_type prev_perms_hook = NULL;
static ExecutorRun_hook_type prev_run_hook = NULL;
static ExecutorFinish_hook_type prev_finish_hook = NULL;
static int exec_nest = 0;		/* executors running in this backend */
static bool executor_check = true;	/* wlprobe.executor_check */
static int api_writing;

/*
 * citus_backend: the statement came from another node through Citus (a shard-level
 * command of a statement planned, and checked, there), or from Citus's rebalancer.
 * run_command_on_* backends ('citus_run_command gpid=') are users and do not count.
 */
static bool
citus_backend_any(void)
{
	const char *app = GetConfigOption("application_name", true, false);

	return app != NULL && (strncmp(app, "citus_internal gpid=", 20) == 0 ||
						   strncmp(app, "citus_rebalancer gpid=", 22) == 0);
}

/*
 * citus_backend: as above, and the statement is the one Citus sent (top level), not
 * one planned inside a function that Citus delegated to this node.
 */
static bool
citus_backend(int top)
{
	return exec_nest <= top && citus_backend_any();
}

static void
probe_run_hook(QueryDesc *qd, ScanDirection dir, uint64 count, bool once)
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
probe_finish_hook(QueryDesc *qd)
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
 * probe_check_perms: on the node where a statement is planned, refuse a write to a
 * table in schema g (a shell table or a shard) unless our API is running it or Citus
 * sent it.  Runs for every statement's range table, COPY FROM included.
 */
static bool
probe_check_perms(List *rangeTable, bool ereport_on_violation)
{
	ListCell *lc;

	if (prev_perms_hook && !prev_perms_hook(rangeTable, ereport_on_violation))
		return false;
	if (!executor_check || api_writing > 0 || citus_backend(0))
		return true;
	foreach(lc, rangeTable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind != RTE_RELATION ||
			(rte->requiredPerms & (ACL_INSERT | ACL_UPDATE | ACL_DELETE)) == 0)
			continue;
		if (get_rel_namespace(rte->relid) == get_namespace_oid("g", true))
			ereport(ERROR, (errmsg("raw write denied (executor check) on %s (port %d)",
								   get_rel_name(rte->relid), PostPortNumber)));
	}
	return true;
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("wlprobe.executor_check",
							 "Refuse raw writes to schema g where they are planned.",
							 NULL, &executor_check, true, PGC_SIGHUP, 0, NULL, NULL, NULL);
	prev_perms_hook = ExecutorCheckPerms_hook;
	ExecutorCheckPerms_hook = probe_check_perms;
	prev_run_hook = ExecutorRun_hook;
	ExecutorRun_hook = probe_run_hook;
	prev_finish_hook = ExecutorFinish_hook;
	ExecutorFinish_hook = probe_finish_hook;
}

#define MAXPLANS 64
typedef struct { char *sql; int opts; int nargs; SPIPlanPtr plan; } Cached;
static Cached cache[MAXPLANS];
static int ncache = 0;

static SPIPlanPtr
get_plan(const char *sql, int opts, int nargs)
{
	Oid types[32];
	SPIPlanPtr p;
	for (int i = 0; i < ncache; i++)
		if (cache[i].opts == opts && cache[i].nargs == nargs && strcmp(cache[i].sql, sql) == 0)
			return cache[i].plan;
	for (int i = 0; i < nargs; i++)
		types[i] = TEXTOID;
	p = SPI_prepare_cursor(sql, nargs, types,
						   opts == 1 ? CURSOR_OPT_GENERIC_PLAN : opts == 2 ? CURSOR_OPT_CUSTOM_PLAN : 0);
	if (p == NULL)
		elog(ERROR, "prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(p) != 0)
		elog(ERROR, "keepplan failed");
	if (ncache >= MAXPLANS)
		elog(ERROR, "plan cache full");
	cache[ncache].sql = MemoryContextStrdup(TopMemoryContext, sql);
	cache[ncache].opts = opts;
	cache[ncache].nargs = nargs;
	cache[ncache].plan = p;
	ncache++;
	return p;
}

/*
 * probe_run(tenant text, sql text, opts int, args text[]) -> text
 * $1 = tenant, $2.. = args, all text.  opts 0 default, 1 generic, 2 custom.
 * Returns 'n=<rows> v=<first column of first row>'.
 */
PG_FUNCTION_INFO_V1(probe_run);
Datum
probe_run(PG_FUNCTION_ARGS)
{
	text *tenant;
	char *sql;
	int opts;
	Datum values[32];
	char nulls[32];
	int nargs = 1;
	volatile int rc = 0;
	char *first = NULL;
	uint64 n;
	StringInfoData out;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	tenant = PG_GETARG_TEXT_PP(0);
	sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
	opts = PG_GETARG_INT32(2);
	values[0] = PointerGetDatum(tenant);
	nulls[0] = ' ';
	if (!PG_ARGISNULL(3))
	{
		ArrayType *a = PG_GETARG_ARRAYTYPE_P(3);
		Datum *elems;
		bool *enulls;
		int ne;
		deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &ne);
		for (int i = 0; i < ne; i++)
		{
			values[nargs] = elems[i];
			nulls[nargs] = enulls[i] ? 'n' : ' ';
			nargs++;
		}
	}
	SPI_connect();
	{
		SPIPlanPtr p = get_plan(sql, opts, nargs);
		api_writing++;
		PG_TRY();
		{
			rc = SPI_execute_plan(p, values, nulls, false, 0);
		}
		PG_FINALLY();
		{
			api_writing--;
		}
		PG_END_TRY();
	}
	if (rc < 0)
		elog(ERROR, "execute failed: %s", SPI_result_code_string(rc));
	n = SPI_processed;
	if (SPI_tuptable && n > 0)
		first = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	initStringInfo(&out);
	appendStringInfo(&out, "n=%llu v=%s", (unsigned long long) n, first ? first : "");
	{
		text *t = cstring_to_text(out.data);
		text *r;
		r = (text *) SPI_palloc(VARSIZE(t));
		memcpy(r, t, VARSIZE(t));
		SPI_finish();
		PG_RETURN_TEXT_P(r);
	}
}

/* probe_where(): port, application_name, in-API flag of this backend */
PG_FUNCTION_INFO_V1(probe_where);
Datum
probe_where(PG_FUNCTION_ARGS)
{
	char buf[256];
	snprintf(buf, sizeof buf, "port=%d pid=%d app=%s flag=%d", PostPortNumber, MyProcPid,
			 GetConfigOption("application_name", true, false), api_writing);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/*
 * probe_guard(): statement trigger like workload.refuse_raw_write, reporting
 * where it fires.  Arg 0 of the trigger: 'strict' (refuse unless flag) or
 * 'report' (never refuse).
 */
PG_FUNCTION_INFO_V1(probe_guard);
Datum
probe_guard(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	const char *mode = td->tg_trigger->tgnargs > 0 ? td->tg_trigger->tgargs[0] : "strict";
	const char *app = GetConfigOption("application_name", true, false);

	ereport(WARNING, (errmsg("guard fired: port=%d rel=%s op=%s app=%s flag=%d nest=%d",
							 PostPortNumber, RelationGetRelationName(td->tg_relation),
							 TRIGGER_FIRED_BY_INSERT(td->tg_event) ? "INSERT" :
							 TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? "UPDATE" :
							 TRIGGER_FIRED_BY_DELETE(td->tg_event) ? "DELETE" : "TRUNCATE",
							 app ? app : "", api_writing, exec_nest)));
	if (strcmp(mode, "citus") == 0 && api_writing == 0 && !citus_backend(1))
		ereport(ERROR, (errmsg("raw write denied on %s (port %d)",
							   RelationGetRelationName(td->tg_relation), PostPortNumber)));
	if (strcmp(mode, "strict") == 0 && api_writing == 0)
		ereport(ERROR, (errmsg("raw write denied on %s (port %d)",
							   RelationGetRelationName(td->tg_relation), PostPortNumber)));
	return PointerGetDatum(NULL);
}

/*
 * probe_run_many(tenant text, sqls text[], opts int, args text[]) -> text
 * Runs each statement in turn (same parameters: $1 tenant, $2.. args) and
 * returns the results joined by ' | '.
 */
PG_FUNCTION_INFO_V1(probe_run_many);
Datum
probe_run_many(PG_FUNCTION_ARGS)
{
	ArrayType *sa;
	int opts;
	Datum *sqls;
	bool *snulls;
	int ns;
	Datum values[32];
	char nulls[32];
	int nargs = 1;
	StringInfoData out;
	text *r;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	sa = PG_GETARG_ARRAYTYPE_P(1);
	opts = PG_GETARG_INT32(2);
	values[0] = PG_GETARG_DATUM(0);
	nulls[0] = ' ';
	if (!PG_ARGISNULL(3))
	{
		ArrayType *a = PG_GETARG_ARRAYTYPE_P(3);
		Datum *elems;
		bool *enulls;
		int ne;
		deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &ne);
		for (int i = 0; i < ne; i++)
		{
			values[nargs] = elems[i];
			nulls[nargs] = enulls[i] ? 'n' : ' ';
			nargs++;
		}
	}
	deconstruct_array(sa, TEXTOID, -1, false, TYPALIGN_INT, &sqls, &snulls, &ns);
	initStringInfo(&out);
	SPI_connect();
	for (int i = 0; i < ns; i++)
	{
		SPIPlanPtr p = get_plan(TextDatumGetCString(sqls[i]), opts, nargs);
		volatile int rc = 0;
		char *first = NULL;
		api_writing++;
		PG_TRY();
		{
			rc = SPI_execute_plan(p, values, nulls, false, 0);
		}
		PG_FINALLY();
		{
			api_writing--;
		}
		PG_END_TRY();
		if (rc < 0)
			elog(ERROR, "execute failed: %s", SPI_result_code_string(rc));
		if (SPI_tuptable && SPI_processed > 0)
			first = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		appendStringInfo(&out, "%sn=%llu v=%s", i ? " | " : "", (unsigned long long) SPI_processed,
						 first ? first : "");
	}
	SPI_finish();
	r = cstring_to_text(out.data);
	PG_RETURN_TEXT_P(r);
}

/*
 * probe_notify_deferred(channel, payload): a NOTIFY queued until the transaction
 * commits here: sent from the pre-commit callback when it commits locally, dropped
 * (with a WARNING) when it is prepared for two-phase commit, which refuses a NOTIFY.
 */
typedef struct Deferred { char *channel; char *payload; } Deferred;
static List *deferred = NIL;
static bool deferred_cb_registered = false;

static void
deferred_clear(void)
{
	ListCell *lc;

	foreach(lc, deferred)
	{
		Deferred *d = lfirst(lc);

		pfree(d->channel);
		pfree(d->payload);
		pfree(d);
	}
	list_free(deferred);
	deferred = NIL;
}

static void
deferred_cb(XactEvent event, void *arg)
{
	ListCell *lc;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			foreach(lc, deferred)
			{
				Deferred *d = lfirst(lc);

				Async_Notify(d->channel, d->payload);
			}
			deferred_clear();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (deferred != NIL)
				ereport(WARNING, (errmsg("deferred notify dropped on port %d: the transaction is prepared",
										 PostPortNumber)));
			deferred_clear();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			deferred_clear();
			break;
		default:
			break;
	}
}

PG_FUNCTION_INFO_V1(probe_notify_deferred);
Datum
probe_notify_deferred(PG_FUNCTION_ARGS)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	Deferred *d = palloc(sizeof(Deferred));

	d->channel = text_to_cstring(PG_GETARG_TEXT_PP(0));
	d->payload = text_to_cstring(PG_GETARG_TEXT_PP(1));
	deferred = lappend(deferred, d);
	MemoryContextSwitchTo(old);
	if (!deferred_cb_registered)
	{
		RegisterXactCallback(deferred_cb, NULL);
		deferred_cb_registered = true;
	}
	PG_RETURN_VOID();
}
