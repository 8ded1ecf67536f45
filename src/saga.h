/* saga.h: compensation steps and workload_compensate (saga.c; layer 3). */
#ifndef WL_SAGA_H
#define WL_SAGA_H

#include "row.h"

extern Jsonb *wl_saga_add(const WlFence *fence, const char *capability, Jsonb *input);
extern char **wl_saga_compensate(const char *workload_id, const char *actor, int *n);

#endif
