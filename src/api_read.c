/*
 * api_read.c: workload_get, workload_list, workload_history,
 * workload_stats.  Reads only.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api.h"
#include "args.h"
#include "authz.h"
#include "catalog.h"
#include "clock.h"
#include "compat.h"
#include "store_ops.h"

#define WL_MAX_LIST 10000

/* workload_get(workload_id) -> the whole document; WORKLOAD_NOT_FOUND if none the caller may see. */
PG_FUNCTION_INFO_V1(workload_get);
Datum
workload_get(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *id = wl_arg_id(fcinfo, 0, "workload_id");
	Jsonb	   *doc;

	WL_API_ROUTE(fcinfo, NULL, id);
	wl_api_begin(fcinfo, &api);
	doc = wl_store_document(id, true, wl_authz_caller());
	if (doc == NULL)
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	doc = wl_api_transfer(doc);
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/*
 * workload_list(tenant_id, application_id, state, lim) -> SETOF jsonb,
 * priority first, then oldest.  lim must be 1..10000.
 */
PG_FUNCTION_INFO_V1(workload_list);
Datum
workload_list(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *tenant;
	char	   *app;
	WlState		state = WL_CREATED;
	int			lim;
	int			n;
	Jsonb	  **docs;

	wl_args_require(fcinfo, "tenant_id", "application_id", NULL, "lim");
	lim = PG_GETARG_INT32(3);
	if (lim < 1 || lim > WL_MAX_LIST)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"lim\" must be from 1 to %d.", WL_MAX_LIST));
	tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	app = wl_arg_tenant(fcinfo, 1, "application_id");
	if (!PG_ARGISNULL(2))
		state = wl_catalog_state_from_oid(PG_GETARG_OID(2));

	WL_API_ROUTE(fcinfo, tenant, NULL);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_api_begin(fcinfo, &api);
	wl_authz_require_member(tenant, app);
	docs = wl_store_list(tenant, app, PG_ARGISNULL(2) ? NULL : &state, lim, &n);
	for (int i = 0; i < n; i++)
	{
		Datum		values[1] = {JsonbPGetDatum(docs[i])};
		bool		nulls[1] = {false};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	wl_api_end(&api);
	return (Datum) 0;
}

/* workload_history(workload_id) -> its events in order; WORKLOAD_NOT_FOUND if none. */
PG_FUNCTION_INFO_V1(workload_history);
Datum
workload_history(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *id = wl_arg_id(fcinfo, 0, "workload_id");
	WlEventRow *ev;
	int			n;

	WL_API_ROUTE(fcinfo, NULL, id);
	InitMaterializedSRF(fcinfo, 0);
	wl_api_begin(fcinfo, &api);
	if (wl_store_document(id, false, wl_authz_caller()) == NULL)
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	ev = wl_store_history(id, &n);
	for (int i = 0; i < n; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {false, false, false, false, false, false, false};

		values[0] = Int64GetDatum(ev[i].sequence);
		values[1] = CStringGetTextDatum(ev[i].event_type);
		values[2] = ev[i].has_from ? wl_catalog_state_datum(ev[i].from) : (Datum) 0;
		nulls[2] = !ev[i].has_from;
		values[3] = wl_catalog_state_datum(ev[i].to);
		values[4] = CStringGetTextDatum(ev[i].actor);
		values[5] = TimestampTzGetDatum(ev[i].at);
		values[6] = JsonbPGetDatum(ev[i].evidence);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	wl_api_end(&api);
	return (Datum) 0;
}

/*
 * workload_stats(tenant_id, application_id) -> jsonb: counts per state, due
 * and delayed READY work, the age of the oldest due READY workload, held
 * and dead-lettered work, completions and failures in the last minute.
 * Naming a tenant the caller is not a member of is WORKLOAD_UNAUTHORIZED.
 */
PG_FUNCTION_INFO_V1(workload_stats);
Datum
workload_stats(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	char	   *app = wl_arg_tenant(fcinfo, 1, "application_id");
	Jsonb	   *stats;

	WL_API_ROUTE(fcinfo, tenant, NULL);
	wl_api_begin(fcinfo, &api);
	wl_authz_require_member(tenant, app);
	stats = wl_api_transfer(wl_store_stats(tenant, app, wl_now()));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(stats);
}
