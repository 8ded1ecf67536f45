/*
 * cron.c: a schedule's time rules (SPEC section 4, "Scheduling and bulk
 * work"): the `cron` text and the slots it names.  Local times are turned
 * into instants with PostgreSQL's time-zone code (pg_tzset and the zone's
 * transitions from pg_next_dst_boundary, as DetermineTimeZoneOffset does),
 * never with offsets of our own.  Layer 1: no SPI, no tables, no clock.
 *
 * Decisions (SPEC section 4 leaves them open; the tests show each):
 * - Day of month and day of week: when both fields are restricted a day
 *   matches if either matches; a field that starts with "*" (also "*" + "/n")
 *   is unrestricted and the two are ANDed.  That is Vixie cron's rule, so a
 *   line moved over from cron, cronie or pg_cron fires on the same days.
 * - A local time that does not exist (a gap) fires when the jump ends; one
 *   that exists twice fires once, at its first occurrence.  Both follow from
 *   one rule: a slot is the first instant at which the wall clock reads its
 *   local time or later.
 * - @every: whole seconds, 1 s to 36525 days; days count as 86400 s;
 *   months and years are refused (no fixed length).
 * - A five-field cron whose days of the month exist in none of its months
 *   ("0 0 31 2 *") is refused; any other matches at least every 40 years
 *   (29 February on a given weekday), and a search stops after 400 (the
 *   Gregorian cycle) or at the end of the timestamp range: "no slot".
 */
#include "postgres.h"

#include <ctype.h>

#include "common/int.h"
#include "common/hashfn.h"
#include "utils/datetime.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "cron.h"
#include "errors.h"

#define EVERY_MAX_DAYS	36525
#define SEARCH_YEARS	400
/* the years a timestamptz can hold, in j2date's numbering (1 BC is 0) */
#define FIRST_YEAR		(-4713)
#define LAST_YEAR		294277
#define SEARCH_GUARD	(14 * SEARCH_YEARS + 64)
/* a window wider than twice the largest UTC offset any zone has had (about 16 h) */
#define ZONE_WINDOW		((pg_time_t) 15 * SECS_PER_DAY)
#define ZONE_SEGMENTS	64
/* the Unix epoch as a TimestampTz */
#define UNIX_EPOCH_TS	((TimestampTz) (UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)
#define CRON_FIELD_NAMES "minute, hour, day of month, month, day of week"
#define CRON_MACRO_NAMES "@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually and @every <interval>"
#define BIT(n)			(UINT64CONST(1) << (n))

/* one of the five fields: its name, its range, and its names (value = index + name_base) */
typedef struct CronField
{
	const char *label;
	int			lo;
	int			hi;
	const char *const *names;
	int			name_count;
	int			name_base;
} CronField;

static const char *const month_names[] = {
	"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"
};
static const char *const weekday_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

static const CronField cron_fields[5] = {
	{"minute", 0, 59, NULL, 0, 0},
	{"hour", 0, 23, NULL, 0, 0},
	{"day-of-month", 1, 31, NULL, 0, 0},
	{"month", 1, 12, month_names, 12, 1},
	{"day-of-week", 0, 7, weekday_names, 7, 0},
};

static const struct
{
	const char *name;
	const char *fields;
}			cron_macros[] = {
	{"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
	{"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"}, {"@midnight", "0 0 * * *"},
	{"@hourly", "0 * * * *"},
};

/* a local wall-clock minute: f[0] year, f[1] month, f[2] day, f[3] hour, f[4] minute */
typedef struct LocalTime
{
	int			f[5];
} LocalTime;

/* cron_value: one number or name of field fd, or a refusal naming it. */
static int
cron_value(const CronField *fd, const char *s, int len)
{
	int			v = 0;
	int			i;

	for (i = 0; i < len && isdigit((unsigned char) s[i]); i++)
		v = Min(v * 10 + (s[i] - '0'), 100000);
	if (len > 0 && i == len)
	{
		if (v < fd->lo || v > fd->hi)
			wl_refuse(WL_E_INVALID,
					  errdetail("Value \"%s\" in the %s field is out of range: it must be from %d to %d.",
								pnstrdup(s, len), fd->label, fd->lo, fd->hi));
		return v;
	}
	for (i = 0; i < fd->name_count; i++)
	{
		if (len == 3 && pg_strncasecmp(s, fd->names[i], 3) == 0)
			return i + fd->name_base;
	}
	if (fd->names != NULL)
		wl_refuse(WL_E_INVALID,
				  errdetail("\"%s\" in the %s field is neither a number nor a name (%s to %s).",
							pnstrdup(s, len), fd->label, fd->names[0], fd->names[fd->name_count - 1]));
	wl_refuse(WL_E_INVALID,
			  errdetail("\"%s\" in the %s field is not a number.", pnstrdup(s, len), fd->label));
	return 0;					/* not reached */
}

/*
 * cron_item parses one list item of field fd: "*", "a", "a-b", each with an
 * optional "/step" ("a/step" runs from a to the field's end), into a set.
 */
static uint64
cron_item(const CronField *fd, const char *s, int len)
{
	const char *slash = memchr(s, '/', len);
	const char *dash;
	int			blen = slash ? (int) (slash - s) : len;
	int			top = (fd->hi == 7) ? 6 : fd->hi;	/* "*" in day-of-week: 0-6 */
	int			first;
	int			last;
	int			step = 1;
	uint64		set = 0;

	if (blen == 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("Item \"%s\" in the %s field has no value before its step.",
							pnstrdup(s, len), fd->label));
	if (slash)
	{
		int			slen = len - blen - 1;
		int			i;

		for (i = 0, step = 0; i < slen && isdigit((unsigned char) slash[1 + i]); i++)
			step = Min(step * 10 + (slash[1 + i] - '0'), 100000);
		if (slen == 0 || i < slen || step < 1 || step > fd->hi)
			wl_refuse(WL_E_INVALID,
					  errdetail("Step \"%s\" in the %s field must be a number from 1 to %d.",
								pnstrdup(slash + 1, slen), fd->label, fd->hi));
	}
	dash = memchr(s, '-', blen);
	if (blen == 1 && s[0] == '*')
	{
		first = fd->lo;
		last = top;
	}
	else if (dash)
	{
		if (dash == s || dash == s + blen - 1)
			wl_refuse(WL_E_INVALID,
					  errdetail("Range \"%s\" in the %s field is missing a bound.",
								pnstrdup(s, blen), fd->label));
		first = cron_value(fd, s, (int) (dash - s));
		last = cron_value(fd, dash + 1, blen - (int) (dash - s) - 1);
		if (first > last)
			wl_refuse(WL_E_INVALID,
					  errdetail("Range \"%s\" in the %s field runs backwards; write it as two items of a list.",
								pnstrdup(s, blen), fd->label));
	}
	else
	{
		first = cron_value(fd, s, blen);
		last = (slash && first <= top) ? top : first;
	}
	for (int v = first; v <= last; v += step)
		set |= BIT(fd->hi == 7 && v == 7 ? 0 : v);	/* day 7 is Sunday, 0 */
	return set;
}

/* cron_field parses a comma-separated list of items into the union of their sets. */
static uint64
cron_field(const CronField *fd, const char *field)
{
	const char *s = field;
	uint64		set = 0;

	for (;;)
	{
		const char *comma = strchr(s, ',');
		int			len = comma ? (int) (comma - s) : (int) strlen(s);

		if (len == 0)
			wl_refuse(WL_E_INVALID,
					  errdetail("The %s field \"%s\" has an empty list item.", fd->label, field));
		set |= cron_item(fd, s, len);
		if (comma == NULL)
			return set;
		s = comma + 1;
	}
}

/* cron_can_match: false when the days of the month exist in none of the months and must. */
static bool
cron_can_match(const WlCron *c)
{
	if (!c->days_star && !c->weekdays_star)
		return true;			/* either field may match: some weekday always does */
	for (int m = 1; m <= 12; m++)
	{
		for (int d = 1; (c->months & BIT(m)) && d <= day_tab[1][m - 1]; d++)
		{
			if (c->days & BIT(d))
				return true;
		}
	}
	return false;
}

/* cron_five parses five whitespace-separated fields (text: the whole expression). */
static void
cron_five(const char *text, WlCron *out)
{
	char	   *buf = pstrdup(text);
	char	   *tok[6];
	int			n = 0;
	uint64		sets[5];

	for (char *p = strtok(buf, " \t\r\n\f\v"); p != NULL; p = strtok(NULL, " \t\r\n\f\v"))
	{
		if (n == 6)
			break;
		tok[n++] = p;
	}
	if (n > 5)
		wl_refuse(WL_E_INVALID,
				  errdetail("The cron expression \"%s\" has more than five fields; it needs five (%s), or one of %s.",
							text, CRON_FIELD_NAMES, CRON_MACRO_NAMES));
	if (n < 5)
		wl_refuse(WL_E_INVALID,
				  errdetail_plural("The cron expression \"%s\" has %d field; it needs five (%s), or one of %s.",
								   "The cron expression \"%s\" has %d fields; it needs five (%s), or one of %s.",
								   n, text, n, CRON_FIELD_NAMES, CRON_MACRO_NAMES));
	for (int i = 0; i < 5; i++)
		sets[i] = cron_field(&cron_fields[i], tok[i]);
	out->kind = WL_CRON_FIELDS;
	out->minutes = sets[0];
	out->hours = (uint32) sets[1];
	out->days = (uint32) sets[2];
	out->months = (uint32) sets[3];
	out->weekdays = (uint32) sets[4];
	out->days_star = (tok[2][0] == '*');
	out->weekdays_star = (tok[4][0] == '*');
	if (!cron_can_match(out))
		wl_refuse(WL_E_INVALID,
				  errdetail("The cron expression \"%s\" never matches: none of its months has any of its days of the month.",
							text));
}

/* cron_every parses the interval of "@every <interval>" as interval_in does, without raising. */
static void
cron_every(const char *iv, WlCron *out)
{
	char		workbuf[256];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype = 0;
	int			dterr;
	struct pg_itm_in itm = {0};
	Interval	span;
	int64		usecs;

	dterr = ParseDateTime(iv, workbuf, sizeof(workbuf), field, ftype, MAXDATEFIELDS, &nf);
	if (dterr == 0)
		dterr = DecodeInterval(field, ftype, nf, INTERVAL_FULL_RANGE, &dtype, &itm);
	if (dterr == DTERR_BAD_FORMAT)
		dterr = DecodeISO8601Interval(pstrdup(iv), &dtype, &itm);
	if (dterr != 0 || dtype != DTK_DELTA || itmin2interval(&itm, &span) != 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("\"%s\" is not a valid interval; write @every with a PostgreSQL interval such as \"5 minutes\".", iv));
	if (span.month != 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("The interval \"%s\" of @every has months or years, which have no fixed length; use a five-field cron expression or @monthly.", iv));
	if (span.day > EVERY_MAX_DAYS || span.day < -EVERY_MAX_DAYS)
		wl_refuse(WL_E_INVALID,
				  errdetail("The interval \"%s\" of @every is longer than %d days.", iv, EVERY_MAX_DAYS));
	if (pg_add_s64_overflow(span.day * USECS_PER_DAY, span.time, &usecs) ||
		usecs > EVERY_MAX_DAYS * USECS_PER_DAY)
		wl_refuse(WL_E_INVALID,
				  errdetail("The interval \"%s\" of @every is longer than %d days.", iv, EVERY_MAX_DAYS));
	if (usecs < USECS_PER_SEC)
		wl_refuse(WL_E_INVALID,
				  errdetail("The interval \"%s\" of @every is shorter than 1 second.", iv));
	if (usecs % USECS_PER_SEC != 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("The interval \"%s\" of @every is not a whole number of seconds.", iv));
	out->kind = WL_CRON_EVERY;
	out->every_usecs = usecs;
}

/*
 * wl_cron_parse fills *out from a cron text: five fields, an @-macro or
 * "@every <interval>" (leading and trailing white space ignored; names and
 * macros in any case).  Raises WORKLOAD_INVALID with a detail naming what is
 * wrong.
 */
void
wl_cron_parse(const char *text, WlCron *out)
{
	size_t		len = strlen(text);
	char	   *s;
	char	   *end;

	memset(out, 0, sizeof(*out));
	if (len > WL_CRON_MAX_LEN)
		wl_refuse(WL_E_INVALID,
				  errdetail("The cron expression is %zu bytes; the limit is %d.", len, WL_CRON_MAX_LEN));
	s = pstrdup(text);
	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	if (*s == '\0')
		wl_refuse(WL_E_INVALID, errdetail("The cron expression is empty."));
	if (*s != '@')
	{
		cron_five(s, out);
		return;
	}
	if (pg_strncasecmp(s, "@every", 6) == 0 && (s[6] == '\0' || isspace((unsigned char) s[6])))
	{
		char	   *iv = s + 6;

		while (isspace((unsigned char) *iv))
			iv++;
		if (*iv == '\0')
			wl_refuse(WL_E_INVALID,
					  errdetail("@every needs an interval, such as \"@every 5 minutes\"."));
		cron_every(iv, out);
		return;
	}
	for (int i = 0; i < lengthof(cron_macros); i++)
	{
		if (pg_strcasecmp(s, cron_macros[i].name) == 0)
		{
			cron_five(cron_macros[i].fields, out);
			return;
		}
	}
	wl_refuse(WL_E_INVALID,
			  errdetail("\"%s\" is not a known cron macro; use one of %s.", s, CRON_MACRO_NAMES));
}

/*
 * The zones a schedule may name: the IANA names of the server's time-zone
 * database, as pg_timezone_names lists them, keyed in upper case (zone names
 * are matched without regard to case, as SET TIME ZONE matches them) and
 * mapped to their canonical spelling.  Read once per backend; a few hundred
 * names, whatever names callers try.  pg_tzset alone would also accept a
 * POSIX zone specification ("BBB0:01") and cache each one for the backend's
 * life: one spelling per call, without bound.
 */
typedef struct WlZoneName
{
	char		key[TZ_STRLEN_MAX + 1];
	char		canonical[TZ_STRLEN_MAX + 1];
} WlZoneName;

static HTAB *zone_names = NULL;

static void
zone_key(const char *name, char *key)
{
	size_t		len = strlen(name);

	for (size_t i = 0; i < len; i++)
		key[i] = pg_toupper((unsigned char) name[i]);
	key[len] = '\0';
}

static void
zone_names_load(void)
{
	HASHCTL		ctl = {.keysize = TZ_STRLEN_MAX + 1, .entrysize = sizeof(WlZoneName),
	.hcxt = TopMemoryContext};
	MemoryContext scratch = AllocSetContextCreate(CurrentMemoryContext, "workload zone names",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(scratch);
	HTAB	   *names = hash_create("workload zone names", 1024, &ctl,
									HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	pg_tzenum  *dir = pg_tzenumerate_start();
	pg_tz	   *tz;

	while ((tz = pg_tzenumerate_next(dir)) != NULL)
	{
		const char *name = pg_get_timezone_name(tz);
		char		key[TZ_STRLEN_MAX + 1];
		WlZoneName *z;

		if (strlen(name) > TZ_STRLEN_MAX)
			continue;
		zone_key(name, key);
		z = hash_search(names, key, HASH_ENTER, NULL);
		strlcpy(z->canonical, name, sizeof(z->canonical));
	}
	pg_tzenumerate_end(dir);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(scratch);
	zone_names = names;
}

/*
 * wl_cron_zone_name returns the canonical spelling of the IANA time zone
 * `name` (any case).  Raises WORKLOAD_INVALID for an empty or overlong name,
 * and for anything the time-zone database does not list: POSIX zone
 * specifications, abbreviations and offsets included.
 */
const char *
wl_cron_zone_name(const char *name)
{
	size_t		len = strlen(name);
	char		key[TZ_STRLEN_MAX + 1];
	WlZoneName *z;

	if (len == 0)
		wl_refuse(WL_E_INVALID, errdetail("The time zone must not be empty."));
	if (len > TZ_STRLEN_MAX)
		wl_refuse(WL_E_INVALID,
				  errdetail("The time zone name is %zu bytes; the limit is %d.", len, TZ_STRLEN_MAX));
	if (zone_names == NULL)
		zone_names_load();
	zone_key(name, key);
	z = hash_search(zone_names, key, HASH_FIND, NULL);
	if (z == NULL)
		wl_refuse(WL_E_INVALID,
				  errdetail("Time zone \"%s\" is not an IANA time zone name; use one pg_timezone_names lists, such as \"Europe/Berlin\" or \"UTC\".", name));
	return z->canonical;
}

/*
 * wl_cron_zone returns the IANA time zone called `name` (wl_cron_zone_name)
 * as SET TIME ZONE finds it (pg_tzset, cached for the backend's life: at
 * most one entry a listed zone).  Raises WORKLOAD_INVALID for a name
 * wl_cron_zone_name refuses and for a zone that counts leap seconds.
 */
pg_tz *
wl_cron_zone(const char *name)
{
	const char *canonical = wl_cron_zone_name(name);
	pg_tz	   *tz = pg_tzset(canonical);

	if (tz == NULL)
		wl_refuse(WL_E_INVALID,
				  errdetail("Time zone \"%s\" could not be loaded.", canonical));
	if (!pg_tz_acceptable(tz))
		wl_refuse(WL_E_INVALID,
				  errdetail("Time zone \"%s\" counts leap seconds, which PostgreSQL does not support.", canonical));
	return tz;
}

/* zone_at: the UTC offset in force at t, and the next transition after t (none: INT64_MAX). */
static long
zone_at(const pg_tz *tz, pg_time_t t, pg_time_t *next)
{
	long		before_off;
	long		after_off;
	int			before_dst;
	int			after_dst;
	pg_time_t	boundary = 0;
	int			r;

	r = pg_next_dst_boundary(&t, &before_off, &before_dst, &boundary, &after_off, &after_dst, tz);
	if (r < 0)
		elog(ERROR, "could not read the transitions of time zone \"%s\"", pg_get_timezone_name((pg_tz *) tz));
	*next = (r == 1) ? boundary : PG_INT64_MAX;
	return before_off;
}

/*
 * first_reaching returns the first instant at which the zone's wall clock
 * reads `local` (seconds, as if UTC) or later: its only instant on an
 * ordinary day, the end of the jump when it falls in a gap, the first of
 * its two instants when the clocks go back over it.  The zone's segments
 * are walked from a window before it; in each, wall = instant + offset.
 */
static pg_time_t
first_reaching(const pg_tz *tz, pg_time_t local)
{
	pg_time_t	t = local - ZONE_WINDOW;

	for (int i = 0; i < ZONE_SEGMENTS; i++)
	{
		pg_time_t	next;
		long		off = zone_at(tz, t, &next);
		pg_time_t	u = Max(t, local - off);

		if (u < next)
			return u;
		t = next;
	}
	elog(ERROR, "time zone \"%s\" has more than %d transitions in a month",
		 pg_get_timezone_name((pg_tz *) tz), ZONE_SEGMENTS);
	return 0;					/* not reached */
}

/*
 * wall_max returns the latest wall-clock reading (seconds, as if UTC) the
 * zone has shown at or before instant `at`: its reading at `at`, unless the
 * clocks went back shortly before and it had read later before the jump.
 */
static pg_time_t
wall_max(const pg_tz *tz, pg_time_t at)
{
	pg_time_t	s = at - ZONE_WINDOW;
	pg_time_t	best = PG_INT64_MIN;

	for (int i = 0; i < ZONE_SEGMENTS; i++)
	{
		pg_time_t	next;
		long		off = zone_at(tz, s, &next);

		if (next > at)
			return Max(best, at + off);
		best = Max(best, next - 1 + off);
		s = next;
	}
	elog(ERROR, "time zone \"%s\" has more than %d transitions in a month",
		 pg_get_timezone_name((pg_tz *) tz), ZONE_SEGMENTS);
	return 0;					/* not reached */
}

static pg_time_t
ts_seconds(TimestampTz t)
{
	int64		s = t / USECS_PER_SEC;

	if (t % USECS_PER_SEC < 0)
		s--;					/* floor, also before 2000 */
	return s + (pg_time_t) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
}

/* seconds_ts converts Unix seconds to a TimestampTz; false when out of range. */
static bool
seconds_ts(pg_time_t s, TimestampTz *out)
{
	int64		pg = s - (pg_time_t) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;

	if (pg_mul_s64_overflow(pg, USECS_PER_SEC, out))
		return false;
	return IS_VALID_TIMESTAMP(*out);
}

static int
days_in(int year, int month)
{
	return day_tab[isleap(year) ? 1 : 0][month - 1];
}

static void
local_fields(pg_time_t local, LocalTime *lt)
{
	pg_time_t	days = local / SECS_PER_DAY;
	pg_time_t	rem = local % SECS_PER_DAY;

	if (rem < 0)
	{
		rem += SECS_PER_DAY;
		days--;
	}
	j2date((int) (days + UNIX_EPOCH_JDATE), &lt->f[0], &lt->f[1], &lt->f[2]);
	lt->f[3] = (int) (rem / SECS_PER_HOUR);
	lt->f[4] = (int) (rem % SECS_PER_HOUR) / SECS_PER_MINUTE;
}

static pg_time_t
local_seconds(const LocalTime *lt)
{
	return ((pg_time_t) date2j(lt->f[0], lt->f[1], lt->f[2]) - UNIX_EPOCH_JDATE) * SECS_PER_DAY +
		lt->f[3] * SECS_PER_HOUR + lt->f[4] * SECS_PER_MINUTE;
}

static bool
day_matches(const WlCron *c, int y, int m, int d)
{
	bool		dom = (c->days & BIT(d)) != 0;
	bool		dow = (c->weekdays & BIT(j2day(date2j(y, m, d)))) != 0;

	return (c->days_star || c->weekdays_star) ? (dom && dow) : (dom || dow);
}

/* level_hi: the largest value of level 1-4 (month, day, hour, minute) at lt. */
static int
level_hi(const LocalTime *lt, int level)
{
	static const int his[5] = {0, 12, 31, 23, 59};

	return level == 2 ? days_in(lt->f[0], lt->f[1]) : his[level];
}

/* reset_below sets every level below `level` to its first (up) or last value. */
static void
reset_below(LocalTime *lt, int level, bool up)
{
	static const int los[5] = {0, 1, 1, 0, 0};

	for (int l = level + 1; l <= 4; l++)
		lt->f[l] = up ? los[l] : level_hi(lt, l);
}

/* carry moves lt one step at `level` (up or down), rolling over into the level above. */
static void
carry(LocalTime *lt, int level, bool up)
{
	static const int los[5] = {0, 1, 1, 0, 0};

	while (level > 0)
	{
		lt->f[level] += up ? 1 : -1;
		if (lt->f[level] >= los[level] && lt->f[level] <= level_hi(lt, level))
			break;
		level--;
	}
	if (level == 0)
		lt->f[0] += up ? 1 : -1;
	reset_below(lt, level, up);
}

/* level_find: the nearest matching value of `level` from lt's own, going up or down; -1 when none. */
static int
level_find(const WlCron *c, const LocalTime *lt, int level, bool up)
{
	uint64		set = level == 1 ? c->months : level == 3 ? c->hours : c->minutes;
	int			lo = (level <= 2) ? 1 : 0;
	int			hi = level_hi(lt, level);

	for (int v = lt->f[level]; v >= lo && v <= hi; v += up ? 1 : -1)
	{
		if (level == 2 ? day_matches(c, lt->f[0], lt->f[1], v) : (set & BIT(v)) != 0)
			return v;
	}
	return -1;
}

/*
 * cron_search moves lt to the nearest matching local minute at or after it
 * (up) or at or before it.  False when none lies within SEARCH_YEARS years.
 */
static bool
cron_search(const WlCron *c, LocalTime *lt, bool up)
{
	int			stop = up ? Min(lt->f[0] + SEARCH_YEARS, LAST_YEAR) : Max(lt->f[0] - SEARCH_YEARS, FIRST_YEAR);

	for (int guard = 0; guard < SEARCH_GUARD; guard++)
	{
		int			level;

		if (up ? lt->f[0] > stop : lt->f[0] < stop)
			return false;
		for (level = 1; level <= 4; level++)
		{
			int			v = level_find(c, lt, level, up);

			if (v < 0)
			{
				carry(lt, level - 1, up);
				break;
			}
			if (v != lt->f[level])
			{
				lt->f[level] = v;
				reset_below(lt, level, up);
			}
		}
		if (level > 4)
			return true;
	}
	return false;
}

/*
 * every_slot: the slot of an @every cron at or before t, plus `ahead`
 * periods.  Slots are phase + k * period, phase being the Unix epoch modulo
 * the period, so that no step leaves the int64 range unnoticed.
 */
static bool
every_slot(const WlCron *c, TimestampTz t, int ahead, TimestampTz *slot)
{
	int64		p = c->every_usecs;
	int64		phase = ((UNIX_EPOCH_TS % p) + p) % p;
	int64		k = (t - phase) / p;

	if ((t - phase) % p < 0)
		k--;
	if (pg_mul_s64_overflow(k + ahead, p, slot) || pg_add_s64_overflow(*slot, phase, slot))
		return false;
	return IS_VALID_TIMESTAMP(*slot);
}

/* cron_step: the first slot after t (up) or the last at or before t. */
static bool
cron_step(const WlCron *c, const pg_tz *tz, TimestampTz t, bool up, TimestampTz *slot)
{
	LocalTime	lt;

	if (TIMESTAMP_NOT_FINITE(t))
		return false;
	if (c->kind == WL_CRON_EVERY)
		return every_slot(c, t, up ? 1 : 0, slot);
	local_fields(wall_max(tz, ts_seconds(t)), &lt);
	if (up)
		carry(&lt, 4, true);	/* strictly after the latest minute already shown */
	if (!cron_search(c, &lt, up))
		return false;
	return seconds_ts(first_reaching(tz, local_seconds(&lt)), slot);
}

/*
 * wl_cron_next sets *slot to c's first slot strictly after `after`, in time
 * zone `timezone`.  False when there is none before the end of the
 * timestamp range (or `after` is infinite).  Raises WORKLOAD_INVALID for a
 * zone wl_cron_zone refuses.
 */
bool
wl_cron_next(const WlCron *c, const char *timezone, TimestampTz after, TimestampTz *slot)
{
	return cron_step(c, wl_cron_zone(timezone), after, true, slot);
}

/* wl_cron_prev sets *slot to c's latest slot at or before `at`; as wl_cron_next otherwise. */
bool
wl_cron_prev(const WlCron *c, const char *timezone, TimestampTz at, TimestampTz *slot)
{
	return cron_step(c, wl_cron_zone(timezone), at, false, slot);
}

/*
 * wl_cron_between stores c's slots in (after, until], oldest first, at most
 * `max` of them, into slots[] and returns how many it stored.  When it
 * returns `max`, more may follow: ask again from the last one.
 */
int
wl_cron_between(const WlCron *c, const char *timezone, TimestampTz after, TimestampTz until,
				TimestampTz *slots, int max)
{
	pg_tz	   *tz = wl_cron_zone(timezone);
	int			n = 0;

	while (n < max && cron_step(c, tz, after, true, &slots[n]) && slots[n] <= until)
		after = slots[n++];
	return n;
}
