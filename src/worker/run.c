/*
 * run.c: the claims a worker holds and the commands it runs for them, up
 * to --concurrency at once.  A claim waits in a slot (QUEUED) until a
 * command may start, runs (RUNNING), and a successful one waits a moment
 * (COMPLETING) so completions that come close together are sent in one
 * workload_complete_many.  One poll() serves the pipes of every command,
 * the connection (NOTIFY), signals and the timers: heartbeats for every
 * held claim together (workload_heartbeat_many) every third of the lease,
 * SIGKILL after SIGTERM, the SIGTERM grace period.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "attempt.h"
#include "calls.h"
#include "command.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "report.h"
#include "run.h"
#include "signals.h"
#include "spawn.h"

/* Exit statuses of the command that pick a failure kind (see --help). */
#define WLW_EXIT_TRANSIENT	75		/* EX_TEMPFAIL -> transient_connection */
#define WLW_EXIT_TIMEOUT	124		/* timeout(1) -> timeout */

#define LINGER_MS			20		/* a completion waits this long for company */
#define BATCH_MAX_ITEMS		100		/* items per batch call */
#define BATCH_MAX_BYTES		(4 * 1024 * 1024)	/* output bytes per complete_many */
#define NO_DEADLINE			INT64_MAX

typedef enum SlotState
{
	SLOT_FREE,
	SLOT_QUEUED,				/* claimed, command not started */
	SLOT_RUNNING,				/* command started, not yet over */
	SLOT_COMPLETING				/* command succeeded; completion not yet sent */
} SlotState;

typedef enum StopReason
{
	STOP_NONE,
	STOP_CANCEL,				/* cancellation requested: kill, then confirm */
	STOP_LOST,					/* fence refused: kill, report nothing */
	STOP_INTERRUPTED			/* SIGTERM grace over: kill, fail as worker_failure */
} StopReason;

typedef struct Slot
{
	SlotState	state;
	long		seq;			/* claim order: queued claims start in it */
	WlwItem		it;
	StopReason	stop;
	WlwCommand	cmd;
	WlwEnv		env;
	char	   *output;			/* SLOT_COMPLETING: the output to send */
	int64_t		ready_at;		/* SLOT_COMPLETING: since when */
} Slot;

static Slot *slots = NULL;
static int	nslots = 0;
static long next_seq = 0;
static int64_t next_hb = 0;
static bool hb_many = true;		/* workload_heartbeat_many works here */

static int
count(SlotState state)
{
	int			n = 0;

	for (int i = 0; i < nslots; i++)
		n += slots[i].state == state;
	return n;
}

/* wlw_run_open is how many claims count against --concurrency. */
int
wlw_run_open(void)
{
	return count(SLOT_QUEUED) + count(SLOT_RUNNING);
}

/* wlw_run_idle says nothing is held: no claim, no command, no report due. */
bool
wlw_run_idle(void)
{
	return count(SLOT_FREE) == nslots;
}

/* slot_free ends a slot's hold: the command's guard cleans up, all is freed. */
static void
slot_free(Slot *s)
{
	if (s->state == SLOT_RUNNING)
		wlw_command_release(&s->cmd);
	wlw_env_free(&s->env);
	wlw_item_free(&s->it);
	free(s->output);
	memset(s, 0, sizeof(*s));
}

/*
 * wlw_run_take queues claimed items (their strings now belong to the run);
 * the array itself stays the caller's.
 */
void
wlw_run_take(WlwItem *items, int n)
{
	for (int k = 0; k < n; k++)
	{
		Slot	   *s = NULL;

		for (int i = 0; i < nslots && s == NULL; i++)
			if (slots[i].state == SLOT_FREE)
				s = &slots[i];
		if (s == NULL)
		{
			Slot	   *grown = realloc(slots, sizeof(Slot) * (nslots + 8));

			if (grown == NULL)
			{
				wlw_log("out of memory; exiting (the claims come back through lease recovery)");
				exit(1);
			}
			slots = grown;
			memset(&slots[nslots], 0, sizeof(Slot) * 8);
			s = &slots[nslots];
			nslots += 8;
		}
		s->it = items[k];
		s->state = SLOT_QUEUED;
		s->seq = next_seq++;
	}
	if (next_hb == 0)
		next_hb = wlw_now_ms() + (int64_t) (wlw_opt.lease_s * 1000 / 3);
}

/* start_slot starts a queued claim's command (or reports why not). */
static void
start_slot(Slot *s)
{
	if (wlw_attempt_start(&s->it, &s->cmd, &s->env))
		s->state = SLOT_RUNNING;
	else
		slot_free(s);
}

/*
 * start_queued starts queued claims, oldest first, while fewer than
 * --concurrency commands run.  Once the worker is stopping they are failed
 * as worker_failure instead, so they are retried soon, not after the lease.
 */
static void
start_queued(void)
{
	for (;;)
	{
		Slot	   *next = NULL;

		for (int i = 0; i < nslots; i++)
			if (slots[i].state == SLOT_QUEUED && (next == NULL || slots[i].seq < next->seq))
				next = &slots[i];
		if (next == NULL)
			return;
		if (wlw_stopping())
		{
			wlw_report_fail(&next->it, "worker_failure", "not started: the worker was stopped");
			slot_free(next);
			continue;
		}
		if (count(SLOT_RUNNING) >= wlw_opt.concurrency)
			return;
		start_slot(next);
	}
}

/* stop_slot stops a slot's command for this reason (a fence loss wins). */
static void
stop_slot(Slot *s, StopReason why)
{
	if (s->stop == STOP_NONE || why == STOP_LOST)
		s->stop = why;
	wlw_command_stop(&s->cmd);
}

/* fd3_line turns one line from fd 3 into progress or a checkpoint. */
static void
fd3_line(Slot *s, char *line, size_t len)
{
	const char *value;
	size_t		vlen;
	WlwError	err;
	WlwCall		v;

	while (len > 0 && strchr(" \t\r\n", line[len - 1]))
		line[--len] = '\0';
	if (len == 0 || s->stop == STOP_LOST)
		return;
	if (!wlw_json_valid(line, len))
	{
		wlw_log("%s: fd 3: skipped a line that is not JSON", s->it.workload_id);
		return;
	}
	if (wlw_json_progress(line, len, &value, &vlen))
	{
		free(s->it.progress);
		s->it.progress = strndup(value, vlen);
		wlw_debug("%s: progress %s", s->it.workload_id, s->it.progress);
		return;
	}
	v = wlw_db_checkpoint(&s->it, line, &err);
	if (v == WLW_OK)
		wlw_debug("%s: checkpoint %s", s->it.workload_id, line);
	else if (v == WLW_LOST)
	{
		wlw_report_lost(&s->it, "checkpoint", &err, "killing the command");
		stop_slot(s, STOP_LOST);
	}
	else
		wlw_log("%s: checkpoint refused: %s %s", s->it.workload_id, err.sqlstate, err.message);
}

/*
 * succeeded takes a command that exited 0: its stdout, if JSON, waits to
 * be sent as the output (SLOT_COMPLETING); else it fails as invalid_output.
 */
static void
succeeded(Slot *s)
{
	bool		overflow;
	const char *out = wlw_command_stdout(&s->cmd, &overflow);
	char		why[WLW_STDERR_TAIL + 700];

	if (overflow || !wlw_json_valid(out, strlen(out)))
	{
		snprintf(why, sizeof(why), "stdout is %s; stderr:\n%.*s",
				 overflow ? "larger than 4 MiB" : "not valid JSON",
				 (int) s->cmd.tail_len, s->cmd.tail);
		wlw_report_fail(&s->it, "invalid_output", why);
		slot_free(s);
		return;
	}
	s->output = strdup(out);
	wlw_command_release(&s->cmd);
	s->state = SLOT_COMPLETING;
	s->ready_at = wlw_now_ms();
}

/* failed reports a command that did not exit 0, with a kind from its exit. */
static void
failed(Slot *s)
{
	char		why[WLW_STDERR_TAIL + 200];
	int			st = s->cmd.c.status;
	int			code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;

	wlw_command_describe(&s->cmd, why, sizeof(why));
	/* /bin/sh reports a child killed by signal N as exit status 128 + N */
	if (WIFSIGNALED(st) || (code > 128 && code <= 128 + 64))
		wlw_report_fail(&s->it, "worker_failure", why);
	else if (code == WLW_EXIT_TRANSIENT)
		wlw_report_fail(&s->it, "transient_connection", why);
	else if (code == WLW_EXIT_TIMEOUT)
		wlw_report_fail(&s->it, "timeout", why);
	else
		wlw_report_fail(&s->it, "command_failed", why);
}

/* finish acts on a command that is over. */
static void
finish(Slot *s)
{
	int			st = s->cmd.c.status;

	if (s->stop == STOP_LOST || s->it.done)
		s->it.done = true;
	else if (s->stop == STOP_CANCEL)
		wlw_report_cancelled(&s->it);
	else if (s->stop == STOP_INTERRUPTED)
		wlw_report_fail(&s->it, "worker_failure",
						"the worker was stopped and the command did not finish within the grace period");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
	{
		succeeded(s);
		return;
	}
	else
		failed(s);
	slot_free(s);
}

/* serve does what a running command's pipes and guard have ready. */
static void
serve(Slot *s, int64_t now)
{
	char	   *line;
	size_t		len;

	wlw_command_service(&s->cmd);
	while (s->state == SLOT_RUNNING && (line = wlw_command_take_line(&s->cmd, &len)) != NULL)
	{
		fd3_line(s, line, len);
		free(line);
	}
	if (wlw_command_over(&s->cmd, wlw_now_ms()))
		finish(s);
	else
		wlw_command_tick(&s->cmd, now);
}

/*
 * beat_result acts on one item's heartbeat: a requested cancellation stops
 * its command (or, not started, is confirmed at once); a fence refusal
 * means it is no longer ours; refused progress is dropped and the
 * heartbeat sent again alone.
 */
static void
beat_result(Slot *s, WlwCall v, bool cancel, WlwError *err)
{
	wlw_debug("%s: heartbeat %s", s->it.workload_id, v == WLW_OK ? "ok" : err->message);
	if (v == WLW_REFUSED && s->it.progress && strcmp(err->sqlstate, "WL010") == 0)
		v = wlw_db_heartbeat(&s->it, &cancel, err);
	if (v == WLW_OK && cancel && !s->it.cancel_requested)
	{
		s->it.cancel_requested = true;
		wlw_log("%s: cancellation requested", s->it.workload_id);
		if (s->state == SLOT_RUNNING)
			stop_slot(s, STOP_CANCEL);
		else
		{
			wlw_report_cancelled(&s->it);
			slot_free(s);
		}
	}
	else if (v == WLW_LOST)
	{
		wlw_report_lost(&s->it, "heartbeat", err,
						s->state == SLOT_RUNNING ? "killing the command" : "moving on");
		if (s->state == SLOT_RUNNING)
			stop_slot(s, STOP_LOST);
		else
			slot_free(s);
	}
	else if (v != WLW_OK)
		wlw_log("%s: heartbeat failed: %s %s", s->it.workload_id, err->sqlstate, err->message);
}

/*
 * beat_some renews these leases in one workload_heartbeat_many, or one by
 * one (workload_heartbeat) where that call is refused as a whole (an older
 * server: then never again, or a limit).
 */
static void
beat_some(WlwBatchItem *b, int n)
{
	WlwError	err;
	WlwCall		v = hb_many ? wlw_db_heartbeat_many(b, n, &err) : WLW_REFUSED;

	if (v == WLW_OK)
	{
		if (n > 1)
			wlw_debug("heartbeat: %d leases extended together", n);
		return;
	}
	if (hb_many)
	{
		wlw_log("workload_heartbeat_many refused (%s %s); heartbeating one by one",
				err.sqlstate, err.message);
		hb_many = strcmp(err.sqlstate, "42883") != 0;
	}
	for (int i = 0; i < n; i++)
		b[i].v = wlw_db_heartbeat(b[i].it, &b[i].cancel, &b[i].err);
}

/* heartbeat_all renews every held claim (queued or running, not lost). */
static void
heartbeat_all(void)
{
	WlwBatchItem *b = calloc(nslots + 1, sizeof(WlwBatchItem));
	Slot	  **who = calloc(nslots + 1, sizeof(Slot *));
	int			n = 0;

	for (int i = 0; b && who && i < nslots; i++)
		if ((slots[i].state == SLOT_QUEUED || slots[i].state == SLOT_RUNNING) &&
			slots[i].stop != STOP_LOST)
		{
			who[n] = &slots[i];
			b[n++].it = &slots[i].it;
		}
	for (int k = 0; k < n; k += BATCH_MAX_ITEMS)
		beat_some(&b[k], n - k < BATCH_MAX_ITEMS ? n - k : BATCH_MAX_ITEMS);
	for (int i = 0; i < n; i++)
		beat_result(who[i], b[i].v, b[i].cancel, &b[i].err);
	free(b);
	free(who);
}

/*
 * complete_some sends these completions in one workload_complete_many (each
 * item answered on its own), or one by one where that call is refused as a
 * whole (its size, an output the server cannot parse).
 */
static void
complete_some(Slot **who, int n)
{
	WlwBatchItem *b = calloc(n, sizeof(WlwBatchItem));
	WlwError	err;
	WlwCall		v = WLW_REFUSED;

	for (int i = 0; b && i < n; i++)
	{
		b[i].it = &who[i]->it;
		b[i].output = who[i]->output;
	}
	if (b)
		v = wlw_db_complete_many(b, n, &err);
	if (v == WLW_OK && n > 1)
		wlw_debug("%d completions sent together", n);
	else if (v == WLW_REFUSED)
		wlw_log("workload_complete_many refused (%s %s); completing one by one", err.sqlstate,
				err.message);
	for (int i = 0; i < n; i++)
	{
		if (v == WLW_OK)
			wlw_report_completed(&who[i]->it, b[i].v, &b[i].err, b[i].unmet);
		else if (v == WLW_NO_CONNECTION)
			wlw_report_completed(&who[i]->it, v, &err, false);
		else
			wlw_report_complete_one(&who[i]->it, who[i]->output);
		slot_free(who[i]);
	}
	free(b);
}

/*
 * flush_completions sends the waiting completions, in batches of at most
 * BATCH_MAX_ITEMS and BATCH_MAX_BYTES of output: when asked to, when the
 * oldest has waited LINGER_MS, or when no command runs that could join.
 */
static void
flush_completions(bool force, int64_t now)
{
	Slot	  **who = calloc(nslots + 1, sizeof(Slot *));
	int			n = 0;
	size_t		bytes = 0;
	bool		due = force || count(SLOT_RUNNING) == 0;

	for (int i = 0; who && i < nslots; i++)
		if (slots[i].state == SLOT_COMPLETING)
		{
			due = due || now >= slots[i].ready_at + LINGER_MS;
			who[n++] = &slots[i];
		}
	for (int k = 0; due && k < n;)
	{
		int			m = 0;

		for (bytes = 0; k + m < n && m < BATCH_MAX_ITEMS &&
			 (m == 0 || bytes + strlen(who[k + m]->output) <= BATCH_MAX_BYTES); m++)
			bytes += strlen(who[k + m]->output);
		complete_some(&who[k], m);
		k += m;
	}
	free(who);
}

/* next_deadline is the earliest time-driven thing to do. */
static int64_t
next_deadline(void)
{
	int64_t		t = (wlw_run_idle() || next_hb == 0) ? NO_DEADLINE : next_hb;

	for (int i = 0; i < nslots; i++)
	{
		Slot	   *s = &slots[i];
		int64_t		d = NO_DEADLINE;

		if (s->state == SLOT_RUNNING)
		{
			d = wlw_command_deadline(&s->cmd);
			if (wlw_stopping() && s->stop == STOP_NONE && wlw_drain_deadline() < d)
				d = wlw_drain_deadline();
		}
		else if (s->state == SLOT_COMPLETING)
			d = s->ready_at + LINGER_MS;
		if (d < t)
			t = d;
	}
	return t;
}

/*
 * wait_events polls the signal pipe, the connection and every running
 * command until something is ready or wake_at (or a deadline of ours);
 * returns at once when a NOTIFY already waits to be reported.
 */
static void
wait_events(int64_t wake_at, bool *conn_lost)
{
	struct pollfd *fds = calloc(2 + (size_t) nslots * WLW_COMMAND_FDS, sizeof(struct pollfd));
	int			n = 0;
	int			db = -1;
	int64_t		t = next_deadline();
	int64_t		now = wlw_now_ms();

	if (fds == NULL)
		return;
	fds[n++] = (struct pollfd) {wlw_signal_fd(), POLLIN, 0};
	if (wlw_db_socket() >= 0)
	{
		db = n;
		fds[n++] = (struct pollfd) {wlw_db_socket(), POLLIN, 0};
	}
	for (int i = 0; i < nslots; i++)
		if (slots[i].state == SLOT_RUNNING)
			n += wlw_command_pollfds(&slots[i].cmd, &fds[n]);
	t = (wake_at < t ? wake_at : t) - now;
	if (wlw_db_notified(false))
		t = 0;
	poll(fds, n, t < 0 ? 0 : (t > 1000 ? 1000 : (int) t));
	wlw_signals_drain();
	wlw_spawn_reap();
	if (db >= 0 && fds[db].revents && !wlw_db_consume())
		*conn_lost = true;
	free(fds);
}

/*
 * wlw_run_step is one pass of the worker's loop: start what may start,
 * wait (until wake_at at the latest) and serve what is ready, report what
 * is over, heartbeat when due, and enforce the SIGTERM grace period.
 * *notified: a NOTIFY arrived; *conn_lost: the idle connection dropped.
 * Returns how many claims stopped counting against --concurrency.
 */
int
wlw_run_step(int64_t wake_at, bool *notified, bool *conn_lost)
{
	int			open = wlw_run_open();
	int64_t		now;

	start_queued();
	wait_events(wake_at, conn_lost);
	now = wlw_now_ms();
	for (int i = 0; i < nslots; i++)
		if (slots[i].state == SLOT_RUNNING)
			serve(&slots[i], now);
	/* report what finished before a due heartbeat learns it is lost */
	flush_completions(wlw_stopping() || now >= next_hb, now);
	if (next_hb && now >= next_hb)
	{
		heartbeat_all();
		next_hb = wlw_now_ms() + (int64_t) (wlw_opt.lease_s * 1000 / 3);
	}
	for (int i = 0; wlw_stopping() && now >= wlw_drain_deadline() && i < nslots; i++)
		if (slots[i].state == SLOT_RUNNING && slots[i].stop == STOP_NONE)
		{
			wlw_log("%s: grace period over; killing the command", slots[i].it.workload_id);
			stop_slot(&slots[i], STOP_INTERRUPTED);
		}
	start_queued();
	*notified = wlw_db_notified(true);
	wlw_set_busy(!wlw_run_idle());
	if (wlw_run_idle())
		next_hb = 0;
	return open > wlw_run_open() ? open - wlw_run_open() : 0;
}
