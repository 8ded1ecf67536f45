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
 * wl_authority_holds: whether a workload's authorization snapshot and run
 * authority still hold (signed under a current key, not expired, not
 * revoked, the run authority bound to this workload); if not, *detail says
 * why (a sentence) and *cause the dead-letter cause it amounts to
 * (authorization_revoked, authorization_expired or authorization_invalid).
 */
bool
wl_authority_holds(const WlRow *row, const WlSpecRow *spec, char **detail, const char **cause)
{
	return wl_authority_holds_unrevoked(row, spec, detail, cause, NULL);
}

/* snapshot_holds: whether the authorization snapshot verifies (the memo's answer, when it has it) */
static bool
snapshot_holds(Jsonb *snapshot, const char **why, WlAuthorityMemo *memo)
{
	char	   *key;
	bool		holds;

	if (memo == NULL)
		return wl_grant_verify_stored(snapshot, why);
	key = psprintf("%s/%s", wl_json_get_text(&snapshot->root, "key_id"),
				   wl_json_get_text(&snapshot->root, "signature_sha256"));
	if (memo->snapshot_key != NULL && strcmp(memo->snapshot_key, key) == 0)
	{
		*why = memo->snapshot_why;
		return memo->snapshot_holds;
	}
	holds = wl_grant_verify_stored_signature(snapshot, why);
	memo->snapshot_key = key;
	memo->snapshot_holds = holds;
	memo->snapshot_why = holds ? NULL : *why;
	return holds;
}

/*
 * wl_authority_holds_unrevoked is wl_authority_holds for a workload of a
 * batch whose grants the caller has found none revoked (memo, when not
 * NULL; wl_store_grants_chain over every grant the batch names): it asks
 * nothing of the revocations, and verifies an authorization snapshot the
 * batch's workloads share once (the same key and signature digest).
 */
bool
wl_authority_holds_unrevoked(const WlRow *row, const WlSpecRow *spec, char **detail,
							 const char **cause, WlAuthorityMemo *memo)
{
	const char *why;

	if (!snapshot_holds(spec->authorization_snapshot, &why, memo))
		*detail = psprintf("The authorization snapshot does not hold: %s.", why);
	else if (!wl_grant_run_authority_holds(spec->run_authority, row->workload_id, row->tenant_id,
										   row->application_id, detail, memo == NULL))
		;
	else if (memo == NULL && wl_grant_authority_revoked(spec))
		*detail = pstrdup("A grant the workload's authorization derives from has been revoked.");
	else
		*detail = NULL;
	if (*detail != NULL)
	{
		if (memo == NULL && wl_grant_authority_revoked(spec))
			*cause = "authorization_revoked";
		else if (row->authority_expires_at != 0 && row->authority_expires_at <= wl_now())
			*cause = "authorization_expired";
		else
			*cause = "authorization_invalid";
		return false;
	}
	return true;
}

/*
 * wl_context_of: what a run may use, for a workload whose row the caller
 * holds locked, or NULL when its authority no longer holds
 * (wl_authority_holds_unrevoked says why; memo as there).  The capabilities are the effective scopes
 * of the grant and the workload; secret_references have been checked by
 * the caller.
 */
Jsonb *
wl_context_of(const WlRow *row, const WlSpecRow *spec, ArrayType *secret_references,
			  char **detail, const char **cause, WlAuthorityMemo *memo)
{
	ArrayType  *granted;
	WlJson		b;

	if (!wl_authority_holds_unrevoked(row, spec, detail, cause, memo))
		return NULL;
	granted = wl_json_get_strings(wl_json_get_object(&spec->authorization_snapshot->root, "grant"),
								  "capabilities");

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row->workload_id);
	wl_json_str(&b, "tenant_id", row->tenant_id);
	wl_json_str(&b, "application_id", row->application_id);
	wl_json_str(&b, "definition_id", spec->definition_id);
	wl_json_str(&b, "definition_revision", spec->definition_revision);
	wl_json_str(&b, "environment", spec->environment);
	wl_json_str(&b, "attempt_id", wl_attempt_id(row->workload_id, row->attempt_count));
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_str(&b, "claim_id", row->claim_id);
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_ts(&b, "lease_expires_at", row->lease_expires_at);
	wl_json_strs(&b, "capabilities", wl_grant_effective_scopes(granted, row->capability_snapshot));
	wl_json_strs(&b, "connection_scopes", spec->connection_scopes);
	wl_json_strs(&b, "secret_references", secret_references);
	return wl_json_end(&b);
}

/*
 * wl_execution_context: what the current run may use (wl_context_of), or
 * AUTHORIZATION_DENIED.
 */
Jsonb *
wl_execution_context(const WlFence *fence, ArrayType *secret_references)
{
	WlRow		row;
	WlSpecRow	spec;
	Jsonb	   *context;
	char	   *detail;
	const char *cause;

	wl_fence_lock(fence, &row);
	wl_store_spec_read(&row, &spec);
	context = wl_context_of(&row, &spec, secret_references, &detail, &cause, NULL);
	if (context == NULL)
		wl_refuse(WL_E_AUTHORIZATION_DENIED, errdetail("%s", detail));
	return context;
}
