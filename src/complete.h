/* complete.h: completing workloads, one or a batch (complete.c; layer 3). */
#ifndef WL_COMPLETE_H
#define WL_COMPLETE_H

#include "errors.h"
#include "row.h"

/* One completion request, as workload_complete and workload_complete_many take it. */
typedef struct WlCompletion
{
	WlFence		fence;
	char	   *result_id;
	Jsonb	   *output;
	ArrayType  *artifacts;
	int			schema_version;
} WlCompletion;

/* One item of a batch, and what became of it. */
typedef struct WlCompleteItem
{
	WlCompletion c;
	WlErr		err;			/* WL_OK, or the refusal (detail says why) */
	char	   *detail;
	Jsonb	   *doc;			/* the result, or why the criteria were not met */
	bool		unmet;			/* the output missed the completion criteria */
} WlCompleteItem;

extern Jsonb *wl_complete(const WlCompletion *c, bool *unmet);
extern void wl_complete_batch(WlCompleteItem *items, int n);

#endif
