/*
 * db.h: the connection and how a statement's end is reported.  The
 * statements themselves are in calls.c.
 */
#ifndef WLW_DB_H
#define WLW_DB_H

#include <stdbool.h>

#include "libpq-fe.h"

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

extern bool wlw_db_connect(void);
extern void wlw_db_close(void);
extern int	wlw_db_socket(void);
extern bool wlw_db_consume(void);
extern bool wlw_db_notified(bool take);
extern PGresult *wlw_db_exec_once(const char *sql, int n, const char *const *params,
								  WlwError *err, bool *lost);
extern PGresult *wlw_db_call(const char *sql, int n, const char *const *params, WlwError *err,
							 bool *nocon);
extern WlwCall wlw_db_verdict(PGresult *res, bool nocon, WlwError *err);
extern char *wlw_db_value(PGresult *res, int row, int col);

#endif							/* WLW_DB_H */
