/* tick.h: maintenance passes. */
#ifndef WL_TICK_H
#define WL_TICK_H

extern uint64 wl_recover_expired(void (*emit) (const char *id, void *arg), void *arg);

#endif
