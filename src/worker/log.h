/*
 * log.h: workload-worker's base layer: the one clock and the log.  It
 * knows nothing of options, signals or the database.
 */
#ifndef WLW_LOG_H
#define WLW_LOG_H

#include <stdbool.h>
#include <stdint.h>

extern int64_t wlw_now_ms(void);
extern int64_t wlw_wall_ms(void);
extern void wlw_log_setup(const char *worker_id, bool verbose);
extern bool wlw_log_verbose(void);
extern void wlw_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern void wlw_debug(const char *fmt,...) __attribute__((format(printf, 1, 2)));

#endif							/* WLW_LOG_H */
