/*
 * main.c: workload-worker's claim loop.  It claims up to --batch workloads,
 * hands them to run.c, and when there is nothing to claim sleeps on the
 * connection's socket (LISTEN) with a poll timeout that backs off to
 * --poll.  It never recovers expired leases itself: that is the
 * scheduler's job (workload_recover_expired).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "run.h"
#include "signals.h"
#include "spawn.h"

/* keep_std_fds_open: so no pipe we create can land on 0, 1 or 2. */
static void
keep_std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++)
	{
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			exit(1);
	}
}

/*
 * idle_wait sleeps until a NOTIFY, a signal or the timeout.  It returns
 * false when the connection was lost while waiting.
 */
static bool
idle_wait(int timeout_ms, bool *notified)
{
	struct pollfd fds[2];

	fds[0].fd = wlw_signal_fd();
	fds[0].events = POLLIN;
	fds[1].fd = wlw_db_socket();
	fds[1].events = POLLIN;
	if (poll(fds, 2, timeout_ms) < 0 && errno != EINTR)
		return true;
	wlw_signals_drain();
	if (fds[1].revents)
		return wlw_db_consume(notified);
	return true;
}

/*
 * claim_loop claims and runs until asked to stop.  Returns the exit status.
 */
static int
claim_loop(void)
{
	int			min_ms = 250;
	int			max_ms = (int) (wlw_opt.poll_max_s * 1000);
	int			sleep_ms = min_ms;
	bool		notified = false;

	while (!wlw_stopping())
	{
		WlwItem    *items = NULL;
		WlwError	err;
		bool		conn_lost = false;
		int			n;

		n = wlw_db_claim(&items, &err, &conn_lost);
		if (n > 0)
		{
			wlw_run_batch(items, n);
			wlw_items_free(items, n);
			sleep_ms = min_ms;
			continue;
		}
		if (conn_lost)
		{
			if (!wlw_db_connect())
				break;
			continue;
		}
		if (n < 0)
		{
			/* a refusal no retry can fix: bad arguments, missing function, no privilege */
			if (strcmp(err.sqlstate, "WL001") == 0 || strcmp(err.sqlstate, "42883") == 0 ||
				strcmp(err.sqlstate, "42501") == 0 || strcmp(err.sqlstate, "3F000") == 0)
				return 1;
			sleep_ms = max_ms;
		}
		notified = false;
		if (!idle_wait(sleep_ms, &notified))
		{
			if (!wlw_db_connect())
				break;
			sleep_ms = min_ms;
			continue;
		}
		if (notified)
		{
			wlw_debug("woken by NOTIFY");
			sleep_ms = min_ms;
		}
		else if (sleep_ms < max_ms)
			sleep_ms = (sleep_ms * 2 > max_ms) ? max_ms : sleep_ms * 2;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	int			rc;

	keep_std_fds_open();
	wlw_options_parse(argc, argv);
	if (wlw_opt.expected_snapshots &&
		!wlw_json_valid(wlw_opt.expected_snapshots, strlen(wlw_opt.expected_snapshots)))
	{
		fprintf(stderr, "workload-worker: --expected-snapshots must be JSON\n");
		return 2;
	}
	wlw_log_setup(wlw_opt.worker_id, wlw_opt.verbose);
	wlw_signals_setup((int64_t) (wlw_opt.grace_s * 1000));
	wlw_spawn_setup();
	wlw_log("starting: tenant %s, application %s, capabilities %s, lease %gs, batch %d",
			wlw_opt.tenant, wlw_opt.application, wlw_opt.caps_literal, wlw_opt.lease_s,
			wlw_opt.batch);
	if (!wlw_db_connect())
	{
		wlw_log("stopped before connecting");
		return 0;
	}
	rc = claim_loop();
	wlw_db_close();
	wlw_log(rc == 0 ? "stopped" : "stopped: the database refused the claim (see above)");
	return rc;
}
