/* create.h: the one path that creates a workload (api_create.c). */
#ifndef WL_CREATE_H
#define WL_CREATE_H

#include "payload.h"

extern Jsonb *wl_create_workload(const WlSpec *spec);

#endif
