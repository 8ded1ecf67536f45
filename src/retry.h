/* retry.h: what follows a failure, a timeout or a lost worker (retry.c; layer 3). */
#ifndef WL_RETRY_H
#define WL_RETRY_H

#include "row.h"

extern int64 wl_retry_delay_ms(const WlPolicy *p, int retry_count);
extern WlState wl_retry_or_dead_letter(WlRow *row, const char *kind, const char *actor);
extern WlState wl_retry_timeout(WlRow *row, const char *actor, const char *cause, bool final);

#endif
