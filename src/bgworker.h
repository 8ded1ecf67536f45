/* bgworker.h: the background worker that runs workload_tick (bgworker.c). */
#ifndef WL_BGWORKER_H
#define WL_BGWORKER_H

#include "postgres.h"

extern void wl_bgworker_init(void);
extern PGDLLEXPORT void wl_bgworker_main(Datum arg);

#endif
