/*
 * claim.c: the worker taking and holding work: claims (of the best due
 * READY workloads of a tenant, or of one named workload), start, and
 * heartbeats (one or a batch).  Layer 3.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "claim.h"
#include "claim_resume.h"
#include "clock.h"
#include "recovery.h"
#include "deadline.h"
#include "fence.h"
#include "finish.h"
#include "grants.h"
#include "jsonb_util.h"
#include "transition.h"

/*
 * drop_lapsed: of the n workloads a claim has just taken, one whose
 * authority has lapsed is not handed out: it goes to DEAD_LETTER with
 * cause authorization_expired (SPEC section 5.1); the rest stay, in order.
 * Returns how many stay.
 */
static int
drop_lapsed(WlClaimed *c, int n)
{
	TimestampTz now = wl_now();
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		WlRow		row;

		if (c[i].lapses_at == 0 || c[i].lapses_at > now)
			c[k++] = c[i];
		else if (wl_store_lock(c[i].workload_id, NULL, &row))
			(void) wl_recovery_unauthorized(&row, "authorization_expired", NULL, "workload.claim");
	}
	return k;
}

/* refuse_one: a claimed workload whose authority does not hold goes to DEAD_LETTER with its cause */
static void
refuse_one(const WlClaimed *c, const char *cause)
{
	WlRow		row;

	if (wl_store_lock(c->workload_id, NULL, &row))
		(void) wl_recovery_unauthorized(&row, cause, NULL, "workload.claim");
}

static int
names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * contexts_read: the execution contexts of a batch the claim read what they
 * need of (capabilities, environment, scopes, grants and their chains) as
 * it took them: none of their grants revoked (one statement over every
 * grant they name; false when one is, and the batch goes the long way),
 * the snapshot they share verified once.  Each whose
 * authority does not hold is dead-lettered.  Returns how many stay.
 */
static bool
contexts_read(WlClaimed *c, int n, const char *tenant_id, const char *application_id, int *kept)
{
	Jsonb	  **snapshots = palloc(sizeof(Jsonb *) * n);
	Jsonb	  **authorities = palloc(sizeof(Jsonb *) * n);
	char	  **names;
	Datum	   *ids;
	int			nids = 0;
	int			nunique = 0;
	WlAuthorityMemo memo = {0};
	ArrayType  *none = construct_empty_array(TEXTOID);
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		if (c[i].capability_snapshot == NULL || c[i].run_authority == NULL)
			return false;
		snapshots[i] = c[i].authorization_snapshot;
		authorities[i] = c[i].run_authority;
	}
	/*
	 * every grant the batch names, once: each chain stored at create, each
	 * snapshot's and authority's own
	 */
	for (int i = 0; i < n; i++)
		nids += ArrayGetNItems(ARR_NDIM(c[i].grant_ids), ARR_DIMS(c[i].grant_ids)) + 2;
	names = palloc(sizeof(char *) * (nids + 1));
	nids = 0;
	for (int i = 0; i < n; i++)
	{
		int			m;
		char	  **chain = wl_array_items(c[i].grant_ids, &m);
		char	   *own[2] = {
			wl_json_get_text(wl_json_get_object(&snapshots[i]->root, "grant"), "id"),
			wl_json_get_text(wl_json_get_object(&authorities[i]->root, "grant"), "id")};

		for (int j = 0; j < m; j++)
			names[nids++] = chain[j];
		for (int j = 0; j < 2; j++)
			if (own[j] != NULL)
				names[nids++] = own[j];
	}
	qsort(names, nids, sizeof(char *), names_cmp);
	ids = palloc(sizeof(Datum) * (nids + 1));
	for (int i = 0; i < nids; i++)
	{
		if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
			ids[nunique++] = CStringGetTextDatum(names[i]);
	}
	if (wl_store_revoked_among(construct_array(ids, nunique, TEXTOID, -1, false, TYPALIGN_INT)))
		return false;
	for (int i = 0; i < n; i++)
	{
		WlRow		row = {0};
		WlSpecRow	spec = {0};
		char	   *detail;
		const char *cause;

		row.workload_id = c[i].workload_id;
		row.tenant_id = (char *) tenant_id;
		row.application_id = (char *) application_id;
		row.seq = c[i].key.seq;
		row.attempt_count = c[i].attempt;
		row.claim_id = c[i].claim_id;
		row.fencing_token = c[i].fencing_token;
		row.lease_expires_at = c[i].lease_expires_at;
		row.capability_snapshot = c[i].capability_snapshot;
		row.authority_expires_at = c[i].lapses_at;
		spec.authorization_snapshot = snapshots[i];
		spec.run_authority = authorities[i];
		spec.connection_scopes = c[i].connection_scopes;
		spec.definition_id = c[i].definition_id;
		spec.definition_revision = c[i].definition_revision;
		spec.environment = c[i].environment;
		spec.grant_ids = c[i].grant_ids;
		c[i].context = wl_context_of(&row, &spec, none, &detail, &cause, &memo);
		if (c[i].context != NULL)
			c[k++] = c[i];
		else
			refuse_one(&c[i], cause);
	}
	*kept = k;
	return true;
}

/*
 * with_contexts: of the n workloads a claim has just taken, each whose
 * authority still holds gets its execution context (wl_context_of, with no
 * secret references); one whose authority no longer holds (revoked, lapsed,
 * or no longer verifying) goes to DEAD_LETTER with that cause instead of
 * being handed out.  Returns how many stay, in order.  What the claim read
 * of them serves when it can (contexts_read); else each is read again.
 */
static int
with_contexts(WlClaimed *c, int n, const char *tenant_id, const char *application_id)
{
	ArrayType  *none = construct_empty_array(TEXTOID);
	int			k = 0;

	if (n == 0 || contexts_read(c, n, tenant_id, application_id, &k))
		return k;
	for (int i = 0; i < n; i++)
	{
		WlRow		row;
		WlSpecRow	spec;
		char	   *detail;
		const char *cause;

		if (!wl_store_lock(c[i].workload_id, NULL, &row))
			continue;
		wl_store_spec_read(&row, &spec);
		c[i].context = wl_context_of(&row, &spec, none, &detail, &cause, NULL);
		if (c[i].context != NULL)
			c[k++] = c[i];
		else
			(void) wl_recovery_unauthorized(&row, cause, NULL, "workload.claim");
	}
	return k;
}

/*
 * wl_claim claims up to r->max_items due READY workloads of one tenant and
 * application (WORKLOAD_UNAUTHORIZED for a non-member) whose capabilities
 * the worker holds and whose dependencies are met, best first, skipping
 * rows other claimers hold, from this session's points in the queue
 * (claim_resume.c).  The claim statement moves the rows itself (the one
 * state change made in SQL), so the table is asked first.  One whose
 * authority has lapsed is dead-lettered, not handed out (drop_lapsed); with
 * r->context, so is one whose authority no longer verifies (with_contexts).
 */
int
wl_claim(WlClaimRequest *r, WlClaimed **out)
{
	int			n;

	wl_authz_require_member(r->tenant_id, r->application_id);
	wl_state_require("(claim)", WL_READY, WL_CLAIMED);
	if (r->start)
		wl_state_require("(claim)", WL_CLAIMED, WL_RUNNING);
	r->workload_id = NULL;
	r->role = wl_authz_caller()->role;
	n = wl_claim_queue(r, out);
	n = drop_lapsed(*out, n);
	return r->context ? with_contexts(*out, n, r->tenant_id, r->application_id) : n;
}

/*
 * wl_claim_named claims the workload r->workload_id, waiting for its row
 * lock: WORKLOAD_NOT_FOUND, WORKLOAD_NOT_READY (not READY, not yet due,
 * dependencies unmet), AUTHORIZATION_DENIED (its authorization was
 * revoked), WORKLOAD_CAPABILITY_DENIED.
 */
int
wl_claim_named(WlClaimRequest *r, WlClaimed **out)
{
	const char *id = r->workload_id;
	WlRow		row;
	WlSpecRow	spec;
	int			n;
	char	  **needed;

	wl_authz_lock_or_refuse(id, &row);
	if (row.state != WL_READY)
		wl_refuse(WL_E_NOT_READY, errdetail("Workload \"%s\" is %s.", id, wl_state_name(row.state)));
	if (row.next_attempt_at > wl_now())
		wl_refuse(WL_E_NOT_READY, errdetail("Workload \"%s\" is not due until %s.", id,
											timestamptz_to_str(row.next_attempt_at)));
	if (wl_store_unmet_dependencies(&row) > 0)
		wl_refuse(WL_E_NOT_READY, errdetail("Workload \"%s\" has unmet dependencies.", id));
	wl_store_spec_read(&row, &spec);
	if (wl_grant_authority_revoked(&spec))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("The authorization of workload \"%s\" has been revoked.", id));
	if (wl_deadline_lapsed(&row, wl_now()))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("The authorization of workload \"%s\" lapsed at %s.", id,
							timestamptz_to_str(row.authority_expires_at)));
	needed = wl_array_items(row.capability_snapshot, &n);
	for (int i = 0; i < n; i++)
	{
		if (!wl_array_contains(r->capabilities, needed[i]))
			wl_refuse(WL_E_CAPABILITY_DENIED,
					  errdetail("Workload \"%s\" requires capability \"%s\".", id, needed[i]));
	}
	wl_state_require(id, row.state, WL_CLAIMED);
	r->tenant_id = row.tenant_id;
	r->application_id = row.application_id;
	r->workload_seq = row.seq;
	r->max_items = 1;
	r->start = false;
	r->role = wl_authz_caller()->role;
	return wl_store_claim(r, out);
}

/* wl_start: CLAIMED -> RUNNING for the holder of the fence. */
void
wl_start(const WlFence *fence)
{
	WlRow		row;
	WlFencedCall c = {.kind = WL_FENCED_START, .fence = fence, .from = WL_CLAIMED, .to = WL_RUNNING};

	if (wl_fence_try(&c, &row))
	{
		wl_transition_applied(&row, WL_CLAIMED, fence->worker_id, wl_fence_evidence(&row, NULL));
		return;
	}
	wl_fence_lock(fence, &row);
	row.started_at = wl_now();
	wl_transition(&row, WL_RUNNING, fence->worker_id, wl_fence_evidence(&row, NULL));
}

/* beat_answer: a heartbeat's answer for the row as it is after the beat */
static Jsonb *
beat_answer(const WlRow *row, TimestampTz until)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row->workload_id);
	wl_json_str(&b, "state", wl_state_name(row->state));
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_ts(&b, "lease_expires_at", until);
	wl_json_bool(&b, "cancellation_requested", row->state == WL_CANCELLATION_REQUESTED);
	return wl_json_end(&b);
}

/*
 * beat extends the lease of a locked row whose fence holds, keeps progress
 * when given, saves it and returns the heartbeat's answer.
 */
static Jsonb *
beat(WlRow *row, TimestampTz until, Jsonb *progress)
{
	row->lease_expires_at = until;
	row->has_heartbeat = true;
	row->last_heartbeat_at = wl_now();
	if (progress)
	{
		row->progress = progress;
		row->progress_changed = true;
	}
	wl_store_save(row);
	return beat_answer(row, until);
}

/* try_beat: the heartbeat as one conditional statement; NULL when the fence does not hold */
static Jsonb *
try_beat(const WlFence *fence, TimestampTz until, Jsonb *progress)
{
	WlRow		row;
	WlFencedCall c = {.kind = WL_FENCED_BEAT, .fence = fence, .until = until, .progress = progress};

	return wl_fence_try(&c, &row) ? beat_answer(&row, until) : NULL;
}

/*
 * wl_heartbeat: the lease now runs until `until`; progress, when given, is
 * kept as the workload's latest.  The answer says whether cancellation was
 * requested.
 */
Jsonb *
wl_heartbeat(const WlFence *fence, TimestampTz until, Jsonb *progress)
{
	WlRow		row;
	Jsonb	   *answer = try_beat(fence, until, progress);

	if (answer)
		return answer;
	wl_fence_lock(fence, &row);
	return beat(&row, until, progress);
}

static int
beat_cmp(const void *a, const void *b)
{
	const WlBeat *x = a;
	const WlBeat *y = b;

	/* items without an id first; then by id, so rows are locked in one order */
	if (x->fence.workload_id == NULL || y->fence.workload_id == NULL)
		return (x->fence.workload_id != NULL) - (y->fence.workload_id != NULL);
	return strcmp(x->fence.workload_id, y->fence.workload_id);
}

/*
 * wl_heartbeat_batch is wl_heartbeat for every beat that parsed (err
 * WL_OK), decided each on its own: a refused one changes nothing and the
 * others are still extended.  The beats are sorted by workload_id and taken
 * in that order, so two batches never lock rows in opposite orders.
 */
void
wl_heartbeat_batch(WlBeat *beats, int n, TimestampTz until)
{
	qsort(beats, n, sizeof(WlBeat), beat_cmp);
	for (int i = 0; i < n; i++)
	{
		WlBeat	   *b = &beats[i];
		WlRow		row;

		if (b->err != WL_OK)
			continue;
		if ((b->answer = try_beat(&b->fence, until, b->progress)) != NULL)
			continue;
		if (!wl_authz_lock(b->fence.workload_id, &row))
		{
			b->err = WL_E_NOT_FOUND;
			b->detail = psprintf("No workload \"%s\".", b->fence.workload_id);
			continue;
		}
		b->err = wl_fence_verdict(&row, &b->fence, &b->detail);
		if (b->err == WL_OK)
			b->answer = beat(&row, until, b->progress);
	}
}
