/* operate.h: the client's and operator's moves (operate.c; layer 3). */
#ifndef WL_OPERATE_H
#define WL_OPERATE_H

#include "states.h"

extern WlState wl_cancel(const char *workload_id, const char *actor);
extern WlState wl_retry(const char *workload_id, const char *actor);
extern WlState wl_timeout(const char *workload_id, const char *actor);
extern char **wl_redrive(const char *tenant_id, const char *application_id, const char *actor,
						 const char *definition_id, const char *failure_kind, int lim, int *n);

#endif
