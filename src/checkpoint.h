/* checkpoint.h: authenticated checkpoints and resume (checkpoint.c; layer 3). */
#ifndef WL_CHECKPOINT_H
#define WL_CHECKPOINT_H

#include "row.h"

extern Jsonb *wl_checkpoint_append(const WlFence *fence, Jsonb *state);
extern Jsonb *wl_checkpoint_resume(const WlFence *fence, Jsonb *expected);

#endif
