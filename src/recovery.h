/* recovery.h: lease recovery and the tick's passes (recovery.c; layer 3). */
#ifndef WL_RECOVERY_H
#define WL_RECOVERY_H

#include "nodes/pg_list.h"

/* A workload whose maintenance step failed: skipped, and reported. */
typedef struct WlStepError
{
	char	   *workload_id;
	char	   *sqlstate;
	char	   *message;
} WlStepError;

#define WL_REPORT_ERRORS 20		/* errors kept in a report; the rest are counted */

/* What one maintenance pass did. */
typedef struct WlTickReport
{
	int64		recovered;
	int64		queue;
	int64		claim;
	int64		execution;
	int64		heartbeat;
	int64		overall;
	int64		woken;
	int64		expired;
	int64		revoked;		/* dead-lettered: their authorization was revoked */
	int64		failed;
	int64		deferred;		/* passed over: their step failed a moment ago */
	bool		more;			/* it stopped at its limit with work left */
	List	   *errors;			/* of WlStepError, at most WL_REPORT_ERRORS */
	List	   *recovered_ids;	/* of char *, when asked for */
	bool		keep_ids;
} WlTickReport;

extern void wl_recovery_leases(uint64 limit, WlTickReport *r);
extern bool wl_recovery_tick(WlTickReport *r);

#endif
