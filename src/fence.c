/*
 * fence.c: claims, leases, fencing-token checks, in the order SPEC section
 * 4 gives: no current claim, then any part of the triple differs, then the
 * lease has expired.  It never writes; transition.c does.  Layer 3.
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "authz.h"
#include "clock.h"
#include "fence.h"
#include "jsonb_util.h"

/*
 * wl_fence_verdict judges a fence against the locked row without raising:
 * WL_E_CLAIM_INVALID, WL_E_STALE_FENCE (any part of the triple differs, or
 * the caller is not the role that took the claim), WL_E_LEASE_EXPIRED, or
 * WL_OK when the fence holds; *detail says why.
 */
WlErr
wl_fence_verdict(const WlRow *row, const WlFence *f, char **detail)
{
	if (row->claim_id == NULL)
	{
		*detail = psprintf("Workload \"%s\" is %s and held by no worker.",
						   row->workload_id, wl_state_name(row->state));
		return WL_E_CLAIM_INVALID;
	}
	/* a claim belongs to the role that took it (superusers aside; NULL: taken before 1.2) */
	if (row->claimed_by != NULL && !wl_authz_caller()->superuser &&
		strcmp(row->claimed_by, wl_authz_caller()->role) != 0)
	{
		*detail = psprintf("Workload \"%s\" is held by a claim of another database role.",
						   row->workload_id);
		return WL_E_STALE_FENCE;
	}
	if (strcmp(row->claim_id, f->claim_id) != 0 ||
		strcmp(row->worker_id, f->worker_id) != 0 ||
		row->fencing_token != f->fencing_token)
	{
		if (row->fencing_token != f->fencing_token)
			*detail = psprintf("Workload \"%s\" holds fencing token " INT64_FORMAT "; the request carried " INT64_FORMAT ".",
							   row->workload_id, row->fencing_token, f->fencing_token);
		else
			*detail = psprintf("Workload \"%s\" is held under fencing token " INT64_FORMAT " by another claim or worker.",
							   row->workload_id, row->fencing_token);
		return WL_E_STALE_FENCE;
	}
	if (row->lease_expires_at <= wl_now())
	{
		*detail = psprintf("The lease on workload \"%s\" expired at %s.", row->workload_id,
						   timestamptz_to_str(row->lease_expires_at));
		return WL_E_LEASE_EXPIRED;
	}
	return WL_OK;
}

/*
 * wl_fence_check raises WORKLOAD_CLAIM_INVALID, WORKLOAD_STALE_FENCE or
 * WORKLOAD_LEASE_EXPIRED.  The caller holds the row lock, so the check and
 * the write that follows see the same row version.
 */
void
wl_fence_check(const WlRow *row, const WlFence *f)
{
	char	   *detail;
	WlErr		err = wl_fence_verdict(row, f, &detail);

	if (err != WL_OK)
		wl_refuse(err, errdetail_internal("%s", detail));
}

/*
 * wl_fence_lock locks the fenced workload (WORKLOAD_NOT_FOUND when the
 * caller may not touch it) and checks the fence.
 */
void
wl_fence_lock(const WlFence *f, WlRow *row)
{
	wl_authz_lock_or_refuse(f->workload_id, row);
	wl_fence_check(row, f);
}

/*
 * wl_fence_try makes a fenced call as one conditional statement when the
 * fence holds and the row is in `from` (see WlFencedCall): true, with row as
 * it is now, or false having written and locked nothing, and the caller
 * takes the lock-and-decide path, which gives the exact refusal.  A move to
 * `to` is tried only when the transition table allows it.
 */
bool
wl_fence_try(WlFencedCall *c, WlRow *row)
{
	if (c->kind != WL_FENCED_BEAT && !wl_state_allowed(c->from, c->to))
		return false;
	c->who = wl_authz_caller();
	return wl_store_fenced(c, row);
}

/*
 * wl_fence_release drops the claim from the row (saved with the next
 * write).  Its lease and times stay on the row as the record of the latest
 * attempt: a claim is held exactly when claim_id is set.
 */
void
wl_fence_release(WlRow *row)
{
	row->claim_id = NULL;
	row->worker_id = NULL;
}

/* wl_fence_evidence: the claim a transition acted on, for the event. */
Jsonb *
wl_fence_evidence(const WlRow *row, const char *cause)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_int(&b, "attempt", row->attempt_count);
	if (row->worker_id)
		wl_json_str(&b, "worker_id", row->worker_id);
	if (cause)
		wl_json_str(&b, "cause", cause);
	return wl_json_end(&b);
}
