/*
 * api_schedule.c: workload_schedule, workload_schedule_pause,
 * workload_schedule_resume, workload_schedule_drop, workload_schedules
 * (SPEC section 4, "Scheduling and bulk work").  Checks the arguments and
 * calls schedule.c.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api.h"
#include "args.h"
#include "compat.h"
#include "cron.h"
#include "schedule.h"

/* short_text: argument i as a C string of at most max bytes (WORKLOAD_INVALID beyond). */
static char *
short_text(FunctionCallInfo fcinfo, int i, const char *name, int max)
{
	text	   *t = PG_GETARG_TEXT_PP(i);

	if (VARSIZE_ANY_EXHDR(t) > max)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" is longer than %d bytes.", name, max));
	return text_to_cstring(t);
}

/*
 * workload_schedule(tenant_id, application_id, schedule_id, cron, template,
 * timezone, overlap, catch_up) -> jsonb: the schedule, created or replaced.
 * Any NULL is WORKLOAD_INVALID; see wl_schedule_put for the rest.
 */
PG_FUNCTION_INFO_V1(workload_schedule);
Datum
workload_schedule(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlScheduleRequest req;
	Jsonb	   *doc;

	wl_args_require(fcinfo, "tenant_id", "application_id", "schedule_id", "cron", "template",
					"timezone", "overlap", "catch_up");
	req.tenant_id = wl_arg_tenant(fcinfo, 0, "tenant_id");
	req.application_id = wl_arg_tenant(fcinfo, 1, "application_id");
	req.schedule_id = wl_arg_id(fcinfo, 2, "schedule_id");
	req.cron = short_text(fcinfo, 3, "cron", WL_CRON_MAX_LEN);
	req.template = PG_GETARG_JSONB_P(4);
	req.timezone = short_text(fcinfo, 5, "timezone", 200);
	req.overlap = short_text(fcinfo, 6, "overlap", 20);
	req.catch_up = short_text(fcinfo, 7, "catch_up", 20);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(wl_schedule_put(&req));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/* the key arguments of pause, resume and drop */
static void
key_args(FunctionCallInfo fcinfo, char **tenant, char **app, char **id)
{
	wl_args_require(fcinfo, "tenant_id", "application_id", "schedule_id");
	*tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	*app = wl_arg_tenant(fcinfo, 1, "application_id");
	*id = wl_arg_id(fcinfo, 2, "schedule_id");
}

/* act_on: one schedule named by its key, acted on by act; answers the schedule. */
static Datum
act_on(FunctionCallInfo fcinfo, Jsonb *(*act) (const char *, const char *, const char *))
{
	WlApi		api;
	char	   *tenant;
	char	   *app;
	char	   *id;
	Jsonb	   *doc;

	key_args(fcinfo, &tenant, &app, &id);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(act(tenant, app, id));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/*
 * workload_schedule_set_grant(tenant_id, application_id, schedule_id,
 * authorization_snapshot) -> jsonb: the schedule, with its template's grant
 * replaced and nothing else changed (wl_schedule_set_grant).
 */
PG_FUNCTION_INFO_V1(workload_schedule_set_grant);
Datum
workload_schedule_set_grant(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *tenant;
	char	   *app;
	char	   *id;
	Jsonb	   *grant;
	Jsonb	   *doc;

	wl_args_require(fcinfo, "tenant_id", "application_id", "schedule_id",
					"authorization_snapshot");
	key_args(fcinfo, &tenant, &app, &id);
	grant = PG_GETARG_JSONB_P(3);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(wl_schedule_set_grant(tenant, app, id, grant));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/* workload_schedule_pause(tenant_id, application_id, schedule_id) -> jsonb: the schedule. */
PG_FUNCTION_INFO_V1(workload_schedule_pause);
Datum
workload_schedule_pause(PG_FUNCTION_ARGS)
{
	return act_on(fcinfo, wl_schedule_pause);
}

/* workload_schedule_resume(tenant_id, application_id, schedule_id) -> jsonb: the schedule. */
PG_FUNCTION_INFO_V1(workload_schedule_resume);
Datum
workload_schedule_resume(PG_FUNCTION_ARGS)
{
	return act_on(fcinfo, wl_schedule_resume);
}

/* workload_schedule_drop(tenant_id, application_id, schedule_id): drops it. */
PG_FUNCTION_INFO_V1(workload_schedule_drop);
Datum
workload_schedule_drop(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *tenant;
	char	   *app;
	char	   *id;

	key_args(fcinfo, &tenant, &app, &id);
	wl_api_begin(fcinfo, &api);
	wl_schedule_drop(tenant, app, id);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/* workload_schedules(tenant_id, application_id) -> SETOF jsonb, by schedule_id. */
PG_FUNCTION_INFO_V1(workload_schedules);
Datum
workload_schedules(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *tenant;
	char	   *app;
	Jsonb	  **docs;
	int			n;

	wl_args_require(fcinfo, "tenant_id", "application_id");
	tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	app = wl_arg_tenant(fcinfo, 1, "application_id");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_api_begin(fcinfo, &api);
	docs = wl_schedule_list(tenant, app, &n);
	for (int i = 0; i < n; i++)
	{
		Datum		values[1] = {JsonbPGetDatum(docs[i])};
		bool		nulls[1] = {false};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	wl_api_end(&api);
	return (Datum) 0;
}
