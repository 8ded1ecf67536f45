/* claim_resume.h: where a session's next claim in a queue starts (claim_resume.c; layer 3). */
#ifndef WL_CLAIM_RESUME_H
#define WL_CLAIM_RESUME_H

#include "store_ops.h"

extern void wl_claim_resume_init(void);
extern int	wl_claim_queue(WlClaimRequest *r, WlClaimed **out);

#endif
