/*
 * cron.h: a schedule's time rules (cron.c; layer 1, no SPI): parse and
 * check a `cron` text (SPEC section 4, "Scheduling and bulk work") and
 * compute its slots in an IANA time zone with PostgreSQL's time-zone code.
 * Every refusal is WORKLOAD_INVALID with a detail that says what is wrong.
 */
#ifndef WL_CRON_H
#define WL_CRON_H

#include "datatype/timestamp.h"
#include "pgtime.h"

/* the longest cron text accepted (a five-field line with every value listed is ~400) */
#define WL_CRON_MAX_LEN 1000

typedef enum WlCronKind
{
	WL_CRON_FIELDS,				/* five fields (or an @-macro): local wall-clock slots */
	WL_CRON_EVERY				/* @every <interval>: multiples of it since the Unix epoch */
} WlCronKind;

/* A parsed cron.  Bit n of a set means value n matches. */
typedef struct WlCron
{
	WlCronKind	kind;
	int64		every_usecs;	/* WL_CRON_EVERY: the period, whole seconds, >= 1 s */
	uint64		minutes;		/* bits 0-59 */
	uint32		hours;			/* bits 0-23 */
	uint32		days;			/* bits 1-31 (day of month) */
	uint32		months;			/* bits 1-12 */
	uint32		weekdays;		/* bits 0-6, 0 = Sunday (7 is folded into 0) */
	bool		days_star;		/* the day-of-month field starts with "*" */
	bool		weekdays_star;	/* the day-of-week field starts with "*" */
} WlCron;

extern void wl_cron_parse(const char *text, WlCron *out);
extern pg_tz *wl_cron_zone(const char *name);
extern const char *wl_cron_zone_name(const char *name);
extern bool wl_cron_next(const WlCron *c, const char *timezone, TimestampTz after,
						 TimestampTz *slot);
extern bool wl_cron_prev(const WlCron *c, const char *timezone, TimestampTz at,
						 TimestampTz *slot);
extern int	wl_cron_between(const WlCron *c, const char *timezone, TimestampTz after,
							TimestampTz until, TimestampTz *slots, int max);

#endif
