/*
 * run.h: running the commands of claimed workloads and reporting how
 * each ended.
 */
#ifndef WLW_RUN_H
#define WLW_RUN_H

#include "db.h"

extern void wlw_run_batch(WlwItem *items, int n);

#endif							/* WLW_RUN_H */
