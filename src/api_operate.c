/*
 * api_operate.c: the client's and operator's side: workload_cancel,
 * workload_retry, workload_redrive, workload_timeout, workload_recover_expired,
 * workload_purge.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "api.h"
#include "args.h"
#include "catalog.h"
#include "clock.h"
#include "compat.h"
#include "operate.h"
#include "payload.h"
#include "recovery.h"
#include "store_ops.h"
#include "quota.h"

#define WL_MAX_PURGE_BATCH 100000

/* workload_cancel(workload_id, actor) -> the state it ends in (operate.c). */
PG_FUNCTION_INFO_V1(workload_cancel);
Datum
workload_cancel(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *id = wl_arg_id(fcinfo, 0, "workload_id");
	char	   *actor = wl_arg_id(fcinfo, 1, "actor");
	WlState		end;

	WL_API_ROUTE(fcinfo, NULL, id);
	wl_api_begin(fcinfo, &api);
	end = wl_cancel(id, actor);
	wl_api_end(&api);
	PG_RETURN_DATUM(wl_catalog_state_datum(end));
}

/* workload_retry(workload_id, actor): FAILED, TIMED_OUT or DEAD_LETTER -> READY, due now. */
PG_FUNCTION_INFO_V1(workload_retry);
Datum
workload_retry(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *id = wl_arg_id(fcinfo, 0, "workload_id");
	char	   *actor = wl_arg_id(fcinfo, 1, "actor");
	WlState		end;

	WL_API_ROUTE(fcinfo, NULL, id);
	wl_api_begin(fcinfo, &api);
	end = wl_retry(id, actor);
	wl_api_end(&api);
	PG_RETURN_DATUM(wl_catalog_state_datum(end));
}

/*
 * workload_redrive(tenant_id, application_id, actor, definition_id,
 * failure_kind, lim) -> the ids of the DEAD_LETTER workloads it put back to
 * READY, due now (workload_retry for each): at most lim (1 to
 * WL_MAX_BATCH), oldest first, of definition_id and last failure kind
 * failure_kind when these are not NULL.
 */
PG_FUNCTION_INFO_V1(workload_redrive);
Datum
workload_redrive(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	char	   *app = wl_arg_tenant(fcinfo, 1, "application_id");
	char	   *actor = wl_arg_id(fcinfo, 2, "actor");
	char	   *definition_id = wl_arg_id_or_null(fcinfo, 3, "definition_id");
	char	   *failure_kind = wl_arg_id_or_null(fcinfo, 4, "failure_kind");
	int			lim;
	int			n;
	char	  **ids;

	wl_args_require(fcinfo, NULL, NULL, NULL, NULL, NULL, "lim");
	lim = PG_GETARG_INT32(5);
	if (lim < 1 || lim > WL_MAX_BATCH)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"lim\" must be from 1 to %d.", WL_MAX_BATCH));
	WL_API_ROUTE(fcinfo, tenant, NULL);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_api_begin(fcinfo, &api);
	ids = wl_redrive(tenant, app, actor, definition_id, failure_kind, lim, &n);
	for (int i = 0; i < n; i++)
		wl_api_put_text(rsinfo, ids[i]);
	wl_api_end(&api);
	return (Datum) 0;
}

/*
 * workload_timeout(workload_id, actor) -> the state it ends in: TIMED_OUT,
 * then READY if "timeout" is in retry_on and attempts remain, else DEAD_LETTER.
 */
PG_FUNCTION_INFO_V1(workload_timeout);
Datum
workload_timeout(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *id = wl_arg_id(fcinfo, 0, "workload_id");
	char	   *actor = wl_arg_id(fcinfo, 1, "actor");
	WlState		end;

	WL_API_ROUTE(fcinfo, NULL, id);
	wl_api_begin(fcinfo, &api);
	end = wl_timeout(id, actor);
	wl_api_end(&api);
	PG_RETURN_DATUM(wl_catalog_state_datum(end));
}

/*
 * workload_recover_expired() -> the ids of the workloads it recovered: every
 * expired lease the caller may touch.  A workload whose recovery fails is
 * skipped with a WARNING, and the others are still recovered.
 */
PG_FUNCTION_INFO_V1(workload_recover_expired);
Datum
workload_recover_expired(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlTickReport r;
	ListCell   *lc;

	memset(&r, 0, sizeof(r));
	r.keep_ids = true;
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_api_begin(fcinfo, &api);
	wl_recovery_leases(0, &r);
	foreach(lc, r.recovered_ids)
		wl_api_put_text(rsinfo, (char *) lfirst(lc));
	wl_api_end(&api);
	return (Datum) 0;
}

/*
 * workload_purge(older_than, batch_size, include_dead_letter) -> how many it
 * deleted: one bounded batch of SUCCEEDED and CANCELLED (and, when asked,
 * DEAD_LETTER) workloads finished before now - older_than, with their
 * attempts, checkpoints, results, events and dependency rows.  Rows a
 * worker or client holds are skipped, so it is safe beside them; call it
 * until it returns 0.
 */
PG_FUNCTION_INFO_V1(workload_purge);
Datum
workload_purge(PG_FUNCTION_ARGS)
{
	WlApi		api;
	Interval   *older;
	int			batch;
	TimestampTz before;
	uint64		n;

	wl_args_require(fcinfo, "older_than", "batch_size", "include_dead_letter");
	older = PG_GETARG_INTERVAL_P(0);
	batch = PG_GETARG_INT32(1);
	if (batch < 1 || batch > WL_MAX_PURGE_BATCH)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"batch_size\" must be from 1 to %d.", WL_MAX_PURGE_BATCH));
	if (older->month < 0 || older->day < 0 || older->time < 0)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"older_than\" must not be negative."));
	before = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_mi_interval,
													 TimestampTzGetDatum(wl_now()),
													 IntervalPGetDatum(older)));
	wl_api_begin(fcinfo, &api);
	n = wl_store_purge(before, batch, PG_GETARG_BOOL(2));
	if (n > 0)
		wl_quota_forget();
	wl_api_end(&api);
	PG_RETURN_INT64((int64) n);
}
