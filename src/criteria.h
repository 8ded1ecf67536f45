/* criteria.h: completion criteria (criteria.c; layer 3). */
#ifndef WL_CRITERIA_H
#define WL_CRITERIA_H

#include "row.h"

extern char *wl_criteria_unmet(const WlRow *row, Jsonb *output);
extern Jsonb *wl_criteria_fail(WlRow *row, const char *worker_id, const char *result_id,
							   const char *reason);

#endif
