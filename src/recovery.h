/* recovery.h: lease recovery and the tick's passes (recovery.c; layer 3). */
#ifndef WL_RECOVERY_H
#define WL_RECOVERY_H

#include "nodes/pg_list.h"

#include "row.h"

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
	int64		held;			/* left for a later pass: their step met another session's lock */
	int64		cascaded;		/* cascades taken up from workload.cascades */
	int64		cascade_steps;	/* dependents looked at by cascades */
	int64		cascades_left;	/* cascade frames and dependents left for a later pass */
	bool		more;			/* it stopped at its limit with work left */
	List	   *errors;			/* of WlStepError, at most WL_REPORT_ERRORS */
	List	   *recovered_ids;	/* of char *, when asked for */
	bool		keep_ids;
} WlTickReport;

extern bool wl_recovery_unauthorized(WlRow *row, const char *cause, const char *grant_id,
									 const char *actor);
extern void wl_recovery_leases(uint64 limit, WlTickReport *r);
extern void wl_recovery_leases_phase(WlTickReport *r);
extern void wl_recovery_sweeps_phase(WlTickReport *r);

#endif
