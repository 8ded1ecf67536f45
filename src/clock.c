/*
 * clock.c: wl_now(), the only reader of time.  It is statement_timestamp(),
 * or workload.clock_override when a superuser has set it (guc.c owns the
 * setting and calls wl_clock_set_override when it changes).
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "compat.h"

static bool clock_overridden = false;
static TimestampTz clock_override_value = 0;

/* wl_now returns the time every workload decision is made against. */
TimestampTz
wl_now(void)
{
	if (clock_overridden)
		return clock_override_value;
	return GetCurrentStatementStartTimestamp();
}

/*
 * wl_clock_parse parses a timestamptz without raising, so a GUC check hook
 * can refuse a bad value instead of throwing from inside the GUC machinery.
 */
bool
wl_clock_parse(const char *text, TimestampTz *result)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	fsec_t		fsec;
	struct pg_tm tt;

	if (strlen(text) >= MAXDATELEN)
		return false;
	if (ParseDateTime(text, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	if (wl_decode_datetime(field, ftype, nf, &dtype, &tt, &fsec, &tz) != 0)
		return false;
	if (dtype != DTK_DATE)
		return false;
	return tm2timestamp(&tt, fsec, &tz, result) == 0;
}

/* wl_clock_set_override installs an already-checked override ("" = off). */
void
wl_clock_set_override(const char *text)
{
	TimestampTz ts;

	if (text == NULL || text[0] == '\0' || !wl_clock_parse(text, &ts))
	{
		clock_overridden = false;
		return;
	}
	clock_override_value = ts;
	clock_overridden = true;
}
