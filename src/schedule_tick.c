/*
 * schedule_tick.c: the tick's schedule pass (SPEC section 4, "Scheduling
 * and bulk work").  Each due schedule is handled in its own subtransaction,
 * each of its slots' creates in another: a slot whose workload cannot be
 * made is skipped and recorded (last_error, a 'schedule.failed' event) and
 * the schedule goes on; a schedule whose pass fails as a whole is left for
 * the next tick and never stops the others.  A slot's workload is made
 * through wl_create, as the role that made the schedule, with the slot's
 * idempotency key: a slot fires once however many ticks race.  Bounded and
 * fair: the due schedules are taken in fair order between tenants (each
 * tenant's soonest first, the tenants in turn), at most WL_SCHEDULE_LIMIT
 * schedules, WL_SCHEDULE_SLOTS slots of each and WL_SCHEDULE_PASS_SLOTS in
 * all a tick, while the pass's time lasts; the rest are due next time.  A
 * schedule another session holds is passed over, and a slot whose create
 * meets another session's lock gives way: it is made by a later pass, not
 * recorded as failed.  The clock is read for each schedule.  Layer 3.
 */
#include "postgres.h"

#include "utils/acl.h"
#include "utils/memutils.h"

#include "authz.h"
#include "clock.h"
#include "create.h"
#include "cron.h"
#include "errors.h"
#include "guc.h"
#include "jsonb_util.h"
#include "pass.h"
#include "recovery.h"
#include "schedule.h"
#include "spec.h"

#define WL_SCHEDULE_LIMIT 1000	/* schedules a tick */
#define WL_SCHEDULE_SLOTS 100	/* slots of one schedule a tick */
#define WL_SCHEDULE_PASS_SLOTS 1000 /* slots of all schedules a tick */
#define WL_MISSED_AFTER_US (60 * USECS_PER_SEC)	/* a slot seen later than this is missed */
#define WL_SCHEDULE_WARNINGS 100	/* grants' expiries warned of a tick */

/* the schedule being handled, for the functions a subtransaction calls */
typedef struct WlFire
{
	WlSchedule *key;			/* as the scan found it */
	WlSchedule	s;				/* as locked */
	TimestampTz slot;			/* the slot being made */
	char	   *workload_id;	/* what its create returned */
	WlScheduleReport *r;
	int			slots_left;		/* of the tick's budget */
	bool		gave_way;		/* a slot's create met another session's lock */
} WlFire;

/*
 * finished: whether a schedule's previous workload no longer holds back
 * the next under overlap "skip": SUCCEEDED, CANCELLED or DEAD_LETTER, or
 * gone (purged).
 */
static bool
finished(const WlSchedule *s)
{
	WlState		state;

	if (s->last_workload_id == NULL ||
		!wl_store_workload_state(s->last_workload_id, s->tenant_id, &state))
		return true;
	return state == WL_SUCCEEDED || state == WL_CANCELLED || state == WL_DEAD_LETTER;
}

/*
 * make_slot (in its own subtransaction) creates the slot's workload through
 * the create path, acting as the role that made the schedule: its
 * membership and grant must still hold.
 */
static void
make_slot(void *arg)
{
	WlFire	   *f = arg;
	Oid			owner = get_role_oid(f->s.created_by, true);
	WlSpec		spec;
	Jsonb	   *doc;

	if (!OidIsValid(owner))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("Role \"%s\", which made the schedule, no longer exists.",
							f->s.created_by));
	wl_spec_parse_stored(wl_schedule_spec(&f->s, f->s.template, f->slot), &spec);
	wl_authz_set_caller(owner);
	doc = wl_create(&spec);
	f->workload_id = wl_json_get_text(&doc->root, "workload_id");
}

/* failure: the evidence of a slot whose workload could not be made. */
static Jsonb *
failure(TimestampTz slot, ErrorData *e)
{
	const char *code = unpack_sql_state(e->sqlerrcode);
	WlJson		b;

	for (int i = 1; i < WL_E_END; i++)
	{
		if (wl_errors[i].sqlerrcode == e->sqlerrcode)
			code = wl_errors[i].token;
	}
	wl_json_begin(&b);
	wl_json_ts(&b, "slot", slot);
	wl_json_str(&b, "code", code);
	wl_json_str(&b, "sqlstate", unpack_sql_state(e->sqlerrcode));
	wl_json_str(&b, "message", e->message ? e->message : "");
	if (e->detail)
		wl_json_str(&b, "detail", e->detail);
	wl_json_ts(&b, "at", wl_now());
	return wl_json_end(&b);
}

/* skipped: evidence of a skip: {"cause": cause, "<what>": id}. */
static Jsonb *
skipped(const char *cause, const char *what, const char *id)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_str(&b, "cause", cause);
	if (what)
		wl_json_str(&b, what, id);
	return wl_json_end(&b);
}

/*
 * fire_slot handles one due slot: skipped under overlap "skip" while the
 * previous workload is unfinished, else made; what happened is written
 * into run.
 */
static void
fire_slot(WlFire *f, TimestampTz slot, WlScheduleRun *run)
{
	Oid			tick_caller = wl_authz_caller_oid();
	ErrorData  *e;

	if (strcmp(f->s.overlap, "skip") == 0 && !finished(&f->s))
	{
		wl_store_schedule_event(&f->s, "schedule.skipped", slot, wl_now(),
								skipped("overlap", "workload_id", f->s.last_workload_id));
		f->r->skipped++;
		return;
	}
	f->slot = slot;
	f->workload_id = NULL;
	e = wl_isolated(make_slot, f);
	wl_authz_set_caller(tick_caller);
	if (e != NULL && wl_pass_gave_way(e->sqlerrcode))
	{
		/* left for a later pass, from this slot on; not a failure */
		f->gave_way = true;
		run->has_next = true;
		run->next_run_at = slot;
		FreeErrorData(e);
		return;
	}
	run->set_error = true;
	if (e == NULL)
	{
		f->s.last_workload_id = f->workload_id;
		run->workload_id = f->workload_id;
		run->slot = slot;
		run->error = NULL;
		f->r->fired++;
		return;
	}
	run->error = failure(slot, e);
	wl_store_schedule_event(&f->s, "schedule.failed", slot, wl_now(), run->error);
	f->r->failed++;
	FreeErrorData(e);
}

/*
 * due_slots puts into slots[] the slots to fire now, oldest first, and
 * returns how many; *next is then the first slot left for later.  Slots in
 * [next_run_at, now] are due; one more than a minute old is missed, and
 * catch_up decides: "all" fires them (at most WL_SCHEDULE_SLOTS a tick,
 * the rest from *next on the next ticks), "latest" only the most recent,
 * "none" none.  Missed slots left out are recorded in one event.
 */
static int
due_slots(WlFire *f, const WlCron *c, TimestampTz now, TimestampTz *slots, bool *has_next,
		  TimestampTz *next)
{
	WlSchedule *s = &f->s;
	TimestampTz missed_before = now - WL_MISSED_AFTER_US;
	TimestampTz latest = 0;
	bool		any_missed;
	int			n = 0;

	if (strcmp(s->catch_up, "all") == 0)
	{
		n = wl_cron_between(c, s->timezone, s->next_run_at - 1, now, slots, WL_SCHEDULE_SLOTS);
		if (n == WL_SCHEDULE_SLOTS)
		{
			*has_next = wl_cron_next(c, s->timezone, slots[n - 1], next);
			f->r->more = f->r->more || (*has_next && *next <= now);
			return n;
		}
	}
	else
	{
		any_missed = s->next_run_at < missed_before &&
			wl_cron_prev(c, s->timezone, missed_before - 1, &latest) &&
			latest >= s->next_run_at;
		if (any_missed)
		{
			bool		latest_fires = strcmp(s->catch_up, "latest") == 0;
			TimestampTz last_left = latest;
			WlJson		b;

			if (latest_fires)
			{
				slots[n++] = latest;
				if (!wl_cron_prev(c, s->timezone, latest - 1, &last_left) ||
					last_left < s->next_run_at)
					last_left = 0;
			}
			if (last_left != 0)
			{
				wl_json_begin(&b);
				wl_json_str(&b, "cause", "missed");
				wl_json_str(&b, "catch_up", s->catch_up);
				wl_json_ts(&b, "from", s->next_run_at);
				wl_json_ts(&b, "until", last_left);
				wl_store_schedule_event(s, "schedule.skipped", last_left, now, wl_json_end(&b));
			}
		}
		n += wl_cron_between(c, s->timezone, Max(s->next_run_at, missed_before) - 1, now,
							 slots + n, WL_SCHEDULE_SLOTS - n);
	}
	*has_next = wl_cron_next(c, s->timezone, now, next);
	return n;
}

/*
 * fire_schedule (in its own subtransaction) fires the due slots of one
 * schedule, locked again, and moves next_run_at past them.  A schedule
 * paused, changed or fired since the scan found it is left as it is.
 */
static void
fire_schedule(void *arg)
{
	WlFire	   *f = arg;
	WlCron		c;
	TimestampTz now = wl_now();
	TimestampTz slots[WL_SCHEDULE_SLOTS];
	WlScheduleRun run;
	int			n;

	if (!wl_store_schedule_lock(f->key->tenant_id, f->key->application_id,
								f->key->schedule_id, &f->s) ||
		f->s.paused || !f->s.has_next || f->s.next_run_at > now)
		return;
	memset(&run, 0, sizeof(run));
	wl_cron_parse(f->s.cron, &c);
	n = due_slots(f, &c, now, slots, &run.has_next, &run.next_run_at);
	for (int i = 0; i < n && !f->gave_way; i++)
	{
		/* the tick's budget spent: the rest of the slots are due next time */
		if (f->slots_left <= 0)
		{
			run.has_next = true;
			run.next_run_at = slots[i];
			f->r->more = true;
			break;
		}
		f->slots_left--;
		fire_slot(f, slots[i], &run);
	}
	wl_store_schedule_ran(&f->s, &run);
}

/* one schedule whose grant's expiry is warned of, for warn_one */
typedef struct WlWarn
{
	WlSchedule *s;
	TimestampTz by;
	bool		warned;
} WlWarn;

/*
 * warn_one (in its own subtransaction): marks the schedule's grant warned
 * of and records a 'schedule.grant_expiring' event (its slot: the grant's
 * expiry), unless another session holds the schedule, or it was warned of
 * or given another grant since.
 */
static void
warn_one(void *arg)
{
	WlWarn	   *w = arg;
	TimestampTz now = wl_now();
	char	   *grant_id;
	TimestampTz expires;
	WlJson		b;

	if (!wl_store_schedule_grant_warned(w->s, now, w->by, &grant_id, &expires))
		return;
	wl_json_begin(&b);
	wl_json_str(&b, "grant_id", grant_id);
	wl_json_ts(&b, "expires_at", expires);
	wl_json_bool(&b, "expired", expires <= now);
	wl_store_schedule_event(w->s, "schedule.grant_expiring", expires, now, wl_json_end(&b));
	w->warned = true;
}

/*
 * warn_expiring warns of the grants of up to WL_SCHEDULE_WARNINGS
 * schedules that expire within workload.schedule_grant_warning (or have
 * expired) and were not warned of, fairly between tenants: once a grant (a
 * replaced grant is warned of afresh).  One another session holds, or
 * whose warning fails, is left for a later pass.
 */
static void
warn_expiring(WlScheduleReport *r)
{
	TimestampTz by;
	WlSchedule *s;
	int			n;

	if (wl_schedule_grant_warning_s <= 0 || wl_pass_spent())
		return;
	wl_pass_step();
	by = wl_now() + (int64) wl_schedule_grant_warning_s * USECS_PER_SEC;
	n = wl_store_schedule_grants_expiring(by, WL_SCHEDULE_WARNINGS, &s);
	if (n == WL_SCHEDULE_WARNINGS)
		r->more = true;
	for (int i = 0; i < n; i++)
	{
		WlWarn		w = {.s = &s[i], .by = by};
		ErrorData  *e;

		if (wl_pass_spent())
		{
			r->more = true;
			break;
		}
		wl_pass_step();
		e = wl_isolated(warn_one, &w);
		if (e != NULL && !wl_pass_gave_way(e->sqlerrcode))
			ereport(WARNING,
					(errmsg("workload maintenance could not warn of the grant of schedule \"%s\" of tenant \"%s\": %s",
							s[i].schedule_id, s[i].tenant_id,
							e->message ? e->message : "(no message)")));
		if (e != NULL)
			FreeErrorData(e);
		else if (w.warned)
			r->grants_expiring++;
	}
}

/*
 * wl_schedule_tick fires the due slots of up to WL_SCHEDULE_LIMIT due
 * schedules (r->more when some were left), each schedule isolated: one
 * whose pass fails is counted in r->broken, reported as a WARNING, and
 * left due for the next tick; then warns of grants about to expire
 * (warn_expiring).  The caller holds the tick's single-runner lock.
 */
void
wl_schedule_tick(WlScheduleReport *r)
{
	MemoryContext keep = CurrentMemoryContext;
	MemoryContext one = AllocSetContextCreate(keep, "workload schedule pass",
											  ALLOCSET_DEFAULT_SIZES);
	WlSchedule *due;
	int			n;
	int			slots_left = WL_SCHEDULE_PASS_SLOTS;

	wl_pass_step();
	n = wl_store_schedules_due(wl_now(), WL_SCHEDULE_LIMIT, &due);
	if (n == WL_SCHEDULE_LIMIT)
		r->more = true;
	for (int i = 0; i < n; i++)
	{
		MemoryContext old;
		WlFire		f;
		WlScheduleReport saved = *r;
		ErrorData  *e;

		if (slots_left <= 0 || wl_pass_spent())
		{
			r->more = true;
			break;
		}
		wl_pass_step();
		old = MemoryContextSwitchTo(one);
		memset(&f, 0, sizeof(f));
		f.key = &due[i];
		f.r = r;
		f.slots_left = slots_left;
		e = wl_isolated(fire_schedule, &f);
		slots_left = f.slots_left;
		if (e != NULL && wl_pass_gave_way(e->sqlerrcode))
		{
			/* the schedule met another session's lock: due again next time */
			*r = saved;
			FreeErrorData(e);
		}
		else if (e != NULL)
		{
			*r = saved;
			r->broken++;
			ereport(WARNING,
					(errmsg("workload maintenance skipped schedule \"%s\" of tenant \"%s\": %s",
							due[i].schedule_id, due[i].tenant_id,
							e->message ? e->message : "(no message)")));
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(one);
	}
	MemoryContextDelete(one);
	warn_expiring(r);
}
