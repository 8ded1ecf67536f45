/* waits.h: durable waits, signals and approvals (waits.c). */
#ifndef WL_WAITS_H
#define WL_WAITS_H

#include "store.h"

typedef enum WlWaitDue
{
	WL_WAIT_NONE,				/* no open wait whose deadline has come */
	WL_WAIT_WOKEN,				/* a schedule wait woke: READY */
	WL_WAIT_EXPIRED				/* an event or approval wait expired: TIMED_OUT, then on */
} WlWaitDue;

extern WlWaitDue wl_wait_due(WlRow *row);
extern Jsonb *wl_wait_last(const char *workload_id);

#endif
