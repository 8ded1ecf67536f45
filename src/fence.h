/* fence.h: claims, leases and fencing-token checks (fence.c). */
#ifndef WL_FENCE_H
#define WL_FENCE_H

#include "datatype/timestamp.h"
#include "fmgr.h"

#include "errors.h"
#include "store.h"

typedef struct WlFence
{
	char	   *workload_id;
	char	   *claim_id;
	char	   *worker_id;
	int64		fencing_token;
} WlFence;

extern void wl_fence_from_args(FunctionCallInfo fcinfo, int first, WlFence *f);
extern WlErr wl_fence_verdict(const WlRow *row, const WlFence *f, char **detail);
extern void wl_fence_check(const WlRow *row, const WlFence *f);
extern void wl_fence_lock(const WlFence *f, WlRow *row);
extern void wl_fence_release(WlRow *row);
#define WL_MAX_LEASE_S 86400

extern TimestampTz wl_fence_lease_until(const Interval *lease, const char *what);
extern Jsonb *wl_fence_evidence(const WlRow *row, const char *cause);

#endif
