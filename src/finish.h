/* finish.h: a worker's other reports: failure, confirmed cancel, execution context (finish.c; layer 3). */
#ifndef WL_FINISH_H
#define WL_FINISH_H

#include "row.h"
#include "store_ops.h"

extern WlState wl_fail(const WlFence *fence, const char *kind, const char *error);
extern void wl_confirm_cancel(const WlFence *fence);
extern Jsonb *wl_execution_context(const WlFence *fence, ArrayType *secret_references);
extern bool wl_authority_holds(const WlRow *row, const WlSpecRow *spec, char **detail,
							   const char **cause);
extern Jsonb *wl_context_of(const WlRow *row, const WlSpecRow *spec, ArrayType *secret_references,
							 char **detail, const char **cause);

#endif
