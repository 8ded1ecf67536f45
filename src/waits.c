/*
 * waits.c: durable waits (SPEC section 7): entering a wait, signals,
 * approvals, and what the tick does when a wait's deadline comes.  A wait
 * releases the claim; a wake resolves the wait (keeping its payload or
 * decision for workload_resume) and puts the workload back to READY.  Every
 * state change goes through transition.c.  Layer 3.
 */
#include "postgres.h"

#include "utils/acl.h"

#include "authz.h"
#include "clock.h"
#include "fence.h"
#include "jsonb_util.h"
#include "retry.h"
#include "spec.h"
#include "store_ops.h"
#include "transition.h"
#include "waits.h"

/* A wake: how a wait is answered. */
typedef struct WlWake
{
	const char *kind;			/* the kind of wait it answers */
	const char *wake_key;		/* NULL: any key */
	WlWaitAnswer answer;
	const char *actor;
} WlWake;

static const char *const wait_kinds[] = {"event", "schedule", "human_approval", NULL};

/* wl_wait_kind_known: event, schedule or human_approval. */
bool
wl_wait_kind_known(const char *kind)
{
	return wl_in_list(wait_kinds, kind);
}

/*
 * wake answers the open wait of a locked row and moves it to READY, due
 * now.  It does nothing and returns false unless the row is WAITING on a
 * wait of k's kind (and key) whose deadline has not passed: a cancelled
 * workload, a late wake or a wake of the wrong kind changes nothing.  A
 * schedule wait is the opposite: it wakes only once its deadline has come.
 */
static bool
wake(WlRow *row, const WlWake *k)
{
	WlWait		w;
	bool		schedule = strcmp(k->kind, "schedule") == 0;
	WlJson		b;

	if (row->state != WL_WAITING || !wl_store_wait_open(row, &w))
		return false;
	if (strcmp(w.kind, k->kind) != 0)
		return false;
	if (k->wake_key && (w.wake_key == NULL || strcmp(w.wake_key, k->wake_key) != 0))
		return false;
	if (schedule != (w.deadline <= wl_now()))
		return false;
	wl_store_wait_resolve(row, w.number, &k->answer);
	wl_json_begin(&b);
	wl_json_str(&b, "cause", k->answer.outcome);
	wl_json_str(&b, "kind", w.kind);
	wl_json_int(&b, "wait_number", w.number);
	if (w.wake_key)
		wl_json_str(&b, "wake_key", w.wake_key);
	if (k->answer.approver)
		wl_json_str(&b, "approver", k->answer.approver);
	if (k->answer.approver_role)
		wl_json_str(&b, "approver_role", k->answer.approver_role);
	row->next_attempt_at = wl_now();
	wl_transition(row, WL_READY, k->actor, wl_json_end(&b));
	return true;
}

/*
 * wl_wait_due acts on a locked WAITING row whose wait deadline has come: a
 * schedule wait wakes (READY); an event or approval wait expires: TIMED_OUT,
 * then READY if "timeout" is retried and attempts remain, else DEAD_LETTER.
 */
WlWaitDue
wl_wait_due(WlRow *row)
{
	WlWait		w;
	WlWake		k = {0};

	if (row->state != WL_WAITING || !wl_store_wait_open(row, &w) ||
		w.deadline > wl_now())
		return WL_WAIT_NONE;
	k.actor = "workload.tick";
	if (strcmp(w.kind, "schedule") == 0)
	{
		k.kind = "schedule";
		k.answer.outcome = "scheduled";
		return wake(row, &k) ? WL_WAIT_WOKEN : WL_WAIT_NONE;
	}
	k.answer.outcome = "expired";
	wl_store_wait_resolve(row, w.number, &k.answer);
	wl_retry_timeout(row, "workload.tick", "wait_expired", false);
	return WL_WAIT_EXPIRED;
}

/*
 * wl_wait_enter moves the fenced workload to WAITING: releases the claim,
 * ends the attempt (outcome WAITING; it does not count against
 * max_attempts) and opens the wait.  Raises WORKLOAD_NOT_FOUND, the fence
 * codes, and WORKLOAD_TRANSITION_DENIED outside RUNNING and CHECKPOINTED.
 */
WlState
wl_wait_enter(const WlFence *fence, const char *kind, const char *wake_key,
			  TimestampTz deadline)
{
	WlRow		row;
	WlJson		b;
	Jsonb	   *evidence;

	wl_fence_lock(fence, &row);
	wl_state_require(row.workload_id, row.state, WL_WAITING);
	row.wait_count++;
	wl_store_wait_put(&row, kind, wake_key, deadline);
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_int(&b, "wait_number", row.wait_count);
	wl_json_str(&b, "kind", kind);
	wl_json_str(&b, "wake_key", wake_key);
	wl_json_ts(&b, "deadline", deadline);
	evidence = wl_json_end(&b);
	wl_store_attempt_close(&row, "WAITING", NULL, NULL);
	wl_fence_release(&row);
	row.wait_until = deadline;
	wl_transition(&row, WL_WAITING, fence->worker_id, evidence);
	return row.state;
}

/*
 * wl_wait_signal wakes the event waits on wake_key of one tenant and
 * application (WORKLOAD_UNAUTHORIZED for a non-member) with a payload kept
 * for workload_resume; returns how many woke.  Waits whose deadline has
 * passed, and workloads no longer WAITING, are left alone.  Rows are locked
 * in workload_id order, so two signals never wait on each other in a cycle.
 */
int
wl_wait_signal(const char *tenant_id, const char *application_id, const char *wake_key,
			   Jsonb *payload)
{
	WlWake		k = {0};
	int			n;
	char	  **ids;
	int			woken = 0;

	wl_authz_require_member(tenant_id, application_id);
	k.kind = "event";
	k.wake_key = wake_key;
	k.answer.payload = payload;
	k.answer.outcome = "signalled";
	k.actor = "workload.signal";
	ids = wl_store_waits_keyed(tenant_id, application_id, wake_key, wl_now(), &n);
	for (int i = 0; i < n; i++)
	{
		WlRow		row;

		if (wl_authz_lock(ids[i], &row) && wake(&row, &k))
			woken++;
	}
	return woken;
}

/*
 * same_person: whether the approving role could be the role that created
 * the workload: the same role, a member of it (SET ROLE to it), or a role it
 * is a member of (the creator could SET ROLE to the approver), by identity;
 * superuser rights do not count as membership either way.  A creator that
 * no longer exists under its name (renamed or dropped) cannot be told apart
 * from the approver, so it could be anyone.
 */
static bool
same_person(const char *creator, Oid approver)
{
	Oid			c = get_role_oid(creator, true);

	if (!OidIsValid(c))
		return true;
	return c == approver || is_member_of_role_nosuper(approver, c) ||
		is_member_of_role_nosuper(c, approver);
}

/*
 * wl_wait_approve answers a human_approval wait either way (READY); the
 * decision, approver and note reach the run through workload_resume.  false,
 * changing nothing, when the workload is not waiting for an approval.
 * WORKLOAD_NOT_FOUND when the caller may not touch it; WORKLOAD_UNAUTHORIZED
 * when the caller could be the role that created it (same_person;
 * superusers aside).  The approving role is recorded beside the approver's
 * name.
 */
bool
wl_wait_approve(const char *workload_id, const char *approver, bool approved, const char *note)
{
	WlWake		k = {0};
	WlRow		row;
	WlSpecRow	spec;

	k.kind = "human_approval";
	k.answer.approver = approver;
	k.answer.has_decision = true;
	k.answer.approved = approved;
	k.answer.outcome = approved ? "approved" : "rejected";
	k.answer.note = note;
	k.answer.approver_role = wl_authz_caller()->role;
	k.actor = approver;
	wl_authz_lock_or_refuse(workload_id, &row);
	wl_store_spec_read(&row, &spec);
	/* an approval needs a second pair of eyes: not the creator under another role */
	if (!wl_authz_caller()->superuser && spec.created_by != NULL &&
		same_person(spec.created_by, wl_authz_caller_oid()))
		wl_refuse(WL_E_UNAUTHORIZED,
				  OidIsValid(get_role_oid(spec.created_by, true)) ?
				  errdetail("Role \"%s\" created workload \"%s\"; role \"%s\" is it or shares its membership, and cannot approve it.",
							spec.created_by, workload_id, wl_authz_caller()->role) :
				  errdetail("Role \"%s\", which created workload \"%s\", no longer exists under that name: no approver can be told apart from it.",
							spec.created_by, workload_id),
				  OidIsValid(get_role_oid(spec.created_by, true)) ? 0 :
				  errhint("A superuser may approve it."));
	return wake(&row, &k);
}
