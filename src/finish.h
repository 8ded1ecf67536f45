/* finish.h: a worker's other reports: failure, confirmed cancel, execution context (finish.c; layer 3). */
#ifndef WL_FINISH_H
#define WL_FINISH_H

#include "row.h"
#include "store_ops.h"

extern WlState wl_fail(const WlFence *fence, const char *kind, const char *error);
extern void wl_confirm_cancel(const WlFence *fence);
extern Jsonb *wl_execution_context(const WlFence *fence, ArrayType *secret_references);
/* what a batch's authority checks share: its revocations checked, its snapshot verified once */
typedef struct WlAuthorityMemo
{
	char	   *snapshot_key;	/* key_id/signature digest of the snapshot verified last */
	bool		snapshot_holds;
	const char *snapshot_why;
} WlAuthorityMemo;

extern bool wl_authority_holds(const WlRow *row, const WlSpecRow *spec, char **detail,
							   const char **cause);
extern bool wl_authority_holds_unrevoked(const WlRow *row, const WlSpecRow *spec, char **detail,
										 const char **cause, WlAuthorityMemo *memo);
extern Jsonb *wl_context_of(const WlRow *row, const WlSpecRow *spec, ArrayType *secret_references,
							 char **detail, const char **cause, WlAuthorityMemo *memo);

#endif
