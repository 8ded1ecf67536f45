/*
 * run.h: the claims the worker holds and the commands it runs for them.
 */
#ifndef WLW_RUN_H
#define WLW_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"

extern void wlw_run_take(WlwItem *items, int n);
extern int	wlw_run_open(void);
extern bool wlw_run_idle(void);
extern int	wlw_run_step(int64_t wake_at, bool *notified, bool *conn_lost);

#endif							/* WLW_RUN_H */
