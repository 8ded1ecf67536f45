/*
 * finish.c: what a worker reports besides a completion: a failure (retried
 * under the policy or dead-lettered), a confirmed cancellation, and the
 * execution context a run may use, with its authority verified again.
 * Every call checks the fence on the locked row before it writes.  Layer 3.
 */
#include "postgres.h"

#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "finish.h"
#include "grants.h"
#include "jsonb_util.h"
#include "retry.h"
#include "store_ops.h"
#include "transition.h"

/*
 * wl_fail: FAILED, then READY with backoff if kind is in retry_on and
 * attempts remain, else DEAD_LETTER.  Returns the state it ends in.
 */
WlState
wl_fail(const WlFence *fence, const char *kind, const char *error)
{
	WlRow		row;
	WlJson		b;

	wl_fence_lock(fence, &row);
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "kind", kind);
	wl_json_str(&b, "error", error);
	wl_json_ts(&b, "at", wl_now());
	row.last_failure = wl_json_end(&b);
	row.failure_changed = true;
	wl_fence_release(&row);
	wl_transition(&row, WL_FAILED, fence->worker_id, row.last_failure);
	wl_store_attempt_close(&row, "FAILED", kind, error);
	return wl_retry_or_dead_letter(&row, kind, "workload.retry");
}

/* wl_confirm_cancel: CANCELLATION_REQUESTED -> CANCELLED, by the claim holder. */
void
wl_confirm_cancel(const WlFence *fence)
{
	WlRow		row;
	Jsonb	   *evidence;

	wl_fence_lock(fence, &row);
	evidence = wl_fence_evidence(&row, "cancellation_confirmed");
	wl_fence_release(&row);
	wl_transition(&row, WL_CANCELLED, fence->worker_id, evidence);
	wl_store_attempt_close(&row, "CANCELLED", NULL, NULL);
}

/*
 * wl_execution_context: what the current run may use.  The authorization
 * snapshot and the run authority must still hold (AUTHORIZATION_DENIED);
 * the capabilities are the effective scopes of the grant and the workload.
 * secret_references have been checked by the caller.
 */
Jsonb *
wl_execution_context(const WlFence *fence, ArrayType *secret_references)
{
	WlRow		row;
	WlSpecRow	spec;
	const char *why;
	ArrayType  *granted;
	WlJson		b;

	wl_fence_lock(fence, &row);
	wl_store_spec_read(&row, &spec);
	if (!wl_grant_verify_stored(spec.authorization_snapshot, &why))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("The authorization snapshot does not hold: %s.", why));
	wl_grant_check_run_authority(spec.run_authority, row.workload_id, row.tenant_id,
								 row.application_id);
	if (wl_grant_authority_revoked(&spec))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("A grant the workload's authorization derives from has been revoked."));
	granted = wl_json_get_strings(wl_json_get_object(&spec.authorization_snapshot->root, "grant"),
								  "capabilities");

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row.workload_id);
	wl_json_str(&b, "tenant_id", row.tenant_id);
	wl_json_str(&b, "application_id", row.application_id);
	wl_json_str(&b, "definition_id", spec.definition_id);
	wl_json_str(&b, "definition_revision", spec.definition_revision);
	wl_json_str(&b, "environment", spec.environment);
	wl_json_str(&b, "attempt_id", wl_attempt_id(row.workload_id, row.attempt_count));
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "claim_id", row.claim_id);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_ts(&b, "lease_expires_at", row.lease_expires_at);
	wl_json_strs(&b, "capabilities", wl_grant_effective_scopes(granted, row.capability_snapshot));
	wl_json_strs(&b, "connection_scopes", spec.connection_scopes);
	wl_json_strs(&b, "secret_references", secret_references);
	return wl_json_end(&b);
}
