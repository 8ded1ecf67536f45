/*
 * main.c: workload-worker's claim loop.  It claims up to --batch workloads
 * whenever fewer than --concurrency are open, hands them to run.c, and
 * when there is nothing to claim waits for a NOTIFY (LISTEN), a freed slot
 * or a poll timeout that backs off to --poll.  It never recovers expired
 * leases itself: that is the scheduler's job (workload_recover_expired).
 *
 * The worker's files, each calling only its own layer or lower ones:
 * log -> signals -> options -> json, guard -> spawn -> command -> db ->
 * calls -> report -> run -> main.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls.h"
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
 * claim_room is how many workloads to claim now: none while --concurrency
 * claims are open (queued or running); else up to --batch, holding at most
 * the larger of --batch and --concurrency.
 */
static int
claim_room(void)
{
	int			open = wlw_run_open();
	int			cap = wlw_opt.batch > wlw_opt.concurrency ? wlw_opt.batch : wlw_opt.concurrency;

	if (open >= wlw_opt.concurrency)
		return 0;
	return cap - open < wlw_opt.batch ? cap - open : wlw_opt.batch;
}

/* fatal_refusal: a claim refusal no retry can fix (arguments, function, privilege). */
static bool
fatal_refusal(const WlwError *err)
{
	return strcmp(err->sqlstate, "WL001") == 0 || strcmp(err->sqlstate, "42883") == 0 ||
		strcmp(err->sqlstate, "42501") == 0 || strcmp(err->sqlstate, "3F000") == 0;
}

/*
 * claim claims up to room workloads and hands them to run.c.  Returns how
 * many, or -1 (*lost: the connection is gone; *fatal: see fatal_refusal).
 */
static int
claim(int room, bool *lost, bool *fatal)
{
	WlwItem    *items = NULL;
	WlwError	err;
	int			n = wlw_db_claim(room, &items, &err, lost);

	if (n > 0)
		wlw_run_take(items, n);
	free(items);
	*fatal = n < 0 && !*lost && fatal_refusal(&err);
	return n;
}

/*
 * claim_loop claims while there is room and runs what it claimed, until
 * asked to stop (then until everything held is over).  When a claim finds
 * nothing it waits for a NOTIFY, a freed slot or the poll timeout, which
 * starts at 250 ms and doubles up to --poll.  Returns the exit status.
 */
static int
claim_loop(void)
{
	int			min_ms = 250;
	int			max_ms = (int) (wlw_opt.poll_max_s * 1000);
	int			sleep_ms = min_ms;
	int64_t		claim_at = 0;
	bool		fatal = false;

	while (!(wlw_stopping() || fatal) || !wlw_run_idle())
	{
		int			room = (wlw_stopping() || fatal) ? 0 : claim_room();
		bool		notified = false;
		bool		lost = false;
		int			n = 0;

		if (room > 0 && wlw_now_ms() >= claim_at)
		{
			n = claim(room, &lost, &fatal);
			sleep_ms = n > 0 ? min_ms : (n < 0 ? max_ms : sleep_ms);
			claim_at = wlw_now_ms() + (n > 0 ? 0 : sleep_ms);
			if (n == 0 && sleep_ms < max_ms)
				sleep_ms = (sleep_ms * 2 > max_ms) ? max_ms : sleep_ms * 2;
		}
		if (!lost && wlw_run_step(room > 0 ? claim_at : INT64_MAX, &notified, &lost) > 0)
			claim_at = 0;		/* room was made: look for more at once */
		if (lost && !wlw_db_connect())
			break;
		if (lost || notified)
		{
			if (notified)
				wlw_debug("woken by NOTIFY");
			sleep_ms = min_ms;
			claim_at = 0;
		}
	}
	return fatal ? 1 : 0;
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
	wlw_log("starting: tenant %s, application %s, capabilities %s, lease %gs, batch %d, concurrency %d",
			wlw_opt.tenant, wlw_opt.application, wlw_opt.caps_literal, wlw_opt.lease_s,
			wlw_opt.batch, wlw_opt.concurrency);
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
