/* claim.h: taking and holding work (claim.c; layer 3). */
#ifndef WL_CLAIM_H
#define WL_CLAIM_H

#include "errors.h"
#include "store_ops.h"

/* One workload_heartbeat_many item, and what became of it. */
typedef struct WlBeat
{
	WlFence		fence;
	Jsonb	   *progress;		/* NULL: keep the last */
	WlErr		err;			/* WL_OK, or the refusal (detail says why) */
	char	   *detail;
	Jsonb	   *answer;
} WlBeat;

extern int	wl_claim(WlClaimRequest *r, WlClaimed **out);
extern int	wl_claim_named(WlClaimRequest *r, WlClaimed **out);
extern void wl_start(const WlFence *fence);
extern Jsonb *wl_heartbeat(const WlFence *fence, TimestampTz until, Jsonb *progress);
extern void wl_heartbeat_batch(WlBeat *beats, int n, TimestampTz until);

#endif
