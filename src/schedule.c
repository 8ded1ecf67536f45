/*
 * schedule.c: schedules as the API keeps them (SPEC section 4,
 * "Scheduling and bulk work"): create or replace, pause, resume, drop,
 * list, and the create spec a slot's workload is made from.  Every call
 * checks membership first.  The template is checked as the create spec it
 * becomes, and its grant verified for the caller, when it is given; it is
 * kept with the grant in stored form.  Firing is schedule_tick.c's.
 * Layer 3.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"
#include "utils/jsonb.h"

#include "authz.h"
#include "clock.h"
#include "cron.h"
#include "errors.h"
#include "grants.h"
#include "jsonb_util.h"
#include "schedule.h"
#include "guc.h"
#include "spec.h"
#include "quota.h"

static const char *const overlaps[] = {"skip", "allow", NULL};
static const char *const catch_ups[] = {"latest", "all", "none", NULL};
/* what the schedule, not its template, says */
static const char *const template_forbidden[] = {"idempotency_key", "tenant_id",
"application_id", NULL};

/*
 * wl_schedule_check_request checks what needs no table: the template is an
 * object without the fields the schedule supplies, overlap and catch_up are
 * known, the cron parses and the zone exists.  Raises WORKLOAD_INVALID.
 */
void
wl_schedule_check_request(const WlScheduleRequest *req)
{
	WlCron		c;

	if (!JB_ROOT_IS_OBJECT(req->template) || JB_ROOT_IS_SCALAR(req->template))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"template\" must be a JSON object."));
	for (int i = 0; template_forbidden[i]; i++)
	{
		if (wl_json_get(&req->template->root, template_forbidden[i]) != NULL)
			wl_refuse(WL_E_INVALID,
					  errdetail("Field template.%s is not allowed: the schedule supplies it.",
								template_forbidden[i]));
	}
	if (!wl_in_list(overlaps, req->overlap))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"overlap\" must be skip or allow."));
	if (!wl_in_list(catch_ups, req->catch_up))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"catch_up\" must be latest, all or none."));
	wl_cron_parse(req->cron, &c);
	(void) wl_cron_zone_name(req->timezone);
}

/* slot_text: a slot as RFC 3339 in UTC, "2026-01-01T09:00:00Z". */
static char *
slot_text(TimestampTz slot)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(slot, NULL, &tm, &fsec, NULL, NULL) != 0)
		elog(ERROR, "schedule slot out of range");
	return psprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year, tm.tm_mon, tm.tm_mday,
					tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/*
 * wl_schedule_spec: the create spec of a slot's workload: the template
 * with the schedule's tenant and application, idempotency_key
 * 'schedule:<schedule_id>:<slot>' and trigger "schedule".
 */
Jsonb *
wl_schedule_spec(const WlSchedule *s, Jsonb *template, TimestampTz slot)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_str(&b, "tenant_id", s->tenant_id);
	wl_json_str(&b, "application_id", s->application_id);
	wl_json_str(&b, "idempotency_key", psprintf("schedule:%s:%s", s->schedule_id,
												   slot_text(slot)));
	wl_json_str(&b, "trigger", "schedule");
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(template),
											  JsonbPGetDatum(wl_json_end(&b))));
}

/* first_slot: the schedule's first slot strictly after now (has_next false: none). */
static void
first_slot(WlSchedule *s, TimestampTz now)
{
	WlCron		c;

	wl_cron_parse(s->cron, &c);
	s->has_next = wl_cron_next(&c, s->timezone, now, &s->next_run_at);
}

/*
 * doc_of: a schedule's document as the API answers it: as stored,
 * with grant_expiring, whether its grant expires within
 * workload.schedule_grant_warning of now (or has expired).
 */
static Jsonb *
doc_of(Jsonb *stored)
{
	char	   *text = wl_json_get_text(&stored->root, "grant_expires_at");
	TimestampTz expires;
	bool		expiring = false;
	WlJson		b;

	if (text != NULL && wl_clock_parse(text, &expires))
		expiring = wl_schedule_grant_warning_s > 0 &&
			expires - (int64) wl_schedule_grant_warning_s * USECS_PER_SEC <= wl_now();
	wl_json_begin(&b);
	wl_json_bool(&b, "grant_expiring", expiring);
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(stored),
											  JsonbPGetDatum(wl_json_end(&b))));
}

/*
 * with_grant: the template with grant (as the caller presents it) in
 * stored form, checked as the create spec of schedule s's next slot (or of
 * now): WORKLOAD_INVALID, WORKLOAD_SECRET_REJECTED, and
 * WORKLOAD_UNAUTHORIZED unless the caller may present the grant now (as
 * workload_create).  s->grant_expires_at is set to the grant's expiry.
 */
static Jsonb *
with_grant(WlSchedule *s, Jsonb *template, TimestampTz now)
{
	WlSpec		spec;
	WlJson		b;

	/* the spec of the next slot, so the key's length is checked too */
	wl_spec_parse(wl_schedule_spec(s, template, s->has_next ? s->next_run_at : now), &spec);
	(void) wl_grant_check_snapshot(&spec);
	s->grant_expires_at = wl_grant_expires_at(spec.authorization_snapshot);
	/* kept without the signature: what is stored is no bearer credential */
	wl_json_begin(&b);
	wl_json_jsonb(&b, "authorization_snapshot",
				  wl_grant_stored_form(spec.authorization_snapshot));
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(template),
											  JsonbPGetDatum(wl_json_end(&b))));
}

/*
 * wl_schedule_put creates or replaces a schedule; its document.  The
 * template must make a valid create spec (WORKLOAD_INVALID,
 * WORKLOAD_SECRET_REJECTED) whose grant the caller may present now
 * (WORKLOAD_UNAUTHORIZED, as workload_create); the caller must be a member
 * (WORKLOAD_UNAUTHORIZED).  The first slot is the first after now; a
 * replace keeps paused and what already ran.
 */
Jsonb *
wl_schedule_put(const WlScheduleRequest *req)
{
	TimestampTz now = wl_now();
	WlSchedule	s;

	wl_schedule_check_request(req);
	wl_authz_require_member(req->tenant_id, req->application_id);
	wl_quota_require_schedule(req->tenant_id, req->application_id, req->schedule_id);
	memset(&s, 0, sizeof(s));
	s.tenant_id = req->tenant_id;
	s.application_id = req->application_id;
	s.schedule_id = req->schedule_id;
	s.cron = req->cron;
	s.timezone = pstrdup(wl_cron_zone_name(req->timezone));
	s.overlap = req->overlap;
	s.catch_up = req->catch_up;
	s.created_by = (char *) wl_authz_caller()->role;
	first_slot(&s, now);
	s.template = with_grant(&s, req->template, now);
	return doc_of(wl_store_schedule_put(&s, now));
}

/* lock_or_refuse locks a schedule of a tenant the caller is a member of, or refuses. */
static void
lock_or_refuse(const char *tenant_id, const char *application_id, const char *schedule_id,
			   WlSchedule *s)
{
	wl_authz_require_member(tenant_id, application_id);
	if (!wl_store_schedule_lock(tenant_id, application_id, schedule_id, s))
		wl_refuse(WL_E_NOT_FOUND,
				  errdetail("No schedule \"%s\" in tenant \"%s\", application \"%s\".",
							schedule_id, tenant_id, application_id));
}

/*
 * wl_schedule_set_grant gives a schedule another grant (authorization
 * snapshot), checked as wl_schedule_put checks a template's, and touches
 * nothing else: its slots, pause and what ran stay as they are, and the new
 * grant's expiry is warned of afresh.  A 'schedule.grant_replaced' event
 * records which grant replaced which, and who replaced it.  Its document.
 */
Jsonb *
wl_schedule_set_grant(const char *tenant_id, const char *application_id, const char *schedule_id,
					  Jsonb *grant)
{
	TimestampTz now = wl_now();
	WlSchedule	s;
	char	   *old_id;
	WlJson		b;

	if (!JB_ROOT_IS_OBJECT(grant) || JB_ROOT_IS_SCALAR(grant))
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"authorization_snapshot\" must be a JSON object."));
	lock_or_refuse(tenant_id, application_id, schedule_id, &s);
	old_id = wl_json_get_text(wl_json_get_object(wl_json_get_object(&s.template->root,
																	  "authorization_snapshot"),
												 "grant"), "id");
	wl_json_begin(&b);
	wl_json_jsonb(&b, "authorization_snapshot", grant);
	s.template = with_grant(&s, DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
																   JsonbPGetDatum(s.template),
																   JsonbPGetDatum(wl_json_end(&b)))),
							now);
	wl_json_begin(&b);
	wl_json_str(&b, "replaced_grant_id", old_id);
	wl_json_str(&b, "grant_id", wl_json_get_text(wl_json_get_object(&grant->root, "grant"), "id"));
	if (s.grant_expires_at != 0)
		wl_json_ts(&b, "expires_at", s.grant_expires_at);
	wl_json_str(&b, "by", wl_authz_caller()->role);
	wl_store_schedule_event(&s, "schedule.grant_replaced", s.has_next ? s.next_run_at : now, now,
							wl_json_end(&b));
	return doc_of(wl_store_schedule_set_grant(&s, now));
}

/* wl_schedule_pause pauses a schedule; its document.  Refusals as lock_or_refuse. */
Jsonb *
wl_schedule_pause(const char *tenant_id, const char *application_id, const char *schedule_id)
{
	WlSchedule	s;

	lock_or_refuse(tenant_id, application_id, schedule_id, &s);
	return doc_of(wl_store_schedule_pause(&s, wl_now()));
}

/*
 * wl_schedule_resume un-pauses a schedule from its first slot after now
 * (slots that came while it was paused never fire); its document.
 */
Jsonb *
wl_schedule_resume(const char *tenant_id, const char *application_id, const char *schedule_id)
{
	WlSchedule	s;
	TimestampTz now = wl_now();

	lock_or_refuse(tenant_id, application_id, schedule_id, &s);
	first_slot(&s, now);
	return doc_of(wl_store_schedule_resume(&s, now));
}

/* wl_schedule_drop drops a schedule and its events (its workloads stay). */
void
wl_schedule_drop(const char *tenant_id, const char *application_id, const char *schedule_id)
{
	WlSchedule	s;

	lock_or_refuse(tenant_id, application_id, schedule_id, &s);
	(void) wl_store_schedule_drop(tenant_id, application_id, schedule_id);
}

/* wl_schedule_list: the documents of a tenant and application's schedules (members only). */
Jsonb **
wl_schedule_list(const char *tenant_id, const char *application_id, int *n)
{
	Jsonb	  **docs;

	wl_authz_require_member(tenant_id, application_id);
	docs = wl_store_schedule_list(tenant_id, application_id, n);
	for (int i = 0; i < *n; i++)
		docs[i] = doc_of(docs[i]);
	return docs;
}
