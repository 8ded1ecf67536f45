/*
 * operate.c: what a client or operator does to a workload it may touch:
 * cancel (or ask the worker to), retry (one, or dead letters in bulk), time
 * out.  Layer 3.
 */
#include "postgres.h"

#include "authz.h"
#include "clock.h"
#include "deadline.h"
#include "errors.h"
#include "finish.h"
#include "grants.h"
#include "jsonb_util.h"
#include "operate.h"
#include "retry.h"
#include "transition.h"

static Jsonb *
actor_evidence(const char *cause, const char *actor)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_str(&b, "cause", cause);
	wl_json_str(&b, "requested_by", actor);
	return wl_json_end(&b);
}

/*
 * wl_cancel returns the state a cancel leaves the workload in.  A workload a
 * worker holds moves to CANCELLATION_REQUESTED (the worker confirms); one
 * already there is left as it is; any other moves to CANCELLED if the table
 * allows it (final states: WORKLOAD_TRANSITION_DENIED).
 */
WlState
wl_cancel(const char *workload_id, const char *actor)
{
	WlRow		row;

	wl_authz_lock_or_refuse(workload_id, &row);
	if (row.state == WL_CANCELLATION_REQUESTED)
		return row.state;
	if (wl_state_holds_claim(row.state))
		wl_transition(&row, WL_CANCELLATION_REQUESTED, actor,
					  actor_evidence("cancel_requested", actor));
	else
		wl_transition(&row, WL_CANCELLED, actor, actor_evidence("cancelled", actor));
	return row.state;
}

/*
 * retry_locked moves a locked FAILED, TIMED_OUT or DEAD_LETTER row to
 * READY, due now; false (and nothing done) when its authorization was
 * revoked, has lapsed or no longer verifies: no worker would be handed it.
 */
static bool
retry_locked(WlRow *row, const char *actor)
{
	WlSpecRow	spec;
	char	   *detail;
	const char *cause;

	if (wl_deadline_lapsed(row, wl_now()))
		return false;
	wl_store_spec_read(row, &spec);
	if (!wl_authority_holds(row, &spec, &detail, &cause))
		return false;
	row->next_attempt_at = wl_now();
	wl_transition(row, WL_READY, actor, actor_evidence("manual_retry", actor));
	return true;
}

/*
 * wl_retry: FAILED, TIMED_OUT or DEAD_LETTER -> READY, due now.  Any other
 * state is WORKLOAD_TRANSITION_DENIED; a workload whose authorization was
 * revoked is AUTHORIZATION_DENIED (it stays where the tick put it).
 */
WlState
wl_retry(const char *workload_id, const char *actor)
{
	WlRow		row;

	wl_authz_lock_or_refuse(workload_id, &row);
	if (!wl_state_is_retryable(row.state))
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" is %s; only FAILED, TIMED_OUT and DEAD_LETTER workloads are retried.",
							row.workload_id, wl_state_name(row.state)));
	if (!retry_locked(&row, actor))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("The authorization of workload \"%s\" has been revoked, has lapsed or no longer verifies.",
							workload_id));
	return row.state;
}

/*
 * wl_redrive is wl_retry for up to lim DEAD_LETTER workloads of one tenant
 * and application (of definition_id and last failure kind failure_kind
 * when not NULL), oldest first; rows another transaction holds and
 * workloads whose authorization was revoked are passed over.  Raises
 * WORKLOAD_UNAUTHORIZED unless the caller may act there.  Returns the ids
 * it moved to READY (*n of them).
 */
char **
wl_redrive(const char *tenant_id, const char *application_id, const char *actor,
		   const char *definition_id, const char *failure_kind, int lim, int *n)
{
	int			found;
	char	  **ids;
	char	  **moved;

	wl_authz_require_member(tenant_id, application_id);
	ids = wl_store_dead_letters(tenant_id, application_id, definition_id, failure_kind,
								lim, &found);
	moved = palloc(sizeof(char *) * (found + 1));
	*n = 0;
	for (int i = 0; i < found; i++)
	{
		WlRow		row;

		if (wl_authz_lock(ids[i], &row) && row.state == WL_DEAD_LETTER &&
			retry_locked(&row, actor))
			moved[(*n)++] = ids[i];
	}
	return moved;
}

/*
 * wl_timeout: TIMED_OUT, then READY if "timeout" is in retry_on and attempts
 * remain, else DEAD_LETTER.  Returns the state it ends in.
 */
WlState
wl_timeout(const char *workload_id, const char *actor)
{
	WlRow		row;

	wl_authz_lock_or_refuse(workload_id, &row);
	return wl_retry_timeout(&row, actor, "timeout", false);
}
