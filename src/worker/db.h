/*
 * db.h: the connection and every SQL call the worker makes, with the
 * claimed workload (WlwItem) those calls are about.
 */
#ifndef WLW_DB_H
#define WLW_DB_H

#include <stdbool.h>

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

/* How a SQL call ended. */
typedef enum WlwCall
{
	WLW_OK,						/* the call succeeded */
	WLW_LOST,					/* fence refused (WL006/7/8): not ours any more */
	WLW_REFUSED,				/* refused for another reason; see sqlstate */
	WLW_NO_CONNECTION			/* the connection is gone and could not be restored */
} WlwCall;

typedef struct WlwError
{
	char		sqlstate[6];
	char		message[512];
	char		detail[512];
} WlwError;

/* What a run starts from: workload_execution_context and workload_resume. */
typedef struct WlwStart
{
	char	   *context;		/* JSON: attempt_id, capabilities, connection_scopes, environment */
	int			checkpoint_sequence;	/* of the verified latest checkpoint, 0 if none */
	char	   *checkpoint;		/* its state as JSON, or NULL */
	char	   *wake;			/* how the latest wait ended, JSON, or NULL */
} WlwStart;

extern bool wlw_db_connect(void);
extern void wlw_db_close(void);
extern int	wlw_db_socket(void);
extern bool wlw_db_consume(bool *notified);
extern int	wlw_db_claim(WlwItem **items, WlwError *err, bool *conn_lost);
extern WlwCall wlw_db_heartbeat(WlwItem *it, bool *cancel, WlwError *err);
extern WlwCall wlw_db_checkpoint(WlwItem *it, const char *state, WlwError *err);
extern WlwCall wlw_db_complete(WlwItem *it, const char *output, WlwError *err);
extern WlwCall wlw_db_fail(WlwItem *it, const char *kind, const char *error, char **state,
						   WlwError *err);
extern WlwCall wlw_db_confirm_cancel(WlwItem *it, WlwError *err);
extern WlwCall wlw_db_start(WlwItem *it, WlwStart *start, WlwError *err);
extern void wlw_start_free(WlwStart *start);
extern void wlw_items_free(WlwItem *items, int n);

#endif							/* WLW_DB_H */
