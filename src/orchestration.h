/* orchestration.h: checkpoint tags, completion criteria (orchestration.c). */
#ifndef WL_ORCHESTRATION_H
#define WL_ORCHESTRATION_H

#include "store.h"

extern char *wl_orch_checkpoint_tag(const char *checkpoint_id, const char *workload_id,
									int sequence, const char *state_hash, char **key_id);
extern char *wl_orch_criteria_unmet(const char *workload_id, Jsonb *output);
extern Jsonb *wl_orch_criteria_fail(WlRow *row, const char *worker_id,
									const char *result_id, const char *reason);

#endif
