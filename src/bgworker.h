/*
 * bgworker.h: the background workers that run workload_tick: one launcher
 * (bgw_launcher.c) and one tick worker per database where the extension is
 * installed (bgworker.c).  What they share with each other and with the
 * backends that create extensions and databases: bgw_shmem.h.
 */
#ifndef WL_BGWORKER_H
#define WL_BGWORKER_H

#include "postgres.h"

/* bgworker.c */
extern void wl_bgworker_init(void);
extern PGDLLEXPORT void wl_bgworker_main(Datum arg);

/* bgw_launcher.c */
extern PGDLLEXPORT void wl_bgw_launcher_main(Datum arg);

#endif
