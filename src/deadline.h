/* deadline.h: which timeout applies when (deadline.c; layer 1). */
#ifndef WL_DEADLINE_H
#define WL_DEADLINE_H

#include "row.h"

#define WL_MS(ms) ((int64) (ms) * INT64CONST(1000))

extern void wl_deadline_set(WlRow *row, WlState from);
extern bool wl_deadline_lapsed(const WlRow *row, TimestampTz now);
extern bool wl_deadline_overall_due(const WlRow *row, TimestampTz now);

#endif
