/*
 * api_finish.c: the worker reporting back: workload_checkpoint,
 * workload_complete, workload_fail, workload_confirm_cancel,
 * workload_execution_context.  Every call checks the fence on the locked row
 * before it writes anything.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "authz.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "payload.h"
#include "retry.h"
#include "store.h"

/*
 * workload_checkpoint(workload_id, claim_id, worker_id, fencing_token, state)
 * appends checkpoint n+1 with its state_hash; RUNNING or CHECKPOINTED ->
 * CHECKPOINTED.
 */
PG_FUNCTION_INFO_V1(workload_checkpoint);
Datum
workload_checkpoint(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	Jsonb	   *state;
	char	   *hash;
	Jsonb	   *doc;
	WlJson		b;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4))
		wl_refuse(WL_E_INVALID, errdetail("state must not be NULL."));
	state = PG_GETARG_JSONB_P(4);
	wl_payload_check(state, "checkpoint state", WL_MAX_PAYLOAD_BYTES);
	hash = wl_jsonb_hash(state);

	SPI_connect();
	wl_fence_lock(&fence, &row);
	row.checkpoint_sequence++;
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "sequence", row.checkpoint_sequence);
	wl_json_str(&b, "state_hash", hash);
	wl_store_transition(&row, WL_CHECKPOINTED, fence.worker_id, wl_json_end(&b));
	doc = wl_store_transfer(wl_store_checkpoint_put(&row, state, hash));
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
}

static bool
same_fence(const WlFence *a, const WlFence *b)
{
	return strcmp(a->claim_id, b->claim_id) == 0 &&
		strcmp(a->worker_id, b->worker_id) == 0 &&
		a->fencing_token == b->fencing_token;
}

/*
 * workload_complete(workload_id, claim_id, worker_id, fencing_token,
 * result_id, output, artifacts, schema_version): stores the result and
 * moves to SUCCEEDED.  The same result_id again from the same claim returns
 * the stored result; from another claim it is WORKLOAD_STALE_FENCE; a
 * result_id of another workload is WORKLOAD_RESULT_DUPLICATE.
 */
PG_FUNCTION_INFO_V1(workload_complete);
Datum
workload_complete(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlFence		prov;
	WlRow		row;
	char	   *result_id;
	Jsonb	   *output;
	ArrayType  *artifacts;
	int			schema_version;
	char	   *owner;
	Jsonb	   *doc;
	WlJson		b;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4) || PG_ARGISNULL(5) || PG_ARGISNULL(6) || PG_ARGISNULL(7))
		wl_refuse(WL_E_INVALID,
				  errdetail("result_id, output, artifacts and schema_version must not be NULL."));
	result_id = wl_payload_id_arg(PG_GETARG_TEXT_PP(4), "result_id");
	output = PG_GETARG_JSONB_P(5);
	wl_payload_check(output, "output", WL_MAX_PAYLOAD_BYTES);
	artifacts = wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(6), "artifacts");
	schema_version = PG_GETARG_INT32(7);
	if (schema_version < 1)
		wl_refuse(WL_E_INVALID, errdetail("schema_version must be 1 or more."));

	SPI_connect();
	if (!wl_store_lock(fence.workload_id, &row))
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", fence.workload_id));
	if (wl_store_result_find(result_id, &owner, &prov, &doc))
	{
		if (strcmp(owner, row.workload_id) != 0)
			wl_refuse(WL_E_RESULT_DUPLICATE,
					  errdetail("Result \"%s\" belongs to another workload.", result_id));
		if (!same_fence(&prov, &fence))
			wl_refuse(WL_E_STALE_FENCE,
					  errdetail("Result \"%s\" was stored by another claim.", result_id));
		doc = wl_store_transfer(doc);
		SPI_finish();
		PG_RETURN_JSONB_P(doc);
	}
	wl_fence_check(&row, &fence);
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "result_id", result_id);
	wl_fence_release(&row);
	wl_store_transition(&row, WL_SUCCEEDED, fence.worker_id, wl_json_end(&b));
	wl_store_attempt_close(&row, "SUCCEEDED", NULL, NULL);
	doc = wl_store_result_put(&row, &fence, result_id, output, artifacts, schema_version);
	if (doc == NULL)
		wl_refuse(WL_E_RESULT_DUPLICATE,
				  errdetail("Result \"%s\" was just stored for another workload.", result_id));
	doc = wl_store_transfer(doc);
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
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
	WlFence		fence;
	WlRow		row;
	char	   *kind;
	char	   *error;
	WlJson		b;
	WlState		end;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4) || PG_ARGISNULL(5))
		wl_refuse(WL_E_INVALID, errdetail("kind and error must not be NULL."));
	kind = wl_payload_id_arg(PG_GETARG_TEXT_PP(4), "kind");
	error = text_to_cstring(PG_GETARG_TEXT_PP(5));
	wl_payload_check_text(error, "error", WL_MAX_ERROR_LEN);

	SPI_connect();
	wl_fence_lock(&fence, &row);
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "kind", kind);
	wl_json_str(&b, "error", error);
	wl_json_ts(&b, "at", wl_now());
	row.last_failure = wl_json_end(&b);
	row.failure_changed = true;
	wl_fence_release(&row);
	wl_store_transition(&row, WL_FAILED, fence.worker_id, row.last_failure);
	wl_store_attempt_close(&row, "FAILED", kind, error);
	end = wl_retry_or_dead_letter(&row, kind, "workload.retry");
	SPI_finish();
	PG_RETURN_DATUM(wl_store_state_datum(end));
}

/* workload_confirm_cancel(...): CANCELLATION_REQUESTED -> CANCELLED, by the claim holder. */
PG_FUNCTION_INFO_V1(workload_confirm_cancel);
Datum
workload_confirm_cancel(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	Jsonb	   *evidence;

	wl_fence_from_args(fcinfo, 0, &fence);
	SPI_connect();
	wl_fence_lock(&fence, &row);
	evidence = wl_fence_evidence(&row, "cancellation_confirmed");
	wl_fence_release(&row);
	wl_store_transition(&row, WL_CANCELLED, fence.worker_id, evidence);
	wl_store_attempt_close(&row, "CANCELLED", NULL, NULL);
	SPI_finish();
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
	WlFence		fence;
	WlRow		row;
	ArrayType  *refs;
	int			n;
	char	  **items;
	SPITupleTable *t;
	Datum		args[1];
	bool		isnull;
	Jsonb	   *snapshot;
	ArrayType  *granted;
	const char *why;
	WlJson		b;
	Jsonb	   *answer;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4))
		wl_refuse(WL_E_INVALID, errdetail("secret_references must not be NULL."));
	refs = wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(4), "secret_references");
	items = wl_payload_array_items(refs, &n);
	for (int i = 0; i < n; i++)
	{
		if (strncmp(items[i], "secret://", 9) != 0 || items[i][9] == '\0')
			wl_refuse(WL_E_SECRET_REJECTED,
					  errdetail("secret_references[%d] is not a secret:// reference.", i + 1));
	}

	SPI_connect();
	wl_fence_lock(&fence, &row);
	args[0] = CStringGetTextDatum(row.workload_id);
	t = wl_store_run(P_CONTEXT, args, NULL, 1, SPI_OK_SELECT);
	snapshot = DatumGetJsonbP(wl_store_datum(t, 0, 1, &isnull));
	if (!wl_authz_grant_current(snapshot, &why))
		wl_refuse(WL_E_AUTHORIZATION_DENIED, errdetail("%s.", why));
	granted = wl_json_get_strings(wl_json_get_object(&snapshot->root, "grant"), "capabilities");
	if (granted == NULL)
		wl_refuse(WL_E_AUTHORIZATION_DENIED, errdetail("The grant has no capabilities."));

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row.workload_id);
	wl_json_str(&b, "tenant_id", row.tenant_id);
	wl_json_str(&b, "application_id", row.application_id);
	wl_json_str(&b, "definition_id", wl_store_text(t, 0, 3));
	wl_json_str(&b, "definition_revision", wl_store_text(t, 0, 4));
	wl_json_str(&b, "environment", wl_store_text(t, 0, 5));
	wl_json_str(&b, "attempt_id", wl_attempt_id(row.workload_id, row.attempt_count));
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "claim_id", row.claim_id);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_ts(&b, "lease_expires_at", row.lease_expires_at);
	wl_json_strs(&b, "capabilities", wl_authz_effective_scopes(granted, row.capability_snapshot));
	wl_json_strs(&b, "connection_scopes", DatumGetArrayTypeP(wl_store_datum(t, 0, 2, &isnull)));
	wl_json_strs(&b, "secret_references", refs);
	answer = wl_store_transfer(wl_json_end(&b));
	SPI_finish();
	PG_RETURN_JSONB_P(answer);
}
