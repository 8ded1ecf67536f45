/*
 * api_orchestrate.c: durable orchestration's SQL entry points (SPEC section
 * 7): workload_resume, workload_wait, workload_signal, workload_approve,
 * workload_add_compensation, workload_compensate.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "api.h"
#include "args.h"
#include "catalog.h"
#include "checkpoint.h"
#include "clock.h"
#include "compat.h"
#include "payload.h"
#include "store_ops.h"
#include "saga.h"
#include "waits.h"

/*
 * workload_resume(workload_id, claim_id, worker_id, fencing_token,
 * expected_snapshots) -> {workload_id, attempt, fencing_token, checkpoint,
 * wake}: what the run holding the claim resumes from (checkpoint.c).
 */
PG_FUNCTION_INFO_V1(workload_resume);
Datum
workload_resume(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	Jsonb	   *expected;
	Jsonb	   *answer;

	wl_arg_fence(fcinfo, 0, &fence);
	expected = PG_ARGISNULL(4) ? NULL : PG_GETARG_JSONB_P(4);
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	answer = wl_api_transfer(wl_checkpoint_resume(&fence, expected));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(answer);
}

/*
 * workload_wait(workload_id, claim_id, worker_id, fencing_token, kind,
 * wake_key, deadline) -> WAITING.  kind is event (wake_key required),
 * schedule (wakes at deadline) or human_approval; deadline must be in the
 * future.
 */
PG_FUNCTION_INFO_V1(workload_wait);
Datum
workload_wait(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	char	   *kind;
	char	   *key;
	TimestampTz deadline;
	WlState		end;

	wl_arg_fence(fcinfo, 0, &fence);
	wl_args_require(fcinfo, NULL, NULL, NULL, NULL, "kind", NULL, "deadline");
	kind = wl_arg_id(fcinfo, 4, "kind");
	if (!wl_wait_kind_known(kind))
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"kind\" must be \"event\", \"schedule\" or \"human_approval\"."));
	key = wl_arg_id_or_null(fcinfo, 5, "wake_key");
	if (key == NULL && strcmp(kind, "event") == 0)
		wl_refuse(WL_E_INVALID, errdetail("An event wait needs a wake_key."));
	deadline = PG_GETARG_TIMESTAMPTZ(6);
	if (TIMESTAMP_NOT_FINITE(deadline) || deadline <= wl_now())
		wl_refuse(WL_E_INVALID, errdetail("Argument \"deadline\" must be a time in the future."));
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	end = wl_wait_enter(&fence, kind, key, deadline);
	wl_api_end(&api);
	PG_RETURN_DATUM(wl_catalog_state_datum(end));
}

/*
 * workload_signal(tenant_id, application_id, wake_key, payload) -> how many
 * event waits on wake_key it woke (waits.c).
 */
PG_FUNCTION_INFO_V1(workload_signal);
Datum
workload_signal(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *tenant;
	char	   *app;
	char	   *key;
	Jsonb	   *payload;
	int			woken;

	wl_args_require(fcinfo, "tenant_id", "application_id", "wake_key", "payload");
	tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	app = wl_arg_tenant(fcinfo, 1, "application_id");
	key = wl_arg_id(fcinfo, 2, "wake_key");
	payload = PG_GETARG_JSONB_P(3);
	wl_payload_check(payload, "payload", WL_MAX_PAYLOAD_BYTES);
	WL_API_ROUTE(fcinfo, tenant, NULL);
	wl_api_begin(fcinfo, &api);
	woken = wl_wait_signal(tenant, app, key, payload);
	wl_api_end(&api);
	PG_RETURN_INT32(woken);
}

/*
 * workload_approve(workload_id, approver, approved, note) -> whether it
 * answered a human_approval wait (waits.c).  note may be NULL.
 */
PG_FUNCTION_INFO_V1(workload_approve);
Datum
workload_approve(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *id;
	char	   *approver;
	char	   *note = NULL;
	bool		done;

	wl_args_require(fcinfo, "workload_id", "approver", "approved");
	id = wl_arg_id(fcinfo, 0, "workload_id");
	approver = wl_arg_id(fcinfo, 1, "approver");
	if (!PG_ARGISNULL(3))
	{
		note = text_to_cstring(PG_GETARG_TEXT_PP(3));
		wl_payload_check_text(note, "note", WL_MAX_ERROR_LEN);
	}
	WL_API_ROUTE(fcinfo, NULL, id);
	wl_api_begin(fcinfo, &api);
	done = wl_wait_approve(id, approver, PG_GETARG_BOOL(2), note);
	wl_api_end(&api);
	PG_RETURN_BOOL(done);
}

/*
 * workload_add_compensation(workload_id, claim_id, worker_id, fencing_token,
 * capability_id, input) -> the step (saga.c).
 */
PG_FUNCTION_INFO_V1(workload_add_compensation);
Datum
workload_add_compensation(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	char	   *capability;
	Jsonb	   *input;
	Jsonb	   *doc;

	wl_arg_fence(fcinfo, 0, &fence);
	wl_args_require(fcinfo, NULL, NULL, NULL, NULL, "capability_id", "input");
	capability = wl_arg_id(fcinfo, 4, "capability_id");
	input = PG_GETARG_JSONB_P(5);
	wl_payload_check(input, "compensation input", WL_MAX_PAYLOAD_BYTES);
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(wl_saga_add(&fence, capability, input));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/*
 * workload_compensate(workload_id, actor) -> the compensation workload ids,
 * in the order they run (saga.c).  Again: creates nothing, returns the same
 * ids.
 */
PG_FUNCTION_INFO_V1(workload_compensate);
Datum
workload_compensate(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *id = wl_arg_id(fcinfo, 0, "workload_id");
	char	   *actor = wl_arg_id(fcinfo, 1, "actor");
	char	  **ids;
	int			n;

	WL_API_ROUTE(fcinfo, NULL, id);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_api_begin(fcinfo, &api);
	ids = wl_saga_compensate(id, actor, &n);
	for (int i = 0; i < n; i++)
		wl_api_put_text(rsinfo, ids[i]);
	wl_api_end(&api);
	return (Datum) 0;
}
