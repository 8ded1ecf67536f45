/* create_many.h: workload_create_many's batch (create_many.c; layer 3). */
#ifndef WL_CREATE_MANY_H
#define WL_CREATE_MANY_H

#include "errors.h"
#include "spec.h"

#define WL_CREATE_CREATED "created"
#define WL_CREATE_EXISTING "existing"
#define WL_CREATE_REFUSED "refused"

/* What became of one spec of the batch. */
typedef struct WlCreateItem
{
	const char *outcome;		/* WL_CREATE_CREATED, _EXISTING or _REFUSED */
	WlErr		err;			/* the refusal (WL_OK otherwise) */
	char	   *workload_id;	/* NULL when refused */
	Jsonb	   *doc;			/* the document as it is now; NULL when refused */
	WlSpec		spec;
	char	   *input_hash;
	ArrayType  *chain;			/* the snapshot's chain of grant ids */
	bool		full;			/* has dependencies: created through create.c */
} WlCreateItem;

extern void wl_create_many(Jsonb **specs, int n, WlCreateItem *items);

#endif
