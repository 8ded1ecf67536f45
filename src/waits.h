/* waits.h: durable waits, signals and approvals (waits.c; layer 3). */
#ifndef WL_WAITS_H
#define WL_WAITS_H

#include "row.h"

typedef enum WlWaitDue
{
	WL_WAIT_NONE,				/* no open wait whose deadline has come */
	WL_WAIT_WOKEN,				/* a schedule wait woke: READY */
	WL_WAIT_EXPIRED				/* an event or approval wait expired: TIMED_OUT, then on */
} WlWaitDue;

extern bool wl_wait_kind_known(const char *kind);
extern WlState wl_wait_enter(const WlFence *fence, const char *kind, const char *wake_key,
							 TimestampTz deadline);
extern int	wl_wait_signal(const char *tenant_id, const char *application_id,
						   const char *wake_key, Jsonb *payload);
extern bool wl_wait_approve(const char *workload_id, const char *approver, bool approved,
							const char *note);
extern WlWaitDue wl_wait_due(WlRow *row);

#endif
