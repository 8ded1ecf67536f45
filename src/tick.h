/* tick.h: maintenance passes and the deadline rule they follow (tick.c). */
#ifndef WL_TICK_H
#define WL_TICK_H

#include "store.h"

extern uint64 wl_recover_expired(void (*emit) (const char *id, void *arg), void *arg,
								 uint64 limit, bool *more);
extern void wl_tick_deadline(WlRow *row, WlState from);

#endif
