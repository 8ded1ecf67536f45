/*
 * api_claim.c: the worker taking work: workload_claim, workload_claim_id,
 * workload_start, workload_heartbeat, workload_heartbeat_many.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "api.h"
#include "args.h"
#include "claim.h"
#include "compat.h"
#include "jsonb_util.h"
#include "payload.h"
#include "store_ops.h"

/*
 * emit_claims puts the claimed rows into the set the function returns; a
 * tenth column, where the function declares it (workload_claim from 1.4),
 * holds each row's execution context when it was asked for, else NULL.
 */
static void
emit_claims(ReturnSetInfo *rsinfo, WlClaimed *c, int n)
{
	for (int i = 0; i < n; i++)
	{
		Datum		values[10];
		bool		nulls[10] = {false};

		values[0] = CStringGetTextDatum(c[i].workload_id);
		values[1] = CStringGetTextDatum(c[i].claim_id);
		values[2] = Int64GetDatum(c[i].fencing_token);
		values[3] = TimestampTzGetDatum(c[i].lease_expires_at);
		values[4] = Int32GetDatum(c[i].attempt);
		values[5] = CStringGetTextDatum(c[i].definition_id);
		values[6] = CStringGetTextDatum(c[i].definition_revision);
		values[7] = JsonbPGetDatum(c[i].input);
		values[8] = Int32GetDatum(c[i].checkpoint_sequence);
		values[9] = c[i].context ? JsonbPGetDatum(c[i].context) : (Datum) 0;
		nulls[9] = c[i].context == NULL;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * workload_claim(worker_id, capabilities, tenant_id, application_id, lease,
 * max_items, start, context): claims up to max_items due READY workloads of
 * one tenant and application whose capabilities the worker holds and whose
 * dependencies are met, best first, skipping rows other claimers hold; with
 * context, each row also carries its verified execution context.  (The 1.3
 * declaration, still in place until ALTER EXTENSION UPDATE, has no context
 * argument and nine columns.)
 */
PG_FUNCTION_INFO_V1(workload_claim);
Datum
workload_claim(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlClaimRequest r;
	WlClaimed  *claimed;
	int			n;

	memset(&r, 0, sizeof(r));
	wl_args_require(fcinfo, "worker_id", "capabilities", "tenant_id", "application_id",
					"lease", "max_items", "start");
	r.worker_id = wl_arg_id(fcinfo, 0, "worker_id");
	r.capabilities = wl_arg_text_array(fcinfo, 1, "capabilities");
	r.tenant_id = wl_arg_tenant(fcinfo, 2, "tenant_id");
	r.application_id = wl_arg_tenant(fcinfo, 3, "application_id");
	(void) wl_arg_lease_until(fcinfo, 4, "lease");
	r.lease = PG_GETARG_INTERVAL_P(4);
	r.max_items = PG_GETARG_INT32(5);
	if (r.max_items < 1 || r.max_items > WL_MAX_BATCH)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"max_items\" must be from 1 to %d.", WL_MAX_BATCH));
	r.start = PG_GETARG_BOOL(6);
	if (PG_NARGS() > 7)
	{
		if (PG_ARGISNULL(7))
			wl_refuse(WL_E_INVALID, errdetail("Argument \"context\" must not be NULL."));
		r.context = PG_GETARG_BOOL(7);
	}

	WL_API_ROUTE(fcinfo, r.tenant_id, NULL);
	InitMaterializedSRF(fcinfo, 0);
	wl_api_begin(fcinfo, &api);
	n = wl_claim(&r, &claimed);
	emit_claims(rsinfo, claimed, n);
	wl_api_end(&api);
	return (Datum) 0;
}

/*
 * workload_claim_id(id, worker_id, capabilities, lease): claims one named
 * workload, waiting for its row lock.  WORKLOAD_NOT_FOUND, WORKLOAD_NOT_READY
 * (not READY, not yet due, dependencies unmet), WORKLOAD_CAPABILITY_DENIED.
 */
PG_FUNCTION_INFO_V1(workload_claim_id);
Datum
workload_claim_id(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlClaimRequest r;
	WlClaimed  *claimed;
	int			n;

	memset(&r, 0, sizeof(r));
	wl_args_require(fcinfo, "id", "worker_id", "capabilities", "lease");
	r.workload_id = wl_arg_id(fcinfo, 0, "id");
	r.worker_id = wl_arg_id(fcinfo, 1, "worker_id");
	r.capabilities = wl_arg_text_array(fcinfo, 2, "capabilities");
	(void) wl_arg_lease_until(fcinfo, 3, "lease");
	r.lease = PG_GETARG_INTERVAL_P(3);

	WL_API_ROUTE(fcinfo, NULL, r.workload_id);
	InitMaterializedSRF(fcinfo, 0);
	wl_api_begin(fcinfo, &api);
	n = wl_claim_named(&r, &claimed);
	emit_claims(rsinfo, claimed, n);
	wl_api_end(&api);
	return (Datum) 0;
}

/* workload_start(workload_id, claim_id, worker_id, fencing_token): CLAIMED -> RUNNING. */
PG_FUNCTION_INFO_V1(workload_start);
Datum
workload_start(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;

	wl_arg_fence(fcinfo, 0, &fence);
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	wl_start(&fence);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/*
 * workload_heartbeat(workload_id, claim_id, worker_id, fencing_token, extend,
 * progress): the lease now runs until now + extend; progress, when given,
 * is kept as the workload's latest.  The answer says whether cancellation
 * was requested.
 */
PG_FUNCTION_INFO_V1(workload_heartbeat);
Datum
workload_heartbeat(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	TimestampTz until;
	Jsonb	   *progress = NULL;
	Jsonb	   *answer;

	wl_arg_fence(fcinfo, 0, &fence);
	until = wl_arg_lease_until(fcinfo, 4, "extend");
	if (!PG_ARGISNULL(5))
	{
		progress = PG_GETARG_JSONB_P(5);
		wl_payload_check(progress, "progress", WL_MAX_PROGRESS_BYTES);
	}
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	answer = wl_api_transfer(wl_heartbeat(&fence, until, progress));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(answer);
}

static const char *const beat_fields[] = {
	"workload_id", "claim_id", "fencing_token", "progress", NULL
};

/* parse_beat reads one item; a malformed one is WL_E_INVALID with b->detail. */
static WlErr
parse_beat(JsonbValue *item, const char *worker_id, WlBeat *b)
{
	JsonbContainer *o;
	JsonbValue *v;
	char	   *unknown;

	if (!wl_json_is_object(item))
		return (b->detail = "Each item must be an object.", WL_E_INVALID);
	o = item->val.binary.data;
	b->fence.workload_id = wl_json_get_text(o, "workload_id");
	if (!wl_json_keys_within(o, beat_fields, &unknown))
		return (b->detail = psprintf("An item has an unknown field \"%s\".", unknown), WL_E_INVALID);
	if (!wl_item_fence(o, worker_id, &b->fence, &b->detail))
		return WL_E_INVALID;
	if ((v = wl_json_get(o, "progress")) != NULL && v->type != jbvNull)
	{
		b->progress = JsonbValueToJsonb(v);
		return wl_payload_verdict(b->progress, "progress", WL_MAX_PROGRESS_BYTES, &b->detail);
	}
	return WL_OK;
}

/*
 * workload_heartbeat_many(worker_id, items jsonb, extend) -> TABLE(workload_id,
 * outcome, code, answer): workload_heartbeat for every item (workload_id,
 * claim_id, fencing_token, optional progress) of one worker, in this one
 * transaction.  Each is decided on its own: a refused item ("refused", its
 * code) changes nothing and the others are still extended ("extended", the
 * answer workload_heartbeat gives).
 */
PG_FUNCTION_INFO_V1(workload_heartbeat_many);
Datum
workload_heartbeat_many(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *worker_id;
	Jsonb	   *items;
	TimestampTz until;
	int			n;
	int			k = 0;
	WlBeat	   *beats;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	wl_args_require(fcinfo, "worker_id", "items", "extend");
	worker_id = wl_arg_id(fcinfo, 0, "worker_id");
	items = PG_GETARG_JSONB_P(1);
	until = wl_arg_lease_until(fcinfo, 2, "extend");
	n = wl_arg_batch(items);
	beats = palloc0(sizeof(WlBeat) * (n + 1));
	it = JsonbIteratorInit(&items->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
		{
			beats[k].err = parse_beat(&v, worker_id, &beats[k]);
			k++;
		}
	}

	{
		char	  **ids = palloc(sizeof(char *) * (n + 1));

		for (int i = 0; i < n; i++)
			ids[i] = beats[i].fence.workload_id;
		WL_API_ROUTE(fcinfo, wl_api_batch_tenant(fcinfo, ids, n), NULL);
	}
	InitMaterializedSRF(fcinfo, 0);
	wl_api_begin(fcinfo, &api);
	wl_heartbeat_batch(beats, n, until);
	for (int i = 0; i < n; i++)
		wl_api_report_item(rsinfo, beats[i].fence.workload_id, "extended", beats[i].err,
						   beats[i].answer);
	wl_api_end(&api);
	return (Datum) 0;
}
