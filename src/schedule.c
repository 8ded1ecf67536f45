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
	WlSpec		spec;
	WlJson		b;

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
	/* the spec of the first slot, so the key's length is checked too */
	wl_spec_parse(wl_schedule_spec(&s, req->template, s.has_next ? s.next_run_at : now), &spec);
	(void) wl_grant_check_snapshot(&spec);
	/* kept without the signature: what is stored is no bearer credential */
	wl_json_begin(&b);
	wl_json_jsonb(&b, "authorization_snapshot",
				  wl_grant_stored_form(spec.authorization_snapshot));
	s.template = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(req->template),
													JsonbPGetDatum(wl_json_end(&b))));
	return wl_store_schedule_put(&s, now);
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

/* wl_schedule_pause pauses a schedule; its document.  Refusals as lock_or_refuse. */
Jsonb *
wl_schedule_pause(const char *tenant_id, const char *application_id, const char *schedule_id)
{
	WlSchedule	s;

	lock_or_refuse(tenant_id, application_id, schedule_id, &s);
	return wl_store_schedule_pause(&s, wl_now());
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
	return wl_store_schedule_resume(&s, now);
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
	wl_authz_require_member(tenant_id, application_id);
	return wl_store_schedule_list(tenant_id, application_id, n);
}
