/*
 * recovery.c: maintenance, bounded, fair and isolated.  Lease recovery and
 * the tick's scans (silent heartbeats, due deadlines) read due rows in fair
 * order between tenants (each tenant's soonest first, the tenants in turn:
 * store_sql.c, FAIR), so the budget of a pass reaches a quiet tenant's one
 * due row however many another tenant has, and act on them in batches, each
 * in its own memory context.  Each batch runs in a subtransaction; when one
 * fails, its rows are done again one by one, each in its own, and a row
 * whose step fails is skipped and reported while every other row is still
 * handled in the same pass: one tenant's broken workload never stops
 * anyone's maintenance.  A row another session holds is never waited for
 * (pass.c): it is taken SKIP LOCKED, and a step that meets another lock
 * gives way and is left for a later pass.  This is the one place an error is
 * caught: its subtransaction is rolled back, as PL/pgSQL's EXCEPTION does,
 * and it is reported; a cancel is re-thrown.  Layer 3.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "catalog.h"
#include "pass.h"
#include "clock.h"
#include "deadline.h"
#include "errors.h"
#include "fence.h"
#include "jsonb_util.h"
#include "recovery.h"
#include "retry.h"
#include "store_ops.h"
#include "transition.h"
#include "waits.h"

#define WL_TICK_BATCH 100		/* rows per subtransaction */
#define WL_TICK_LIMIT 1000		/* rows acted on per kind of work per tick */
#define WL_TICK_FETCH 2000		/* rows a scan reads, in fair order, per kind of work per tick */
#define WL_DEFER_FIRST_MS 10000 /* a failed row's first wait before the tick tries it again */
#define WL_DEFER_MAX_MS 300000	/* its longest (the wait doubles with each failure) */
#define WL_DEFER_HELD_MS 1000	/* a row whose step gave way to another session's lock */
#define WL_DEFER_ROWS 10000		/* failed rows remembered by a session */

typedef int (*WlScan) (TimestampTz now, const WlCaller *who, int limit, WlDue **out);
struct WlPass;
typedef bool (*WlAct) (WlRow *row, struct WlPass *p);

/* the pass being run, for the functions a subtransaction calls */
typedef struct WlPass
{
	WlAct		act;
	const char *grant_id;		/* the revocation being swept */
	const WlCaller *who;		/* whose rows (NULL: the system's, all) */
	WlTickReport *r;
	WlDue	   *due;
	int			from;
	int			to;
	List	   *acted;			/* ids acted on in this try */
	int			nacted;			/* rows acted on in this try */
	uint64		done;			/* rows acted on in this pass */
	bool		defer;			/* a failed row waits before it is tried again */
	uint64		deferred_now;	/* rows whose failure this pass deferred */
	int			first_held;		/* a sweep: the first row another session held (-1: none) */
} WlPass;

/*
 * The rows whose step failed in a tick's pass, by step and workload, in
 * this session: each is passed over (counted "deferred") until its wait
 * is over, 10 s after its first failure, doubling to 5 min; a success
 * forgets it.  So rows that fail every time are neither tried again on
 * every pass, flooding the log, nor keep the rows behind them from
 * being reached.
 */
typedef struct WlDeferred
{
	uint64		key;
	TimestampTz retry_at;
	int			failures;
} WlDeferred;

static HTAB *deferred_rows = NULL;

static uint64
deferred_key(WlAct act, const char *workload_id)
{
	return hash_bytes_extended((const unsigned char *) workload_id, strlen(workload_id),
							   (uint64) (uintptr_t) act);
}

/* deferred: whether the row is waiting after a failure */
static bool
deferred(WlAct act, const char *workload_id, TimestampTz now)
{
	uint64		key;
	WlDeferred *d;

	if (deferred_rows == NULL || hash_get_num_entries(deferred_rows) == 0)
		return false;
	key = deferred_key(act, workload_id);
	d = hash_search(deferred_rows, &key, HASH_FIND, NULL);
	return d != NULL && d->retry_at > now;
}

/*
 * defer: the row failed (held: gave way to another session's lock); it
 * waits (when there is room to remember it)
 */
static void
defer(WlPass *p, const char *workload_id, bool held)
{
	uint64		key = deferred_key(p->act, workload_id);
	TimestampTz now = wl_now();
	WlDeferred *d;
	bool		found;

	if (deferred_rows == NULL)
	{
		HASHCTL		ctl = {.keysize = sizeof(uint64), .entrysize = sizeof(WlDeferred)};

		deferred_rows = hash_create("workload deferred rows", 256, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	if (hash_get_num_entries(deferred_rows) >= WL_DEFER_ROWS)
	{
		HASH_SEQ_STATUS it;

		/* full: the rows whose wait is over are forgotten (a new failure starts them again) */
		hash_seq_init(&it, deferred_rows);
		while ((d = hash_seq_search(&it)) != NULL)
			if (d->retry_at <= now)
				(void) hash_search(deferred_rows, &d->key, HASH_REMOVE, NULL);
		if (hash_get_num_entries(deferred_rows) >= WL_DEFER_ROWS)
			return;
	}
	d = hash_search(deferred_rows, &key, HASH_ENTER, &found);
	if (held)
	{
		/* not a failure: the row is tried again soon, whatever failed before */
		d->failures = found ? d->failures : 0;
		d->retry_at = now + (int64) WL_DEFER_HELD_MS * 1000;
		return;
	}
	d->failures = found ? Min(d->failures + 1, 16) : 1;
	d->retry_at = now + Min((int64) WL_DEFER_FIRST_MS << (d->failures - 1),
							(int64) WL_DEFER_MAX_MS) * 1000;
	p->deferred_now++;
}

/* forget: the rows from..to of p succeeded */
static void
forget(WlPass *p)
{
	if (deferred_rows == NULL || hash_get_num_entries(deferred_rows) == 0)
		return;
	for (int i = p->from; i < p->to; i++)
	{
		uint64		key = deferred_key(p->act, p->due[i].workload_id);

		(void) hash_search(deferred_rows, &key, HASH_REMOVE, NULL);
	}
}

/*
 * recover_one: the attempt of a workload whose lease expired is
 * WORKER_LOST; a requested cancellation completes; anything else goes
 * through RECOVERING back to READY (with backoff) while attempts remain,
 * else to DEAD_LETTER.  A row whose lease no longer expired is left alone.
 */
static bool
recover_one(WlRow *row, WlPass *p)
{
	WlTickReport *r = p->r;
	Jsonb	   *evidence;

	if (row->claim_id == NULL || row->lease_expires_at > wl_now())
		return false;
	evidence = wl_fence_evidence(row, "lease_expired");
	wl_store_attempt_close(row, "WORKER_LOST", "worker_lost", NULL);
	wl_fence_release(row);
	if (row->state == WL_CANCELLATION_REQUESTED)
		wl_transition(row, WL_CANCELLED, "workload.recovery", evidence);
	else
	{
		wl_transition(row, WL_RECOVERING, "workload.recovery", evidence);
		wl_retry_or_dead_letter(row, NULL, "workload.recovery");
	}
	r->recovered++;
	return true;
}

/*
 * deadline_one acts on a row whose deadline has come: the overall timeout
 * first (final), else the state's own: queue (final), claim and execution
 * (retried under the policy), or the wait's deadline.  A row whose deadline
 * no longer means anything gets it cleared, so no row is found again.
 */
static bool
deadline_one(WlRow *row, WlPass *p)
{
	WlTickReport *r = p->r;
	TimestampTz now = wl_now();

	if (!row->has_deadline || row->deadline_at > now)
		return false;
	if (wl_deadline_overall_due(row, now))
	{
		wl_retry_timeout(row, "workload.tick", "overall_timeout", true);
		r->overall++;
		return true;
	}
	switch (row->state)
	{
		case WL_READY:
			wl_retry_timeout(row, "workload.tick", "queue_timeout", true);
			r->queue++;
			return true;
		case WL_CLAIMED:
			wl_retry_timeout(row, "workload.tick", "claim_timeout", false);
			r->claim++;
			return true;
		case WL_RUNNING:
		case WL_CHECKPOINTED:
			wl_retry_timeout(row, "workload.tick", "execution_timeout", false);
			r->execution++;
			return true;
		case WL_WAITING:
			switch (wl_wait_due(row))
			{
				case WL_WAIT_WOKEN:
					r->woken++;
					return true;
				case WL_WAIT_EXPIRED:
					r->expired++;
					return true;
				default:
					break;
			}
			break;
		default:
			break;
	}
	row->has_deadline = false;
	wl_store_save(row);
	return false;
}

/* heartbeat_one: silence for heartbeat_ms times the run out like workload_timeout. */
static bool
heartbeat_one(WlRow *row, WlPass *p)
{
	if (row->claim_id == NULL || !wl_state_can_time_out(row->state))
		return false;
	wl_retry_timeout(row, "workload.tick", "heartbeat_timeout", false);
	p->r->heartbeat++;
	return true;
}

/*
 * revoke_one moves a workload whose authorization was revoked (p->grant_id
 * is in its chain) to DEAD_LETTER, with evidence {"cause":
 * "authorization_revoked"}: through TIMED_OUT from where it may be handed to
 * a worker or is held by one (the claim is released, its attempt closed),
 * straight from FAILED or TIMED_OUT.  A requested cancellation is left to
 * complete; final and dead-lettered workloads are left as they are.
 */
static bool
revoke_one(WlRow *row, WlPass *p)
{
	if (!wl_recovery_unauthorized(row, "authorization_revoked", p->grant_id, "workload.tick"))
		return false;
	p->r->revoked++;
	return true;
}

/*
 * wl_recovery_unauthorized moves a locked workload whose authorization no
 * longer holds (cause: authorization_revoked, with the grant revoked;
 * authorization_expired) to DEAD_LETTER, with evidence {"cause": cause}:
 * through TIMED_OUT from where it may be handed to a worker or is held by
 * one (the claim is released, its attempt closed), straight from FAILED or
 * TIMED_OUT.  A requested cancellation is left to complete; final and
 * dead-lettered workloads are left as they are (false).
 */
bool
wl_recovery_unauthorized(WlRow *row, const char *cause, const char *grant_id, const char *actor)
{
	WlJson		b;
	Jsonb	   *ev;

	if (!wl_state_allowed(row->state, WL_DEAD_LETTER) && !wl_state_can_time_out(row->state))
		return false;
	wl_json_begin(&b);
	wl_json_str(&b, "cause", cause);
	if (grant_id)
		wl_json_str(&b, "grant_id", grant_id);
	ev = wl_json_end(&b);
	if (row->claim_id)
	{
		char	   *outcome = pstrdup(cause);

		for (char *c = outcome; *c; c++)
			*c = pg_toupper((unsigned char) *c);
		wl_store_attempt_close(row, outcome, cause, NULL);
		wl_fence_release(row);
	}
	if (wl_state_can_time_out(row->state))
		wl_transition(row, WL_TIMED_OUT, actor, ev);
	wl_transition(row, WL_DEAD_LETTER, actor, ev);
	return true;
}

/*
 * act_range runs the pass's step on its rows from..to, each locked again,
 * passing over one another transaction holds (the next pass sees it; a
 * revocation's sweep, which must reach every one, notes the first, and
 * goes on from it next time).
 */
static void
act_range(WlPass *p)
{
	for (int i = p->from; i < p->to; i++)
	{
		WlRow		row;
		bool		locked = wl_store_lock_unheld(p->due[i].workload_id, p->who, &row);

		if (!locked && p->grant_id && p->first_held < 0)
			p->first_held = i;
		if (locked && p->act(&row, p))
		{
			p->nacted++;
			if (p->r->keep_ids)
				p->acted = lappend(p->acted, p->due[i].workload_id);
		}
	}
}

static void
act_range_fn(void *p)
{
	act_range((WlPass *) p);
}

/*
 * isolated runs act_range in a subtransaction.  On success the counts and
 * ids it made stand; on an error it is rolled back, the counts restored,
 * and the error returned (a cancel or shutdown is re-thrown).
 */
static ErrorData *
isolated(WlPass *p)
{
	WlTickReport saved = *p->r;
	ErrorData  *err;

	p->acted = NIL;
	p->nacted = 0;
	err = wl_isolated(act_range_fn, p);
	if (err != NULL)
	{
		*p->r = saved;
		p->acted = NIL;
		p->nacted = 0;
	}
	return err;
}

/* report records a row whose step failed; keeps the first WL_REPORT_ERRORS. */
static void
report(WlTickReport *r, const char *workload_id, ErrorData *e, MemoryContext keep)
{
	r->failed++;
	if (list_length(r->errors) < WL_REPORT_ERRORS)
	{
		MemoryContext old = MemoryContextSwitchTo(keep);
		WlStepError *s = palloc(sizeof(WlStepError));

		s->workload_id = pstrdup(workload_id);
		s->sqlstate = pstrdup(unpack_sql_state(e->sqlerrcode));
		s->message = pstrdup(e->message ? e->message : "");
		r->errors = lappend(r->errors, s);
		MemoryContextSwitchTo(old);
	}
	ereport(WARNING,
			(errmsg("workload maintenance skipped workload \"%s\": %s", workload_id,
					e->message ? e->message : "(no message)")));
}

/*
 * keep_acted moves the ids a successful try acted on into the report,
 * counts them, and forgets its rows' failures.
 */
static void
keep_acted(WlPass *p, MemoryContext keep)
{
	MemoryContext old = MemoryContextSwitchTo(keep);
	ListCell   *lc;

	p->done += p->nacted;
	forget(p);
	foreach(lc, p->acted)
		p->r->recovered_ids = lappend(p->r->recovered_ids, pstrdup((char *) lfirst(lc)));
	MemoryContextSwitchTo(old);
}

/*
 * run_batch handles the due rows start..start+n in one subtransaction; when
 * it fails, each row again in its own, so only the rows that fail are
 * skipped.  A row whose step gave way to another session's lock (pass.c) is
 * left for a later pass, counted in r->held, not reported as failed.
 */
static void
run_batch(WlPass *p, int start, int n, MemoryContext keep)
{
	ErrorData  *e;

	p->from = start;
	p->to = start + n;
	if ((e = isolated(p)) == NULL)
	{
		keep_acted(p, keep);
		return;
	}
	for (int i = start; i < start + n; i++)
	{
		p->from = i;
		p->to = i + 1;
		if ((e = isolated(p)) == NULL)
			keep_acted(p, keep);
		else if (wl_pass_gave_way(e->sqlerrcode))
		{
			p->r->held++;
			if (p->grant_id && p->first_held < 0)
				p->first_held = i;
			if (p->defer)
				defer(p, p->due[i].workload_id, true);
		}
		else
		{
			report(p->r, p->due[i].workload_id, e, keep);
			if (p->defer)
				defer(p, p->due[i].workload_id, false);
		}
	}
}

/*
 * pass reads due rows in fair order (scan) and hands them to run_batch in
 * batches, until it has acted on limit rows, the scan's rows are done, or
 * the maintenance pass's time is spent; with limit 0, it reads again after
 * each read it acted on, until none is left (rows it could not act on,
 * held or failing, are not read twice in a row: a read that acts on none
 * ends it).  r->more says that due rows may be left.  With defer (the
 * tick's passes) a row that failed waits before it is tried again, and a
 * row waiting is passed over, counted in r->deferred.
 */
static void
pass(WlScan scan, const WlCaller *who, WlAct act, uint64 limit, bool defer, WlTickReport *r)
{
	MemoryContext keep = CurrentMemoryContext;
	MemoryContext batch = AllocSetContextCreate(keep, "workload maintenance batch",
												ALLOCSET_DEFAULT_SIZES);
	WlPass		p = {act, NULL, who, r};
	int			fetch = limit > 0 ? (int) Min(limit * 2, (uint64) WL_TICK_FETCH * 10) : WL_TICK_FETCH;

	p.defer = defer;
	p.first_held = -1;
	for (;;)
	{
		MemoryContext old = MemoryContextSwitchTo(batch);
		uint64		before = p.done;
		int			n;
		int			m = 0;
		int			i;

		wl_pass_step();
		n = scan(wl_now(), who, fetch, &p.due);
		for (i = 0; i < n; i++)
		{
			if (defer && deferred(act, p.due[i].workload_id, wl_now()))
				r->deferred++;
			else
				p.due[m++] = p.due[i];
		}
		for (i = 0; i < m && (limit == 0 || p.done < limit); i += WL_TICK_BATCH)
		{
			if (wl_pass_spent())
				break;
			wl_pass_step();
			run_batch(&p, i, Min(WL_TICK_BATCH, m - i), keep);
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(batch);
		if (i < m || n == fetch)
			r->more = r->more || p.done > before || p.deferred_now > 0 || i < m;
		if (limit > 0 || n < fetch || p.done == before || wl_pass_spent())
			break;
	}
	MemoryContextDelete(batch);
}

/* the scans, in WlScan's shape (only leases are scanned for a caller) */
static int
scan_expired(TimestampTz now, const WlCaller *who, int limit, WlDue **out)
{
	return wl_store_expired(now, who, limit, out);
}

static int
scan_deadlines(TimestampTz now, const WlCaller *who, int limit, WlDue **out)
{
	return wl_store_deadline_due(now, limit, out);
}

static int
scan_held_deadlines(TimestampTz now, const WlCaller *who, int limit, WlDue **out)
{
	return wl_store_held_deadline_due(now, limit, out);
}

static int
scan_heartbeats(TimestampTz now, const WlCaller *who, int limit, WlDue **out)
{
	return wl_store_heartbeat_due(now, limit, out);
}

/*
 * wl_recovery_leases recovers every workload the caller may touch whose
 * lease has expired (see recover_one), at most limit (0: all there are when
 * it looks); rows another transaction holds are skipped (they are being
 * written right now, and the next pass sees them).
 */
void
wl_recovery_leases(uint64 limit, WlTickReport *r)
{
	wl_store_held_begin();
	pass(scan_expired, wl_authz_caller(), recover_one, limit, false, r);
	wl_store_held_end();
}

#define WL_SWEEP_REVOCATIONS 10	/* revocations swept a tick */
#define WL_SWEEP_SLICE 10000	/* workloads looked at per revocation a tick */

/*
 * sweep_revocations dead-letters the queued and held work of revoked
 * grants: for each revocation not swept yet, the next slice of workloads
 * (in id order, from where its sweep stopped) is looked at, and those whose
 * authorization chain holds the grant go to DEAD_LETTER (revoke_one), in
 * isolated batches.  A workload another session holds is not waited for:
 * the sweep goes on from it next time.  A revocation is swept once its scan
 * reached the end; meanwhile claims skip its work.
 */
static void
sweep_revocations(WlTickReport *r)
{
	MemoryContext keep = CurrentMemoryContext;
	MemoryContext one = AllocSetContextCreate(keep, "workload revocation sweep",
											  ALLOCSET_DEFAULT_SIZES);
	WlRevocation *revs;
	int			n = wl_store_revocations_unswept(WL_SWEEP_REVOCATIONS, &revs);

	for (int i = 0; i < n; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(one);
		WlPass		p = {revoke_one, revs[i].grant_id, NULL, r};
		char	   *last;
		int			scanned;
		int			m;
		char	  **ids;
		int			j;

		if (wl_pass_spent())
		{
			r->more = true;
			MemoryContextSwitchTo(old);
			break;
		}
		wl_pass_step();
		ids = wl_store_revoked_slice(revs[i].grant_id, revs[i].sweep_after,
									 WL_SWEEP_SLICE, &last, &scanned, &m);
		p.first_held = -1;
		p.due = palloc(sizeof(WlDue) * (m + 1));
		for (j = 0; j < m; j++)
			p.due[j].workload_id = ids[j];
		for (j = 0; j < m && p.first_held < 0 && !wl_pass_spent(); j += WL_TICK_BATCH)
		{
			wl_pass_step();
			run_batch(&p, j, Min(WL_TICK_BATCH, m - j), keep);
		}
		if (p.first_held >= 0 || j < m)
		{
			/* from the first row held (or not reached), next time */
			int			k = p.first_held >= 0 ? p.first_held : j;

			wl_store_revocation_progress(revs[i].grant_id,
										 k > 0 ? p.due[k - 1].workload_id : revs[i].sweep_after,
										 false, wl_now());
			r->more = true;
		}
		else
		{
			wl_store_revocation_progress(revs[i].grant_id, last ? last : revs[i].sweep_after,
										 scanned < WL_SWEEP_SLICE, wl_now());
			if (scanned == WL_SWEEP_SLICE)
				r->more = true;
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(one);
	}
	MemoryContextDelete(one);
}

static void
sweep_fn(void *r)
{
	sweep_revocations((WlTickReport *) r);
}

/*
 * sweep_on_citus: on Citus the coordinator sweeps for the whole cluster (a
 * sweep's progress is a row of a reference table); in a subtransaction,
 * so that a node it cannot reach is reported, not an end to the tick.
 */
static void
sweep_on_citus(WlTickReport *r)
{
	WlTickReport saved = *r;
	ErrorData  *e;

	if (!wl_store_citus_coordinator())
		return;
	e = wl_isolated(sweep_fn, r);
	if (e != NULL)
	{
		*r = saved;
		report(r, "(revocation sweep)", e, CurrentMemoryContext);
	}
}

/*
 * wl_recovery_leases_phase: the first phase of a maintenance pass, the one
 * every tenant waits on: expired leases, silent heartbeats, then every row
 * whose deadline has come (rows nobody holds by the deadline index, then
 * held rows by their lease), at most WL_TICK_LIMIT rows of each, in fair
 * order between tenants, with r->more when some were left.  The caller holds
 * the tick's single-runner lock, in a maintenance pass (pass.c).  On Citus
 * every node runs its own, over the shards it holds
 * (wl_store_citus_local_due).
 */
void
wl_recovery_leases_phase(WlTickReport *r)
{
	wl_store_held_begin();
	pass(scan_expired, NULL, recover_one, WL_TICK_LIMIT, true, r);
	pass(scan_heartbeats, NULL, heartbeat_one, WL_TICK_LIMIT, true, r);
	pass(scan_deadlines, NULL, deadline_one, WL_TICK_LIMIT, true, r);
	pass(scan_held_deadlines, NULL, deadline_one, WL_TICK_LIMIT, true, r);
	wl_store_held_end();
}

/*
 * wl_recovery_sweeps_phase: the work of revoked grants (on Citus, the
 * coordinator's, for the whole cluster).  The caller holds the tick's
 * single-runner lock, in a maintenance pass.
 */
void
wl_recovery_sweeps_phase(WlTickReport *r)
{
	if (wl_store_citus_distributed())
		sweep_on_citus(r);
	else
		sweep_revocations(r);
}
