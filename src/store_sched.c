/*
 * store_sched.c: typed wrappers over the statements on workload.schedules
 * and workload.schedule_events (SPEC section 4, "Scheduling and bulk
 * work"), and the one read of a workload's state the overlap rule needs.
 * It decides nothing: membership, slots and the overlap and catch-up rules
 * are schedule.c's and schedule_tick.c's.  Layer 2.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "store.h"
#include "pass.h"
#include "store_ops.h"

static Datum
name_arg(const char *s)
{
	return DirectFunctionCall1(namein, CStringGetDatum(s));
}

static void
key_args(Datum *args, const char *tenant_id, const char *application_id,
		 const char *schedule_id)
{
	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = CStringGetTextDatum(schedule_id);
}

/* one_doc: the jsonb of the first row of t (NULL when none), t freed. */
static Jsonb *
one_doc(SPITupleTable *t)
{
	Jsonb	   *doc = SPI_processed > 0 ? wl_store_jsonb(t, 0, 1) : NULL;

	SPI_freetuptable(t);
	return doc;
}

/* wl_store_schedule_put creates or replaces a schedule (see P_SCHED_PUT); its document. */
Jsonb *
wl_store_schedule_put(const WlSchedule *s, TimestampTz now)
{
	Datum		args[12];
	char		nulls[12];

	memset(nulls, ' ', sizeof(nulls));
	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = CStringGetTextDatum(s->cron);
	args[4] = CStringGetTextDatum(s->timezone);
	args[5] = JsonbPGetDatum(s->template);
	args[6] = CStringGetTextDatum(s->overlap);
	args[7] = CStringGetTextDatum(s->catch_up);
	args[8] = TimestampTzGetDatum(s->next_run_at);
	nulls[8] = s->has_next ? ' ' : 'n';
	args[9] = name_arg(s->created_by);
	args[10] = TimestampTzGetDatum(now);
	args[11] = TimestampTzGetDatum(s->grant_expires_at);
	nulls[11] = s->grant_expires_at != 0 ? ' ' : 'n';
	return one_doc(wl_store_run(P_SCHED_PUT, args, nulls, 1, SPI_OK_INSERT_RETURNING));
}

/*
 * wl_store_schedule_lock locks a schedule (FOR NO KEY UPDATE, waiting) and
 * reads it into *out; false when there is none.
 */
bool
wl_store_schedule_lock(const char *tenant_id, const char *application_id,
					   const char *schedule_id, WlSchedule *out)
{
	Datum		args[3];
	SPITupleTable *t;
	bool		isnull;

	key_args(args, tenant_id, application_id, schedule_id);
	/* a maintenance pass waits for no row another session holds */
	t = wl_store_run(wl_pass_active() ? P_SCHED_LOCK_SKIP : P_SCHED_LOCK, args, NULL, 1,
					 SPI_OK_SELECT);
	if (SPI_processed == 0)
	{
		SPI_freetuptable(t);
		return false;
	}
	memset(out, 0, sizeof(*out));
	out->tenant_id = pstrdup(tenant_id);
	out->application_id = pstrdup(application_id);
	out->schedule_id = pstrdup(schedule_id);
	out->cron = wl_store_text(t, 0, 1);
	out->timezone = wl_store_text(t, 0, 2);
	out->template = wl_store_jsonb(t, 0, 3);
	out->overlap = wl_store_text(t, 0, 4);
	out->catch_up = wl_store_text(t, 0, 5);
	out->paused = wl_store_bool(t, 0, 6);
	out->next_run_at = wl_store_ts(t, 0, 7, &isnull);
	out->has_next = !isnull;
	out->last_workload_id = wl_store_text(t, 0, 8);
	out->created_by = wl_store_text(t, 0, 9);
	SPI_freetuptable(t);
	return true;
}

/* wl_store_schedule_pause pauses a schedule; its document, NULL when there is none. */
Jsonb *
wl_store_schedule_pause(const WlSchedule *s, TimestampTz now)
{
	Datum		args[4];

	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = TimestampTzGetDatum(now);
	return one_doc(wl_store_run(P_SCHED_PAUSE, args, NULL, 1, SPI_OK_UPDATE_RETURNING));
}

/* wl_store_schedule_resume un-pauses a schedule from s->next_run_at; its document. */
Jsonb *
wl_store_schedule_resume(const WlSchedule *s, TimestampTz now)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = TimestampTzGetDatum(s->next_run_at);
	nulls[3] = s->has_next ? ' ' : 'n';
	args[4] = TimestampTzGetDatum(now);
	return one_doc(wl_store_run(P_SCHED_RESUME, args, nulls, 1, SPI_OK_UPDATE_RETURNING));
}

/*
 * wl_store_schedule_set_grant replaces a schedule's template (its grant
 * replaced) and the grant's expiry, which has not been warned of; its
 * document.
 */
Jsonb *
wl_store_schedule_set_grant(const WlSchedule *s, TimestampTz now)
{
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = JsonbPGetDatum(s->template);
	args[4] = TimestampTzGetDatum(s->grant_expires_at);
	nulls[4] = s->grant_expires_at != 0 ? ' ' : 'n';
	args[5] = TimestampTzGetDatum(now);
	return one_doc(wl_store_run(P_SCHED_SET_GRANT, args, nulls, 1, SPI_OK_UPDATE_RETURNING));
}

/*
 * wl_store_schedule_grants_expiring: up to limit schedules whose grant
 * expires by `by` and was not warned of, fairly between tenants (keys only,
 * unlocked).
 */
int
wl_store_schedule_grants_expiring(TimestampTz by, int limit, WlSchedule **out)
{
	Datum		args[2];
	SPITupleTable *t;
	int			n;

	args[0] = TimestampTzGetDatum(by);
	args[1] = Int32GetDatum(limit);
	t = wl_store_run(P_SCHED_GRANTS_EXPIRING, args, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	*out = palloc0(sizeof(WlSchedule) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		(*out)[i].tenant_id = wl_store_text(t, i, 1);
		(*out)[i].application_id = wl_store_text(t, i, 2);
		(*out)[i].schedule_id = wl_store_text(t, i, 3);
	}
	SPI_freetuptable(t);
	return n;
}

/*
 * wl_store_schedule_grant_warned marks a schedule's grant, expiring by
 * `by`, warned of at `now`, unless another session holds the schedule or it
 * was marked or given another grant since (false); *grant_id and *expires
 * say which grant.
 */
bool
wl_store_schedule_grant_warned(const WlSchedule *s, TimestampTz now, TimestampTz by,
							   char **grant_id, TimestampTz *expires)
{
	Datum		args[5];
	SPITupleTable *t;
	bool		isnull;
	bool		found;

	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = TimestampTzGetDatum(now);
	args[4] = TimestampTzGetDatum(by);
	t = wl_store_run(P_SCHED_GRANT_WARNED, args, NULL, 1, SPI_OK_UPDATE_RETURNING);
	found = SPI_processed > 0;
	if (found)
	{
		*grant_id = wl_store_text(t, 0, 1);
		*expires = wl_store_ts(t, 0, 2, &isnull);
	}
	SPI_freetuptable(t);
	return found;
}

/* wl_store_schedule_drop deletes a schedule and its events; false when there was none. */
bool
wl_store_schedule_drop(const char *tenant_id, const char *application_id,
					   const char *schedule_id)
{
	Datum		args[3];
	SPITupleTable *t;
	bool		found;

	key_args(args, tenant_id, application_id, schedule_id);
	t = wl_store_run(P_SCHED_DROP, args, NULL, 0, SPI_OK_DELETE_RETURNING);
	found = SPI_processed > 0;
	SPI_freetuptable(t);
	return found;
}

/* wl_store_schedule_list: the documents of a tenant and application's schedules, by id. */
Jsonb **
wl_store_schedule_list(const char *tenant_id, const char *application_id, int *n)
{
	Datum		args[2];
	SPITupleTable *t;
	Jsonb	  **docs;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	t = wl_store_run(P_SCHED_LIST, args, NULL, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	docs = palloc(sizeof(Jsonb *) * (*n + 1));
	for (int i = 0; i < *n; i++)
		docs[i] = wl_store_jsonb(t, i, 1);
	SPI_freetuptable(t);
	return docs;
}

/*
 * wl_store_schedules_due locks (FOR NO KEY UPDATE SKIP LOCKED) up to limit
 * unpaused schedules whose next_run_at has come, soonest first, and fills
 * their keys and next_run_at.
 */
int
wl_store_schedules_due(TimestampTz now, int limit, WlSchedule **out)
{
	Datum		args[2];
	SPITupleTable *t;
	bool		isnull;
	int			n;

	args[0] = TimestampTzGetDatum(now);
	args[1] = Int32GetDatum(limit);
	t = wl_store_run(P_SCHED_DUE, args, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	*out = palloc0(sizeof(WlSchedule) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		(*out)[i].tenant_id = wl_store_text(t, i, 1);
		(*out)[i].application_id = wl_store_text(t, i, 2);
		(*out)[i].schedule_id = wl_store_text(t, i, 3);
		(*out)[i].next_run_at = wl_store_ts(t, i, 4, &isnull);
		(*out)[i].has_next = !isnull;
	}
	SPI_freetuptable(t);
	return n;
}

/* wl_store_schedule_ran writes what a tick did with a schedule (see WlScheduleRun). */
void
wl_store_schedule_ran(const WlSchedule *s, const WlScheduleRun *r)
{
	Datum		args[8];
	char		nulls[8];

	memset(nulls, ' ', sizeof(nulls));
	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = TimestampTzGetDatum(r->next_run_at);
	nulls[3] = r->has_next ? ' ' : 'n';
	args[4] = TimestampTzGetDatum(r->slot);
	nulls[4] = r->workload_id ? ' ' : 'n';
	args[5] = r->workload_id ? CStringGetTextDatum(r->workload_id) : (Datum) 0;
	nulls[5] = r->workload_id ? ' ' : 'n';
	args[6] = r->error ? JsonbPGetDatum(r->error) : (Datum) 0;
	nulls[6] = r->error ? ' ' : 'n';
	args[7] = BoolGetDatum(r->set_error);
	wl_store_run(P_SCHED_FIRED, args, nulls, 0, SPI_OK_UPDATE);
}

/* wl_store_schedule_event appends one of a schedule's events (the latest 100 are kept). */
void
wl_store_schedule_event(const WlSchedule *s, const char *event_type, TimestampTz slot,
						TimestampTz at, Jsonb *evidence)
{
	Datum		args[7];

	key_args(args, s->tenant_id, s->application_id, s->schedule_id);
	args[3] = CStringGetTextDatum(event_type);
	args[4] = TimestampTzGetDatum(slot);
	args[5] = TimestampTzGetDatum(at);
	args[6] = JsonbPGetDatum(evidence);
	wl_store_run(P_SCHED_EVENT, args, NULL, 0, SPI_OK_DELETE);
}

/* wl_store_workload_state reads a workload's state (no lock); false when there is none. */
bool
wl_store_workload_state(const char *workload_id, const char *tenant_id, WlState *state)
{
	Datum		args[2];
	SPITupleTable *t;
	bool		found;

	args[0] = CStringGetTextDatum(workload_id);
	args[1] = CStringGetTextDatum(tenant_id);
	t = wl_store_run(P_SCHED_LAST_STATE, args, NULL, 1, SPI_OK_SELECT);
	found = SPI_processed > 0;
	if (found)
		*state = wl_state_from_name(wl_store_text(t, 0, 1));
	SPI_freetuptable(t);
	return found;
}
