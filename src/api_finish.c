/*
 * api_finish.c: the worker reporting back: workload_checkpoint,
 * workload_complete, workload_complete_many, workload_fail,
 * workload_confirm_cancel, workload_execution_context.  Layer 4.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api.h"
#include "args.h"
#include "catalog.h"
#include "checkpoint.h"
#include "compat.h"
#include "complete.h"
#include "finish.h"
#include "jsonb_util.h"
#include "payload.h"
#include "store_ops.h"

/*
 * workload_checkpoint(workload_id, claim_id, worker_id, fencing_token, state)
 * appends checkpoint n+1 with its state_hash and its authentication tag
 * (workload_resume verifies both); RUNNING or CHECKPOINTED -> CHECKPOINTED.
 */
PG_FUNCTION_INFO_V1(workload_checkpoint);
Datum
workload_checkpoint(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	Jsonb	   *state;
	Jsonb	   *doc;

	wl_arg_fence(fcinfo, 0, &fence);
	wl_args_require(fcinfo, NULL, NULL, NULL, NULL, "state");
	state = PG_GETARG_JSONB_P(4);
	wl_payload_check(state, "checkpoint state", WL_MAX_PAYLOAD_BYTES);
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(wl_checkpoint_append(&fence, state));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/*
 * workload_complete(workload_id, claim_id, worker_id, fencing_token,
 * result_id, output, artifacts, schema_version): stores the result and
 * moves to SUCCEEDED (complete.c has the refusals).
 */
PG_FUNCTION_INFO_V1(workload_complete);
Datum
workload_complete(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlCompletion c;
	Jsonb	   *doc;
	bool		unmet;

	wl_arg_fence(fcinfo, 0, &c.fence);
	wl_args_require(fcinfo, NULL, NULL, NULL, NULL, "result_id", "output", "artifacts",
					"schema_version");
	c.result_id = wl_arg_id(fcinfo, 4, "result_id");
	c.output = PG_GETARG_JSONB_P(5);
	c.artifacts = wl_arg_text_array(fcinfo, 6, "artifacts");
	c.schema_version = PG_GETARG_INT32(7);
	if (c.schema_version < 1)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"schema_version\" must be 1 or more."));
	WL_API_ROUTE(fcinfo, NULL, c.fence.workload_id);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(wl_complete(&c, &unmet));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

static const char *const item_fields[] = {
	"workload_id", "claim_id", "fencing_token", "result_id", "output",
	"artifacts", "schema_version", NULL
};

/*
 * parse_item reads one workload_complete_many item into c; a malformed item
 * is WL_E_INVALID with *detail (the batch goes on without it).
 */
static WlErr
parse_item(JsonbValue *item, const char *worker_id, WlCompletion *c, char **detail)
{
	JsonbContainer *o;
	JsonbValue *v;
	char	   *unknown;
	int64		n;

	c->schema_version = 1;
	if (!wl_json_is_object(item))
		return (*detail = "Each item must be an object.", WL_E_INVALID);
	o = item->val.binary.data;
	/* read the id first, so even a refused item says which workload it was */
	c->fence.workload_id = wl_json_get_text(o, "workload_id");
	if (!wl_json_keys_within(o, item_fields, &unknown))
		return (*detail = psprintf("An item has an unknown field \"%s\".", unknown), WL_E_INVALID);
	if (!wl_item_fence(o, worker_id, &c->fence, detail))
		return WL_E_INVALID;
	c->result_id = wl_json_get_text(o, "result_id");
	if (c->result_id == NULL || wl_text_blank(c->result_id, strlen(c->result_id)) ||
		strlen(c->result_id) > WL_MAX_ID_LEN)
		return (*detail = "Field result_id must be a non-blank string.", WL_E_INVALID);
	if ((v = wl_json_get(o, "output")) == NULL)
		return (*detail = "Field output is required.", WL_E_INVALID);
	c->output = JsonbValueToJsonb(v);
	if (wl_json_get(o, "artifacts") != NULL)
	{
		c->artifacts = wl_json_get_strings(o, "artifacts");
		if (c->artifacts == NULL)
			return (*detail = "Field artifacts must be an array of strings.", WL_E_INVALID);
	}
	else
		c->artifacts = construct_empty_array(TEXTOID);
	if (wl_json_get(o, "schema_version") != NULL)
	{
		if (!wl_json_get_int(o, "schema_version", &n) || n < 1 || n > INT_MAX)
			return (*detail = "Field schema_version must be an integer of 1 or more.", WL_E_INVALID);
		c->schema_version = (int) n;
	}
	return WL_OK;
}

/*
 * workload_complete_many(worker_id, items jsonb) -> TABLE(workload_id,
 * outcome, code, result): completes every item in this one transaction.
 * Each is decided on its own: a refused item ("refused", its code) writes
 * nothing and the others still complete.  An item whose output misses the
 * completion criteria is "completion_criteria_unmet" (code NULL, result
 * the reason): its workload is dead-lettered.  Items are answered in
 * workload_id order.
 */
PG_FUNCTION_INFO_V1(workload_complete_many);
Datum
workload_complete_many(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *worker_id;
	Jsonb	   *items;
	int			n;
	WlCompleteItem *batch;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			k = 0;

	wl_args_require(fcinfo, "worker_id", "items");
	worker_id = wl_arg_id(fcinfo, 0, "worker_id");
	items = PG_GETARG_JSONB_P(1);
	n = wl_arg_batch(items);
	batch = palloc0(sizeof(WlCompleteItem) * (n + 1));
	it = JsonbIteratorInit(&items->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		batch[k].err = parse_item(&v, worker_id, &batch[k].c, &batch[k].detail);
		k++;
	}

	{
		char	  **ids = palloc(sizeof(char *) * (n + 1));

		for (int i = 0; i < n; i++)
			ids[i] = batch[i].c.fence.workload_id;
		WL_API_ROUTE(fcinfo, wl_api_batch_tenant(fcinfo, ids, n), NULL);
	}
	InitMaterializedSRF(fcinfo, 0);
	wl_api_begin(fcinfo, &api);
	wl_complete_batch(batch, n);
	for (int i = 0; i < n; i++)
		wl_api_report_item(rsinfo, batch[i].c.fence.workload_id,
						   batch[i].unmet ? "completion_criteria_unmet" : "succeeded",
						   batch[i].err, batch[i].doc);
	wl_api_end(&api);
	return (Datum) 0;
}

/*
 * workload_fail(workload_id, claim_id, worker_id, fencing_token, kind, error)
 * -> the state it ends in: FAILED, then READY with backoff if kind is in
 * retry_on and attempts remain, else DEAD_LETTER.
 */
PG_FUNCTION_INFO_V1(workload_fail);
Datum
workload_fail(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	char	   *kind;
	char	   *error;
	WlState		end;

	wl_arg_fence(fcinfo, 0, &fence);
	wl_args_require(fcinfo, NULL, NULL, NULL, NULL, "kind", "error");
	kind = wl_arg_id(fcinfo, 4, "kind");
	error = text_to_cstring(PG_GETARG_TEXT_PP(5));
	wl_payload_check_text(error, "error", WL_MAX_ERROR_LEN);
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	end = wl_fail(&fence, kind, error);
	wl_api_end(&api);
	PG_RETURN_DATUM(wl_catalog_state_datum(end));
}

/* workload_confirm_cancel(...): CANCELLATION_REQUESTED -> CANCELLED, by the claim holder. */
PG_FUNCTION_INFO_V1(workload_confirm_cancel);
Datum
workload_confirm_cancel(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;

	wl_arg_fence(fcinfo, 0, &fence);
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	wl_confirm_cancel(&fence);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/*
 * workload_execution_context(..., secret_references): what the current run
 * may use.  Each reference must be a secret:// URI (WORKLOAD_SECRET_REJECTED);
 * a grant that is no longer active or valid is AUTHORIZATION_DENIED.
 */
PG_FUNCTION_INFO_V1(workload_execution_context);
Datum
workload_execution_context(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlFence		fence;
	ArrayType  *refs;
	int			n;
	char	  **items;
	Jsonb	   *answer;

	wl_arg_fence(fcinfo, 0, &fence);
	refs = wl_arg_text_array(fcinfo, 4, "secret_references");
	items = wl_array_items(refs, &n);
	for (int i = 0; i < n; i++)
	{
		if (strncmp(items[i], WL_SECRET_SCHEME, WL_SECRET_SCHEME_LEN) != 0 ||
			items[i][WL_SECRET_SCHEME_LEN] == '\0')
			wl_refuse(WL_E_SECRET_REJECTED,
					  errdetail("Item %d of argument \"secret_references\" is not a %s reference.",
								i + 1, WL_SECRET_SCHEME));
	}
	WL_API_ROUTE(fcinfo, NULL, fence.workload_id);
	wl_api_begin(fcinfo, &api);
	answer = wl_api_transfer(wl_execution_context(&fence, refs));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(answer);
}
