/*
 * bgworker.h: the background workers that run workload_tick: one launcher
 * (bgw_launcher.c) and one tick worker per database where the extension is
 * installed (bgworker.c), and the shared state between them and the
 * backends that create extensions and databases (bgw_shmem.c).
 */
#ifndef WL_BGWORKER_H
#define WL_BGWORKER_H

#include "postgres.h"

/* How a database's tick worker last ended, as the launcher reads it. */
typedef enum WlBgwExit
{
	WL_BGW_EXIT_NONE = 0,		/* no worker has run for this database */
	WL_BGW_EXIT_RUNNING,		/* the worker is running */
	WL_BGW_EXIT_ABSENT,			/* the extension is not installed there */
	WL_BGW_EXIT_STOPPED			/* ended otherwise: an error or a signal */
} WlBgwExit;

/* bgworker.c */
extern void wl_bgworker_init(void);
extern PGDLLEXPORT void wl_bgworker_main(Datum arg);

/* bgw_launcher.c */
extern PGDLLEXPORT void wl_bgw_launcher_main(Datum arg);

/* bgw_shmem.c */
extern void wl_bgw_shmem_init(void);
extern bool wl_bgw_attach_launcher(void);
extern void wl_bgw_take_requests(Oid *dbs, int max, int *n, bool *all);
extern pid_t wl_bgw_worker_pid(Oid dboid);
extern WlBgwExit wl_bgw_take_exit(Oid dboid);
extern bool wl_bgw_claim(Oid dboid);
extern void wl_bgw_set_absent(void);

#endif
