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
static bool clock_stepping = false;
static TimestampTz clock_step = 0;

/*
 * wl_now returns the time every workload decision is made against: the
 * statement's start, or (during a maintenance pass, which may take long) the
 * start of the pass's current step.
 */
TimestampTz
wl_now(void)
{
	if (clock_overridden)
		return clock_override_value;
	if (clock_stepping)
		return clock_step;
	return GetCurrentStatementStartTimestamp();
}

/* wl_clock_steps: from now on (on), the clock is read at each step (wl_clock_step). */
void
wl_clock_steps(bool on)
{
	clock_stepping = on;
	if (on)
		clock_step = GetCurrentTimestamp();
}

/* wl_clock_step: a step begins: wl_now is the time now (while stepping). */
void
wl_clock_step(void)
{
	if (clock_stepping)
		clock_step = GetCurrentTimestamp();
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

/* digits: n ASCII digits at s */
static bool
digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return false;
	}
	return true;
}

/*
 * wl_clock_parse_rfc3339 parses an absolute RFC 3339 timestamp with an
 * offset, YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM) (T may be a space,
 * T and Z lower case), and nothing else: no "now", "tomorrow", "infinity",
 * no missing offset.
 */
bool
wl_clock_parse_rfc3339(const char *s, TimestampTz *result)
{
	const char *p = s;

	if (strlen(s) < 20 || strlen(s) >= MAXDATELEN)
		return false;
	if (!digits(p, 4) || p[4] != '-' || !digits(p + 5, 2) || p[7] != '-' || !digits(p + 8, 2))
		return false;
	p += 10;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return false;
	p++;
	if (!digits(p, 2) || p[2] != ':' || !digits(p + 3, 2) || p[5] != ':' || !digits(p + 6, 2))
		return false;
	p += 8;
	if (*p == '.')
	{
		p++;
		if (!digits(p, 1))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		return wl_clock_parse(s, result);
	if ((*p == '+' || *p == '-') && digits(p + 1, 2) && p[3] == ':' && digits(p + 4, 2) &&
		p[6] == '\0')
		return wl_clock_parse(s, result);
	return false;
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
