/* transition.h: the one state-change path (transition.c; layer 3). */
#ifndef WL_TRANSITION_H
#define WL_TRANSITION_H

#include "row.h"

extern void wl_transition(WlRow *row, WlState to, const char *actor, Jsonb *evidence);
extern void wl_transition_written_many(WlRow **rows, int n, WlState from, const char *actor);
extern void wl_transition_many(WlRow **rows, int n, WlState to, const char *actor,
							   Jsonb **evidence);
extern void wl_transition_applied(WlRow *row, WlState from, const char *actor, Jsonb *evidence);
extern void wl_transition_created(const WlRow *row, const char *actor);
extern void wl_transition_init(void);
extern void wl_transition_ready_notify(const char *channel, const char *workload_id);

extern void wl_transition_cascade_budget(int steps);
extern void wl_transition_cascade_spent(uint64 *steps, uint64 *left_over);
extern int	wl_transition_cascades_left(int limit, const char *actor, bool *more, uint64 *failed);

#endif
