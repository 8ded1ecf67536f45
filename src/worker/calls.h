/*
 * calls.h: the API calls the worker makes, and the claimed workload
 * (WlwItem) they are about.
 */
#ifndef WLW_CALLS_H
#define WLW_CALLS_H

#include <stdbool.h>

#include "db.h"

/* One claimed workload, from the claim row to the end of its attempt. */
typedef struct WlwItem
{
	char	   *workload_id;
	char	   *claim_id;
	char		token[24];		/* fencing token, as text */
	int			attempt;
	char	   *definition_id;
	char	   *definition_revision;
	char	   *input;
	int			checkpoint_sequence;
	char	   *progress;		/* latest progress not yet sent, or NULL */
	bool		cancel_requested;
	bool		done;			/* attempt over: finished, lost or cancelled */
} WlwItem;

/* What a run starts from: workload_execution_context and workload_resume. */
typedef struct WlwStart
{
	char	   *context;		/* JSON: attempt_id, capabilities, connection_scopes, environment */
	int			checkpoint_sequence;	/* of the verified latest checkpoint, 0 if none */
	char	   *checkpoint;		/* its state as JSON, or NULL */
	char	   *wake;			/* how the latest wait ended, JSON, or NULL */
} WlwStart;

/* One item of a batch call, and what became of it. */
typedef struct WlwBatchItem
{
	WlwItem    *it;
	const char *output;			/* complete_many: the output (JSON text) */
	WlwCall		v;				/* this item's outcome */
	WlwError	err;			/* for WLW_REFUSED and WLW_LOST: the code in message */
	bool		cancel;			/* heartbeat_many: cancellation requested */
	bool		unmet;			/* complete_many: completion criteria unmet */
} WlwBatchItem;

extern int	wlw_db_claim(int max_items, WlwItem **items, WlwError *err, bool *conn_lost);
extern void wlw_item_free(WlwItem *it);
extern WlwCall wlw_db_start(WlwItem *it, WlwStart *start, WlwError *err);
extern void wlw_start_free(WlwStart *start);
extern WlwCall wlw_db_heartbeat(WlwItem *it, bool *cancel, WlwError *err);
extern WlwCall wlw_db_heartbeat_many(WlwBatchItem *items, int n, WlwError *err);
extern WlwCall wlw_db_checkpoint(WlwItem *it, const char *state, WlwError *err);
extern WlwCall wlw_db_complete(WlwItem *it, const char *output, WlwError *err);
extern WlwCall wlw_db_complete_many(WlwBatchItem *items, int n, WlwError *err);
extern WlwCall wlw_db_fail(WlwItem *it, const char *kind, const char *error, char **state,
						   WlwError *err);
extern WlwCall wlw_db_confirm_cancel(WlwItem *it, WlwError *err);

#endif							/* WLW_CALLS_H */
