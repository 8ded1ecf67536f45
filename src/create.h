/* create.h: the one path that creates a workload (create.c; layer 3). */
#ifndef WL_CREATE_H
#define WL_CREATE_H

#include "spec.h"

extern Jsonb *wl_create(const WlSpec *spec);

#endif
