/* finish.h: a worker's other reports: failure, confirmed cancel, execution context (finish.c; layer 3). */
#ifndef WL_FINISH_H
#define WL_FINISH_H

#include "row.h"

extern WlState wl_fail(const WlFence *fence, const char *kind, const char *error);
extern void wl_confirm_cancel(const WlFence *fence);
extern Jsonb *wl_execution_context(const WlFence *fence, ArrayType *secret_references);

#endif
