/*
 * signals.h: how a stop request (SIGTERM, SIGINT) and a child's exit
 * (SIGCHLD) reach the worker's poll loops: a self-pipe, a stop counter and
 * the end of the drain's grace period.  Below the options: the grace is
 * handed in.
 */
#ifndef WLW_SIGNALS_H
#define WLW_SIGNALS_H

#include <stdbool.h>
#include <stdint.h>

extern void wlw_signals_setup(int64_t grace_ms);
extern int	wlw_signal_fd(void);
extern void wlw_signals_drain(void);
extern bool wlw_stopping(void);
extern int64_t wlw_drain_deadline(void);
extern void wlw_set_busy(bool busy);
extern bool wlw_should_give_up(void);

#endif							/* WLW_SIGNALS_H */
