/*
 * api_route.c: a call for one tenant runs on one node (SPEC section 1,
 * "Sharding by tenant is real"; docs/operations.md, "Sharding by tenant").
 *
 * - The tenant-first overloads (workload_start(tenant_id, workload_id, ...)
 *   and the others a worker makes by workload id) are the original function
 *   with the tenant in front: the call looks for its workload in that tenant
 *   only (WORKLOAD_NOT_FOUND otherwise), and on Citus needs no lookup to know
 *   where the workload is.
 * - On a Citus cluster whose tables are distributed, a call made on a node
 *   that does not hold its tenant is sent whole to the node that does:
 *   workload.route_<name>(tenant, <the arguments>, context), which Citus
 *   delegates there (force_delegation, co-located with workload.workload_rows),
 *   runs the same function there as the same caller with the settings the
 *   call depends on (ROUTED_SETTINGS), and its answer comes back as the
 *   answer.  The public functions are never distributed
 *   themselves (a distributed function called over a one-row subquery
 *   crashes Citus 13.2's coordinator backend).
 *
 * Both are one C function each for every function they serve: the original
 * is found by name and argument types, and called with the arguments moved.
 * Layer 4.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "api.h"
#include "args.h"
#include "authz.h"
#include "catalog.h"
#include "guc.h"
#include "jsonb_util.h"
#include "store_ops.h"

#define ROUTE_PREFIX "route_"

/*
 * The settings of the calling session a routed call runs with: the time
 * zone its documents' times are written in, and the workload settings a
 * session may change (the clock override of the tests among them).
 */
static const char *const ROUTED_SETTINGS[] = {
	"TimeZone", "workload.clock_override", "workload.run_authority_ttl",
	"workload.claim_full_scan_every", "workload.claim_full_scan_interval", NULL
};

/* whether this node runs a call another sent it (a route_* function) */
static bool routed_active = false;

/* the next wl_api_route is the call in_shards makes again: it runs here */
static bool shard_reentry = false;


/*
 * original: the function a tenant-first overload or a route_* function
 * stands for: the same name (without ROUTE_PREFIX), in the extension's API
 * schema, taking this function's arguments less `front` at the front and
 * `back` at the back.  Looked up once per FmgrInfo.
 */
static FmgrInfo *
original(FunctionCallInfo fcinfo, int front, int back, bool route)
{
	FmgrInfo   *fl = fcinfo->flinfo;

	if (fl->fn_extra == NULL)
	{
		HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fl->fn_oid));
		Form_pg_proc p;
		char	   *name;
		char	   *nsp;
		Oid			oid;
		FmgrInfo   *orig;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for function %u", fl->fn_oid);
		p = (Form_pg_proc) GETSTRUCT(tup);
		name = pstrdup(NameStr(p->proname));
		if (route)
		{
			if (strncmp(name, ROUTE_PREFIX, strlen(ROUTE_PREFIX)) != 0)
				elog(ERROR, "workload: %s is not a routed function", name);
			name += strlen(ROUTE_PREFIX);
			nsp = get_namespace_name(wl_catalog_api_schema());
		}
		else
			nsp = get_namespace_name(p->pronamespace);
		oid = LookupFuncName(list_make2(makeString(nsp), makeString(name)),
							 p->pronargs - front - back, p->proargtypes.values + front, false);
		ReleaseSysCache(tup);
		orig = MemoryContextAllocZero(fl->fn_mcxt, sizeof(FmgrInfo));
		fmgr_info_cxt(oid, orig, fl->fn_mcxt);
		fl->fn_extra = orig;
	}
	return (FmgrInfo *) fl->fn_extra;
}

/* call_original calls orig with n of this call's arguments, from `first` on. */
static Datum
call_original(FunctionCallInfo fcinfo, FmgrInfo *orig, int first, int n)
{
	LOCAL_FCINFO(inner, FUNC_MAX_ARGS);
	volatile Datum result = (Datum) 0;

	InitFunctionCallInfoData(*inner, orig, n, fcinfo->fncollation, fcinfo->context,
							 fcinfo->resultinfo);
	for (int i = 0; i < n; i++)
		inner->args[i] = fcinfo->args[first + i];
	result = FunctionCallInvoke(inner);
	fcinfo->isnull = inner->isnull;
	return result;
}

/*
 * call_in_tenant: the original, with the call's rows looked for in tenant
 * only; the tenant a call around this one named is put back after it.
 */
static Datum
call_in_tenant(FunctionCallInfo fcinfo, FmgrInfo *orig, const char *tenant, int first, int n)
{
	char	   *outer = wl_store_call_tenant() ? pstrdup(wl_store_call_tenant()) : NULL;
	volatile Datum result = (Datum) 0;

	wl_store_set_call_tenant(tenant);
	PG_TRY();
	{
		result = call_original(fcinfo, orig, first, n);
	}
	PG_FINALLY();
	{
		wl_store_set_call_tenant(outer);
	}
	PG_END_TRY();
	return result;
}

/*
 * workload_tenant_first(tenant_id, <the original's arguments>): every
 * tenant-first overload.
 */
PG_FUNCTION_INFO_V1(workload_tenant_first);
Datum
workload_tenant_first(PG_FUNCTION_ARGS)
{
	const char *tenant;

	wl_args_require(fcinfo, "tenant_id");
	tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	return call_in_tenant(fcinfo, original(fcinfo, 1, 0, false), tenant, 1, PG_NARGS() - 1);
}

/* routed_context: {"caller": role, <each of ROUTED_SETTINGS>: its value} */
static Jsonb *
routed_context(const char *caller)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_str(&b, "caller", caller);
	for (int i = 0; ROUTED_SETTINGS[i]; i++)
		wl_json_str(&b, ROUTED_SETTINGS[i], pstrdup(GetConfigOption(ROUTED_SETTINGS[i], false, false)));
	return wl_json_end(&b);
}

/* apply_context sets ROUTED_SETTINGS as the sending session had them, until AtEOXact_GUC. */
static void
apply_context(Jsonb *context)
{
	for (int i = 0; ROUTED_SETTINGS[i]; i++)
	{
		char	   *v = wl_json_get_text(&context->root, ROUTED_SETTINGS[i]);

		if (v != NULL)
			(void) set_config_option(ROUTED_SETTINGS[i], v, PGC_SUSET, PGC_S_SESSION,
									 GUC_ACTION_SAVE, true, 0, false);
	}
}

/*
 * workload_routed(tenant, <the original's arguments>, context): every
 * workload.route_* function, run on the node Citus delegated it to, as the
 * caller the sending node named and with its settings (only the
 * extension's owner may call them).
 */
PG_FUNCTION_INFO_V1(workload_routed);
Datum
workload_routed(PG_FUNCTION_ARGS)
{
	int			n = PG_NARGS();
	FmgrInfo   *orig = original(fcinfo, 1, 1, true);
	char	   *tenant;
	char	   *caller;
	Jsonb	   *context;
	bool		outer_active = routed_active;
	int			nest;
	volatile Datum result = (Datum) 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(n - 1))
		wl_refuse(WL_E_INVALID, errdetail("A routed call needs its tenant and its context."));
	tenant = text_to_cstring(PG_GETARG_TEXT_PP(0));
	context = PG_GETARG_JSONB_P(n - 1);
	caller = JB_ROOT_IS_OBJECT(context) ? wl_json_get_text(&context->root, "caller") : NULL;
	if (caller == NULL)
		wl_refuse(WL_E_INVALID, errdetail("A routed call's context names its caller (a string)."));
	nest = NewGUCNestLevel();
	apply_context(context);
	routed_active = true;
	wl_authz_route_as(caller);
	PG_TRY();
	{
		result = call_in_tenant(fcinfo, orig, tenant, 1, n - 2);
	}
	PG_FINALLY();
	{
		routed_active = outer_active;
		wl_authz_route_as(NULL);
	}
	PG_END_TRY();
	AtEOXact_GUC(true, nest);
	return result;
}

/*
 * remember_workloads: the workloads a routed call answered about (a column
 * workload_id of its rows, or the workload_id of its jsonb answer) are
 * this tenant's, so that this backend's next calls on them go where they
 * are without asking the cluster.
 */
static void
remember_workloads(SPITupleTable *t, const char *tenant)
{
	int			col = SPI_fnumber(t->tupdesc, "workload_id");

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d;

		if (col > 0 && SPI_gettypeid(t->tupdesc, col) == TEXTOID)
		{
			d = SPI_getbinval(t->vals[i], t->tupdesc, col, &isnull);
			if (!isnull)
				wl_store_tenant_remember(TextDatumGetCString(d), tenant);
		}
		else if (SPI_gettypeid(t->tupdesc, 1) == JSONBOID)
		{
			d = SPI_getbinval(t->vals[i], t->tupdesc, 1, &isnull);
			if (!isnull)
			{
				char	   *id = wl_json_get_text(&DatumGetJsonbP(d)->root, "workload_id");

				if (id)
					wl_store_tenant_remember(id, tenant);
			}
		}
	}
}

/* routed_answer returns the routed call's rows as this call's answer. */
static Datum
routed_answer(FunctionCallInfo fcinfo, SPITupleTable *t)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		isnull;
	Datum		d;
	int16		len;
	bool		byval;

	if (fcinfo->flinfo->fn_retset)
	{
		InitMaterializedSRF(fcinfo, get_call_result_type(fcinfo, NULL, NULL) == TYPEFUNC_COMPOSITE ?
							0 : MAT_SRF_USE_EXPECTED_DESC);
		for (uint64 i = 0; i < SPI_processed; i++)
			tuplestore_puttuple(rsinfo->setResult, t->vals[i]);
		return (Datum) 0;
	}
	if (SPI_processed != 1)
		elog(ERROR, "workload: a routed call returned " UINT64_FORMAT " rows", SPI_processed);
	d = SPI_getbinval(t->vals[0], t->tupdesc, 1, &isnull);
	fcinfo->isnull = isnull;
	if (isnull)
		return (Datum) 0;
	get_typlenbyval(SPI_gettypeid(t->tupdesc, 1), &len, &byval);
	return SPI_datumTransfer(d, byval, len);
}

/*
 * in_shards: the call made again, inside the shard scope `saved` was left
 * by (wl_store_shard_enter: on this node's shards of tenant), with its rows
 * looked for in that tenant only; its answer.  The call made again passes
 * wl_api_route at once (shard_reentry).
 */
static Datum
in_shards(FunctionCallInfo fcinfo, const char *tenant, const WlShardScope *saved)
{
	char	   *outer = wl_store_call_tenant() ? pstrdup(wl_store_call_tenant()) : NULL;
	volatile Datum result = (Datum) 0;

	wl_store_set_call_tenant(tenant);
	shard_reentry = true;
	PG_TRY();
	{
		result = FunctionCallInvoke(fcinfo);
	}
	PG_FINALLY();
	{
		shard_reentry = false;
		wl_store_shard_leave(saved);
		wl_store_set_call_tenant(outer);
	}
	PG_END_TRY();
	return result;
}

/*
 * wl_api_route: on Citus, sends this call to the node holding its tenant
 * (named, or the tenant of workload_id) when this node does not, and puts
 * its answer in *result (a set-returning function's rows in its set):
 * true.  Where this node holds the tenant, the call runs here on the
 * node's shards (in_shards), and its answer is in *result too: true.
 * false where the call runs here as it is: one node, tables not
 * distributed, the tenant is not known (the call then finds the workload
 * missing), the call made again in its shard scope, or a call another node
 * sent that cannot run on the shards (workload.statement_path).  A call
 * another node sent for a tenant this node no longer holds (a shard move
 * took it away after the sender looked) is refused with
 * serialization_failure (40001): made again, it goes to the tenant's node.
 */
bool
wl_api_route(FunctionCallInfo fcinfo, const char *tenant, const char *workload_id,
			 Datum *result)
{
	WlApi		api;
	HeapTuple	tup;
	Form_pg_proc p;
	int			n;
	Oid		   *types;
	Datum	   *values;
	char	   *nulls;
	char	   *name;
	SPITupleTable *t;
	WlShardScope saved;

	if (shard_reentry)
	{
		shard_reentry = false;
		return false;
	}
	if (!wl_store_citus())
		return false;
	wl_api_begin(fcinfo, &api);
	if (tenant == NULL && routed_active)
		tenant = wl_store_call_tenant();
	if (tenant == NULL && workload_id != NULL)
		tenant = wl_store_tenant_of(workload_id);
	if (tenant == NULL || !wl_store_citus_distributed())
	{
		wl_api_end(&api);
		return false;
	}
	if (wl_store_shard_enter(tenant, &saved))
	{
		tenant = MemoryContextStrdup(TopTransactionContext, tenant);
		wl_api_end(&api);
		*result = in_shards(fcinfo, tenant, &saved);
		return true;
	}
	if (routed_active || wl_store_citus_tenant_local(tenant))
	{
		if (routed_active && !wl_statement_path && !wl_store_citus_tenant_local(tenant))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("tenant \"%s\" is no longer on this node", tenant),
					 errdetail("A shard move took the tenant's shards to another node after the call was sent here."),
					 errhint("Make the call again: it goes to the tenant's node.")));
		wl_api_end(&api);
		return false;
	}
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fcinfo->flinfo->fn_oid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", fcinfo->flinfo->fn_oid);
	p = (Form_pg_proc) GETSTRUCT(tup);
	name = pstrdup(NameStr(p->proname));
	n = p->pronargs + 2;
	types = palloc(sizeof(Oid) * n);
	values = palloc(sizeof(Datum) * n);
	nulls = palloc(n);
	types[0] = TEXTOID;
	values[0] = CStringGetTextDatum(tenant);
	nulls[0] = ' ';
	for (int i = 0; i < p->pronargs; i++)
	{
		types[i + 1] = p->proargtypes.values[i];
		values[i + 1] = fcinfo->args[i].value;
		nulls[i + 1] = fcinfo->args[i].isnull ? 'n' : ' ';
	}
	ReleaseSysCache(tup);
	types[n - 1] = JSONBOID;
	values[n - 1] = JsonbPGetDatum(routed_context(wl_authz_caller()->role));
	nulls[n - 1] = ' ';
	t = wl_store_citus_route(name, n, types, values, nulls);
	remember_workloads(t, tenant);
	*result = routed_answer(fcinfo, t);
	wl_api_end(&api);
	return true;
}

/*
 * wl_api_one_tenant: the tenant every spec of a batch names, or NULL when
 * they name none or several.  Several, on a sharded cluster, is refused
 * (WORKLOAD_INVALID): a call runs on the one node of its tenant.
 */
const char *
wl_api_one_tenant(FunctionCallInfo fcinfo, Jsonb **specs, int n)
{
	const char *tenant = NULL;
	WlApi		api;
	bool		sharded;

	for (int i = 0; i < n; i++)
	{
		const char *t = wl_json_get_text(&specs[i]->root, "tenant_id");

		if (t == NULL)
			continue;
		if (tenant != NULL && strcmp(t, tenant) != 0)
		{
			if (!wl_store_citus())
				return NULL;
			wl_api_begin(fcinfo, &api);
			sharded = wl_store_citus_distributed();
			wl_api_end(&api);
			if (sharded)
				wl_refuse(WL_E_INVALID,
						  errdetail("On a sharded cluster one call creates for one tenant; items name \"%s\" and \"%s\".",
									tenant, t),
						  errhint("Call workload_create_many once per tenant."));
			return NULL;
		}
		tenant = t;
	}
	return tenant;
}

/*
 * wl_api_batch_tenant: the tenant a batch call runs in: the one it named
 * (a tenant-first overload), else on a sharded cluster the one its
 * workloads are in (a batch naming workloads of several tenants there is
 * refused: WORKLOAD_INVALID); NULL on one node.
 */
const char *
wl_api_batch_tenant(FunctionCallInfo fcinfo, char **ids, int n)
{
	const char *tenant = wl_store_call_tenant();
	WlApi		api;

	if (tenant != NULL || !wl_store_citus() || routed_active)
		return tenant;
	wl_api_begin(fcinfo, &api);
	if (wl_store_citus_distributed())
	{
		for (int i = 0; i < n; i++)
		{
			const char *t = wl_store_tenant_of(ids[i]);

			if (t == NULL)
				continue;
			if (tenant != NULL && strcmp(t, tenant) != 0)
				wl_refuse(WL_E_INVALID,
						  errdetail("On a sharded cluster one call acts in one tenant; items are in \"%s\" and \"%s\".",
									tenant, t),
						  errhint("Call it once per tenant, with the tenant first."));
			tenant = t;
		}
		tenant = tenant ? MemoryContextStrdup(TopTransactionContext, tenant) : NULL;
	}
	wl_api_end(&api);
	return tenant;
}
