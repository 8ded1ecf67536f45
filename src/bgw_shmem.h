/*
 * bgw_shmem.h: the shared state of the tick's background workers
 * (bgw_shmem.c): the launcher's requests, each database's worker slot and
 * how its last worker ended.  Used by bgw_launcher.c and bgworker.c; it
 * calls neither.
 */
#ifndef WL_BGW_SHMEM_H
#define WL_BGW_SHMEM_H

#include "postgres.h"

/* How a database's tick worker last ended, as the launcher reads it. */
typedef enum WlBgwExit
{
	WL_BGW_EXIT_NONE = 0,		/* no worker has run for this database */
	WL_BGW_EXIT_RUNNING,		/* the worker is running */
	WL_BGW_EXIT_ABSENT,			/* the extension is not installed there */
	WL_BGW_EXIT_STOPPED			/* ended otherwise: an error or a signal */
} WlBgwExit;

extern void wl_bgw_shmem_init(void);
extern bool wl_bgw_attach_launcher(void);
extern void wl_bgw_take_requests(Oid *dbs, int max, int *n, bool *all);
extern pid_t wl_bgw_worker_pid(Oid dboid);
extern WlBgwExit wl_bgw_take_exit(Oid dboid);
extern bool wl_bgw_claim(Oid dboid);
extern void wl_bgw_set_absent(void);

#endif
