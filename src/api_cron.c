/*
 * api_cron.c: SQL entry points that show a schedule's time rules (cron.c)
 * for tests and for people checking a cron before they schedule it:
 * workload.cron_slots, workload.cron_between and workload.cron_prev.  They
 * read no table and no clock.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "args.h"
#include "compat.h"
#include "cron.h"
#include "errors.h"

#define CRON_ROWS_MAX 1000

static TimestampTz
finite_arg(FunctionCallInfo fcinfo, int i, const char *name)
{
	TimestampTz t = PG_GETARG_TIMESTAMPTZ(i);

	if (TIMESTAMP_NOT_FINITE(t))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must be a finite time.", name));
	return t;
}

static int
rows_arg(FunctionCallInfo fcinfo, int i, const char *name)
{
	int32		n = PG_GETARG_INT32(i);

	if (n < 1 || n > CRON_ROWS_MAX)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"%s\" must be from 1 to %d.", name, CRON_ROWS_MAX));
	return n;
}

/* put_slots returns slots[0..n) as the rows of a set-returning call. */
static Datum
put_slots(FunctionCallInfo fcinfo, const TimestampTz *slots, int n)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int i = 0; i < n; i++)
	{
		Datum		value = TimestampTzGetDatum(slots[i]);
		bool		null = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &null);
	}
	return (Datum) 0;
}

/*
 * workload.cron_slots(cron, timezone, after, n) returns the first n slots
 * strictly after `after` (fewer only at the end of the timestamp range).
 * Any NULL, an invalid cron or zone, an infinite time or n outside 1-1000
 * is WORKLOAD_INVALID.
 */
PG_FUNCTION_INFO_V1(workload_cron_slots);
Datum
workload_cron_slots(PG_FUNCTION_ARGS)
{
	WlCron		c;
	char	   *zone;
	TimestampTz after;
	int			n;
	TimestampTz *slots;

	wl_args_require(fcinfo, "cron", "timezone", "after", "n");
	wl_cron_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)), &c);
	zone = text_to_cstring(PG_GETARG_TEXT_PP(1));
	after = finite_arg(fcinfo, 2, "after");
	n = rows_arg(fcinfo, 3, "n");
	slots = palloc(n * sizeof(TimestampTz));
	n = wl_cron_between(&c, zone, after, DT_NOEND, slots, n);
	return put_slots(fcinfo, slots, n);
}

/*
 * workload.cron_between(cron, timezone, after, until, lim) returns the
 * slots in (after, until], oldest first, at most lim: what a tick that
 * catches up finds.  Refusals as workload.cron_slots.
 */
PG_FUNCTION_INFO_V1(workload_cron_between);
Datum
workload_cron_between(PG_FUNCTION_ARGS)
{
	WlCron		c;
	char	   *zone;
	TimestampTz after;
	TimestampTz until;
	int			lim;
	TimestampTz *slots;

	wl_args_require(fcinfo, "cron", "timezone", "after", "until", "lim");
	wl_cron_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)), &c);
	zone = text_to_cstring(PG_GETARG_TEXT_PP(1));
	after = finite_arg(fcinfo, 2, "after");
	until = finite_arg(fcinfo, 3, "until");
	lim = rows_arg(fcinfo, 4, "lim");
	slots = palloc(lim * sizeof(TimestampTz));
	lim = wl_cron_between(&c, zone, after, until, slots, lim);
	return put_slots(fcinfo, slots, lim);
}

/*
 * workload.cron_prev(cron, timezone, at) returns the latest slot at or
 * before `at` (NULL at the start of the timestamp range).  Refusals as
 * workload.cron_slots.
 */
PG_FUNCTION_INFO_V1(workload_cron_prev);
Datum
workload_cron_prev(PG_FUNCTION_ARGS)
{
	WlCron		c;
	char	   *zone;
	TimestampTz slot;

	wl_args_require(fcinfo, "cron", "timezone", "at");
	wl_cron_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)), &c);
	zone = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (!wl_cron_prev(&c, zone, finite_arg(fcinfo, 2, "at"), &slot))
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(slot);
}
