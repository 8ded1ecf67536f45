/*
 * log.c: the worker's clock (monotonic milliseconds, the only one its
 * timers read) and its log: one timestamped line per event on stderr.
 * The bottom layer: it calls nothing else of the worker.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

static const char *log_id = "-";
static bool log_verbose = false;

/* wlw_now_ms is a monotonic clock in milliseconds (async-signal-safe). */
int64_t
wlw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wlw_wall_ms is the wall clock in milliseconds since the Unix epoch. */
int64_t
wlw_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wlw_log_setup names the worker in every line and sets --verbose. */
void
wlw_log_setup(const char *worker_id, bool verbose)
{
	log_id = worker_id ? worker_id : "-";
	log_verbose = verbose;
}

/* wlw_log_verbose says whether debug lines are written. */
bool
wlw_log_verbose(void)
{
	return log_verbose;
}

static void vlog(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void
vlog(const char *fmt, va_list ap)
{
	char		stamp[40];
	struct timespec ts;
	struct tm	tm;
	char		line[2048];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s.%03ldZ workload-worker[%s] %s\n", stamp, ts.tv_nsec / 1000000,
			log_id, line);
	fflush(stderr);
}

/* wlw_log writes one timestamped line to stderr. */
void
wlw_log(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

/* wlw_debug logs only with --verbose. */
void
wlw_debug(const char *fmt,...)
{
	va_list		ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}
