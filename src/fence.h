/* fence.h: claims, leases and fencing-token checks (fence.c; layer 3). */
#ifndef WL_FENCE_H
#define WL_FENCE_H

#include "errors.h"
#include "row.h"
#include "store_ops.h"

extern WlErr wl_fence_verdict(const WlRow *row, const WlFence *f, char **detail);
extern void wl_fence_check(const WlRow *row, const WlFence *f);
extern void wl_fence_lock(const WlFence *f, WlRow *row);
extern bool wl_fence_try(WlFencedCall *c, WlRow *row);
extern void wl_fence_release(WlRow *row);
extern Jsonb *wl_fence_evidence(const WlRow *row, const char *cause);

#endif
