/* create.h: the one path that creates a workload (create.c; layer 3). */
#ifndef WL_CREATE_H
#define WL_CREATE_H

#include "spec.h"

extern Jsonb *wl_create(const WlSpec *spec);
extern char *wl_create_existing(const WlSpec *spec, const char *workload_id);
extern bool wl_create_replays(const WlSpec *spec, const char *workload_id, const char *found,
							  TimestampTz not_before);
extern ArrayType *wl_create_grant_ids(Jsonb *authority, ArrayType *chain);

#endif
