/*
 * run.c: runs the command for each claimed workload, one at a time, in its
 * own process group: input on stdin, output from stdout, stderr passed
 * through (its tail kept as error text), JSON lines on fd 3 turned into
 * checkpoints or progress.  One poll() loop serves the pipes, the
 * heartbeat timer (every third of the lease, for every claimed workload
 * not yet finished), cancellation, and the SIGTERM grace period.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "run.h"
#include "signals.h"
#include "spawn.h"

/* Exit statuses of the command that pick a failure kind (see --help). */
#define WLW_EXIT_TRANSIENT	75		/* EX_TEMPFAIL -> transient_connection */
#define WLW_EXIT_TIMEOUT	124		/* timeout(1) -> timeout */

#define WLW_STDERR_TAIL		4096	/* bytes of stderr kept as the error text */
#define WLW_MAX_STDOUT		(4 * 1024 * 1024)
#define WLW_MAX_FD3_LINE	(2 * 1024 * 1024)
#define WLW_KILL_AFTER_MS	2000	/* SIGTERM, then SIGKILL this much later */

typedef enum StopReason
{
	STOP_NONE,
	STOP_CANCEL,				/* cancellation requested: kill, then confirm */
	STOP_LOST,					/* fence refused: kill, report nothing */
	STOP_INTERRUPTED			/* SIGTERM grace over: kill, fail as worker_failure */
} StopReason;

typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		overflow;
} Buf;

typedef struct Run
{
	WlwItem    *items;
	int			n;
	int			cur;
	WlwItem    *it;
	int64_t    *next_hb;
	WlwChild	c;				/* the command, through its guard */
	char	   *input;
	size_t		input_len;
	size_t		input_off;
	Buf			out;
	Buf			line;
	char		tail[WLW_STDERR_TAIL];
	size_t		tail_len;
	int64_t		exited_at;
	StopReason	stop;
	int64_t		kill_at;
} Run;

static bool
buf_add(Buf *b, const char *data, size_t len, size_t max)
{
	if (b->overflow || b->len + len > max)
	{
		b->overflow = true;
		return false;
	}
	if (b->len + len + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap : 4096;
		char	   *p;

		while (cap < b->len + len + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (p == NULL)
		{
			b->overflow = true;
			return false;
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return true;
}

/* stop_command asks the command's process group to stop; SIGKILL follows. */
static void
stop_command(Run *r, StopReason why)
{
	if (r->stop == STOP_NONE || why == STOP_LOST)
		r->stop = why;
	if (r->c.exited || r->kill_at)
		return;
	wlw_child_signal(&r->c, SIGTERM);
	r->kill_at = wlw_now_ms() + WLW_KILL_AFTER_MS;
}

/*
 * refused_by_fence logs that the fence refused a call (the workload is no
 * longer ours) and stops the command if it is the running one.
 */
static void
refused_by_fence(Run *r, WlwItem *it, const char *call, WlwError *err)
{
	bool		running = (r && it == r->it && !r->c.exited);

	wlw_log("%s: %s refused by the fence (%s: %s); %s", it->workload_id, call,
			err->sqlstate, err->message,
			running ? "killing the command" : "moving on");
	if (r && it == r->it)
		stop_command(r, STOP_LOST);
	else
		it->done = true;
}

/* confirm_cancel ends an attempt whose cancellation was requested. */
static void
confirm_cancel(WlwItem *it)
{
	WlwError	err;
	WlwCall		v = wlw_db_confirm_cancel(it, &err);

	if (v == WLW_OK)
		wlw_log("%s: cancelled (confirmed)", it->workload_id);
	else
		wlw_log("%s: could not confirm the cancellation: %s %s", it->workload_id,
				err.sqlstate, err.message);
	it->done = true;
}

/*
 * fail_item fails the attempt with this kind.  Error text the server
 * refuses as a secret is replaced by a note saying so.
 */
static void
fail_item(WlwItem *it, const char *kind, const char *error)
{
	WlwError	err;
	char	   *state = NULL;
	char	   *text = strdup(error);
	WlwCall		v;

	wlw_utf8_sanitize(text, strlen(text));
	v = wlw_db_fail(it, kind, text, &state, &err);
	if (v == WLW_REFUSED && strcmp(err.sqlstate, "WL010") == 0)
		v = wlw_db_fail(it, kind, "error text withheld: the server refused it as containing a secret",
						&state, &err);
	free(text);
	if (v == WLW_OK)
		wlw_log("%s: failed (%s), now %s", it->workload_id, kind, state ? state : "?");
	else if (v == WLW_REFUSED && strcmp(err.sqlstate, "WL009") == 0)
	{
		it->done = false;
		confirm_cancel(it);
	}
	else if (v == WLW_LOST)
		refused_by_fence(NULL, it, "failure report", &err);
	else
		wlw_log("%s: could not report the failure: %s %s", it->workload_id, err.sqlstate,
				err.message);
	free(state);
	it->done = true;
}

/* heartbeat_all renews every claimed workload of the batch not yet done. */
static void
heartbeat_all(Run *r)
{
	for (int i = r->cur; i < r->n; i++)
	{
		WlwItem    *it = &r->items[i];
		WlwError	err;
		bool		cancel = false;
		WlwCall		v;

		if (it->done || (i == r->cur && r->stop == STOP_LOST))
			continue;
		v = wlw_db_heartbeat(it, &cancel, &err);
		wlw_debug("%s: heartbeat %s", it->workload_id, v == WLW_OK ? "ok" : err.message);
		if (v == WLW_OK && cancel && !it->cancel_requested)
		{
			it->cancel_requested = true;
			wlw_log("%s: cancellation requested", it->workload_id);
			if (i == r->cur)
				stop_command(r, STOP_CANCEL);
			else
				confirm_cancel(it);
		}
		else if (v == WLW_LOST)
			refused_by_fence(r, it, "heartbeat", &err);
		else if (v != WLW_OK)
			wlw_log("%s: heartbeat failed: %s %s", it->workload_id, err.sqlstate, err.message);
	}
}

/* fd3_line turns one line from fd 3 into progress or a checkpoint. */
static void
fd3_line(Run *r, char *line, size_t len)
{
	const char *value;
	size_t		vlen;
	WlwError	err;
	WlwCall		v;

	while (len > 0 && strchr(" \t\r\n", line[len - 1]))
		line[--len] = '\0';
	if (len == 0 || r->stop == STOP_LOST || r->it->done)
		return;
	if (!wlw_json_valid(line, len))
	{
		wlw_log("%s: fd 3: skipped a line that is not JSON", r->it->workload_id);
		return;
	}
	if (wlw_json_progress(line, len, &value, &vlen))
	{
		free(r->it->progress);
		r->it->progress = strndup(value, vlen);
		wlw_debug("%s: progress %s", r->it->workload_id, r->it->progress);
		return;
	}
	v = wlw_db_checkpoint(r->it, line, &err);
	if (v == WLW_OK)
		wlw_debug("%s: checkpoint %s", r->it->workload_id, line);
	else if (v == WLW_LOST)
		refused_by_fence(r, r->it, "checkpoint", &err);
	else
		wlw_log("%s: checkpoint refused: %s %s", r->it->workload_id, err.sqlstate, err.message);
}

static void
split_fd3(Run *r, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++)
	{
		if (data[i] != '\n')
		{
			buf_add(&r->line, data + i, 1, WLW_MAX_FD3_LINE);
			continue;
		}
		if (r->line.overflow)
			wlw_log("%s: fd 3: skipped a line longer than %d bytes", r->it->workload_id,
					WLW_MAX_FD3_LINE);
		else if (r->line.len > 0)
			fd3_line(r, r->line.data, r->line.len);
		r->line.len = 0;
		r->line.overflow = false;
	}
}

static void
keep_tail(Run *r, const char *data, size_t len)
{
	if (len >= WLW_STDERR_TAIL)
	{
		memcpy(r->tail, data + len - WLW_STDERR_TAIL, WLW_STDERR_TAIL);
		r->tail_len = WLW_STDERR_TAIL;
		return;
	}
	if (r->tail_len + len > WLW_STDERR_TAIL)
	{
		size_t		drop = r->tail_len + len - WLW_STDERR_TAIL;

		memmove(r->tail, r->tail + drop, r->tail_len - drop);
		r->tail_len -= drop;
	}
	memcpy(r->tail + r->tail_len, data, len);
	r->tail_len += len;
}

/* read_pipe reads what is there; closes the descriptor at EOF. */
static void
read_pipe(Run *r, int *fd)
{
	char		buf[65536];

	while (*fd >= 0)
	{
		ssize_t		got = read(*fd, buf, sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return;
		if (got <= 0)
		{
			if (fd == &r->c.fd_ck && r->line.len > 0)
				split_fd3(r, "\n", 1);	/* a last line without newline */
			wlw_close_fd(fd);
			return;
		}
		if (fd == &r->c.fd_out)
			buf_add(&r->out, buf, got, WLW_MAX_STDOUT);
		else if (fd == &r->c.fd_err)
		{
			if (write(STDERR_FILENO, buf, got) < 0)
			{
				/* our own stderr is gone; the tail is still kept */
			}
			keep_tail(r, buf, got);
		}
		else
			split_fd3(r, buf, got);
	}
}

static void
write_input(Run *r)
{
	while (r->c.fd_in >= 0 && r->input_off < r->input_len)
	{
		ssize_t		put = write(r->c.fd_in, r->input + r->input_off, r->input_len - r->input_off);

		if (put < 0 && errno == EINTR)
			continue;
		if (put < 0 && errno == EAGAIN)
			return;
		if (put < 0)
			break;				/* EPIPE: the command does not read its input */
		r->input_off += put;
	}
	wlw_close_fd(&r->c.fd_in);
}

static int
poll_timeout(Run *r, int64_t now)
{
	int64_t		t = *r->next_hb;

	if (r->kill_at && r->kill_at < t)
		t = r->kill_at;
	if (wlw_stopping() && r->stop == STOP_NONE && wlw_drain_deadline() < t)
		t = wlw_drain_deadline();
	if (r->c.exited && r->exited_at + 2000 < t)
		t = r->exited_at + 2000;
	t -= now;
	return t < 0 ? 0 : (t > 1000 ? 1000 : (int) t);
}

static void
wait_events(Run *r)
{
	struct pollfd fds[6];
	int			nfds = 0;

	fds[nfds++] = (struct pollfd) {wlw_signal_fd(), POLLIN, 0};
	if (r->c.fd_ctl >= 0)
		fds[nfds++] = (struct pollfd) {r->c.fd_ctl, POLLIN, 0};
	if (r->c.fd_in >= 0)
		fds[nfds++] = (struct pollfd) {r->c.fd_in, POLLOUT, 0};
	if (r->c.fd_out >= 0)
		fds[nfds++] = (struct pollfd) {r->c.fd_out, POLLIN, 0};
	if (r->c.fd_err >= 0)
		fds[nfds++] = (struct pollfd) {r->c.fd_err, POLLIN, 0};
	if (r->c.fd_ck >= 0)
		fds[nfds++] = (struct pollfd) {r->c.fd_ck, POLLIN, 0};
	poll(fds, nfds, poll_timeout(r, wlw_now_ms()));
	wlw_signals_drain();
	/* read everything readable, whatever poll said: EINTR leaves revents unset */
	write_input(r);
	read_pipe(r, &r->c.fd_out);
	read_pipe(r, &r->c.fd_err);
	read_pipe(r, &r->c.fd_ck);
	wlw_spawn_reap();
	if (!r->c.exited)
	{
		wlw_child_read(&r->c);
		if (r->c.exited)
			r->exited_at = wlw_now_ms();
	}
}

/*
 * supervise runs the loop until the command has exited and its pipes are
 * drained (or, 2 s after it exited, something it left behind still holds
 * them open).  The command's own exit is handled before a due heartbeat,
 * so a worker that was paused reports what it has before it learns the
 * workload is no longer its own.
 */
static void
supervise(Run *r)
{
	int64_t		hb_ms = (int64_t) (wlw_opt.lease_s * 1000 / 3);

	for (;;)
	{
		int64_t		now;

		wait_events(r);
		now = wlw_now_ms();
		if (r->c.exited && r->c.fd_out < 0 && r->c.fd_err < 0 && r->c.fd_ck < 0)
			break;
		if (r->c.exited && now >= r->exited_at + 2000)
			break;
		if (now >= *r->next_hb)
		{
			heartbeat_all(r);
			*r->next_hb = wlw_now_ms() + hb_ms;
		}
		if (wlw_stopping() && r->stop == STOP_NONE && now >= wlw_drain_deadline())
		{
			wlw_log("%s: grace period over; killing the command", r->it->workload_id);
			stop_command(r, STOP_INTERRUPTED);
		}
		if (r->kill_at && now >= r->kill_at)
		{
			wlw_child_signal(&r->c, SIGKILL);
			r->kill_at = 0;
		}
	}
}

static void
describe_exit(Run *r, char *buf, size_t size)
{
	int			n;

	if (WIFSIGNALED(r->c.status))
		n = snprintf(buf, size, "command killed by signal %d (%s)", WTERMSIG(r->c.status),
					 strsignal(WTERMSIG(r->c.status)));
	else if (WEXITSTATUS(r->c.status) > 128 && WEXITSTATUS(r->c.status) <= 128 + 64)
		n = snprintf(buf, size, "command exited with status %d (killed by signal %d, %s)",
					 WEXITSTATUS(r->c.status), WEXITSTATUS(r->c.status) - 128,
					 strsignal(WEXITSTATUS(r->c.status) - 128));
	else
		n = snprintf(buf, size, "command exited with status %d", WEXITSTATUS(r->c.status));
	if (r->tail_len > 0 && n > 0 && (size_t) n + 2 < size)
		snprintf(buf + n, size - n, "; stderr:\n%.*s", (int) r->tail_len, r->tail);
}

/* complete_output completes with stdout, or fails it as invalid_output. */
static void
complete_output(Run *r)
{
	const char *out = r->out.data ? r->out.data : "";
	size_t		len = r->out.len;
	WlwError	err;
	WlwCall		v;
	char		why[WLW_STDERR_TAIL + 700];

	while (len > 0 && strchr(" \t\r\n", out[len - 1]))
		r->out.data[--len] = '\0';
	while (len > 0 && strchr(" \t\r\n", *out))
		out++, len--;
	if (len == 0)
		out = "{}";
	if (r->out.overflow || !wlw_json_valid(out, strlen(out)))
	{
		snprintf(why, sizeof(why), "stdout is %s; stderr:\n%.*s",
				 r->out.overflow ? "larger than 4 MiB" : "not valid JSON",
				 (int) r->tail_len, r->tail);
		fail_item(r->it, "invalid_output", why);
		return;
	}
	v = wlw_db_complete(r->it, out, &err);
	if (v == WLW_OK)
		wlw_log("%s: succeeded", r->it->workload_id);
	else if (v == WLW_LOST)
		refused_by_fence(NULL, r->it, "completion", &err);
	else if (v == WLW_REFUSED && strcmp(err.sqlstate, "WL009") == 0)
		confirm_cancel(r->it);	/* cancellation won */
	else if (v == WLW_REFUSED)
	{
		snprintf(why, sizeof(why), "output refused: %s %s", err.sqlstate, err.message);
		fail_item(r->it, "invalid_output", why);
	}
	else
		wlw_log("%s: could not complete (%s); the lease will run out and the workload be retried",
				r->it->workload_id, err.message);
	r->it->done = true;
}

/* finish reports the attempt's outcome. */
static void
finish(Run *r)
{
	char		why[WLW_STDERR_TAIL + 200];
	int			code;

	if (r->it->done || r->stop == STOP_LOST)
	{
		r->it->done = true;
		return;
	}
	if (r->stop == STOP_CANCEL)
	{
		confirm_cancel(r->it);
		return;
	}
	if (r->stop == STOP_INTERRUPTED)
	{
		fail_item(r->it, "worker_failure",
				  "the worker was stopped and the command did not finish within the grace period");
		return;
	}
	if (WIFEXITED(r->c.status) && WEXITSTATUS(r->c.status) == 0)
	{
		complete_output(r);
		return;
	}
	describe_exit(r, why, sizeof(why));
	code = WIFEXITED(r->c.status) ? WEXITSTATUS(r->c.status) : -1;
	/* /bin/sh reports a child killed by signal N as exit status 128 + N */
	if (WIFSIGNALED(r->c.status) || (code > 128 && code <= 128 + 64))
		fail_item(r->it, "worker_failure", why);
	else if (code == WLW_EXIT_TRANSIENT)
		fail_item(r->it, "transient_connection", why);
	else if (code == WLW_EXIT_TIMEOUT)
		fail_item(r->it, "timeout", why);
	else
		fail_item(r->it, "command_failed", why);
}

/* cleanup lets the guard kill what is left of the command, and frees. */
static void
cleanup(Run *r)
{
	wlw_child_release(&r->c);
	free(r->input);
	free(r->out.data);
	free(r->line.data);
}

static bool
env_int(WlwEnv *env, const char *name, long long v)
{
	char		s[32];

	snprintf(s, sizeof(s), "%lld", v);
	return wlw_env_set(env, name, s);
}

/*
 * command_env builds the command's environment: the base (PATH, --env) and
 * the WORKLOAD_* variables, including what the run resumes from.
 */
static bool
command_env(const WlwItem *it, const WlwStart *st, WlwEnv *env)
{
	bool		ok = wlw_env_base(env);

	ok = ok && wlw_env_set(env, "WORKLOAD_ID", it->workload_id);
	ok = ok && env_int(env, "WORKLOAD_ATTEMPT", it->attempt);
	ok = ok && env_int(env, "WORKLOAD_CHECKPOINT_SEQUENCE", st->checkpoint_sequence);
	ok = ok && wlw_env_set(env, "WORKLOAD_DEFINITION_ID",
						   it->definition_id ? it->definition_id : "");
	ok = ok && wlw_env_set(env, "WORKLOAD_DEFINITION_REVISION",
						   it->definition_revision ? it->definition_revision : "");
	ok = ok && wlw_env_set(env, "WORKLOAD_TENANT_ID", wlw_opt.tenant);
	ok = ok && wlw_env_set(env, "WORKLOAD_APPLICATION_ID", wlw_opt.application);
	ok = ok && wlw_env_set(env, "WORKLOAD_WORKER_ID", wlw_opt.worker_id);
	if (st->context)
		ok = ok && wlw_env_set(env, "WORKLOAD_CONTEXT", st->context);
	if (st->checkpoint)
		ok = ok && wlw_env_set_large(env, "WORKLOAD_CHECKPOINT", "WORKLOAD_CHECKPOINT_FILE",
									 st->checkpoint);
	if (st->wake)
		ok = ok && wlw_env_set_large(env, "WORKLOAD_WAKE", "WORKLOAD_WAKE_FILE", st->wake);
	return ok;
}

/*
 * start_refused handles a refusal of wlw_db_start: the run must not
 * start.  Authority that no longer holds, a checkpoint that does not verify
 * and governing snapshots that do not match are permanent (kinds
 * authorization_denied, checkpoint_tampered, snapshot_mismatch: not in the
 * default retry_on); anything else is a worker_failure.
 */
static void
start_refused(WlwItem *it, WlwCall v, WlwError *err)
{
	static const char *const kinds[][2] = {
		{"WL017", "authorization_denied"},
		{"WL013", "checkpoint_tampered"},
		{"WL014", "snapshot_mismatch"},
	};
	const char *kind = "worker_failure";
	char		why[1100];

	if (v == WLW_LOST)
	{
		refused_by_fence(NULL, it, "execution context", err);
		return;
	}
	if (v == WLW_NO_CONNECTION)
	{
		wlw_log("%s: could not start (%s); the lease will run out and the workload be retried",
				it->workload_id, err->message);
		it->done = true;
		return;
	}
	for (int i = 0; i < 3; i++)
		if (strcmp(err->sqlstate, kinds[i][0]) == 0)
			kind = kinds[i][1];
	snprintf(why, sizeof(why), "not run: %s%s%s", err->message, err->detail[0] ? ". " : "",
			 err->detail);
	wlw_log("%s: %s", it->workload_id, why);
	fail_item(it, kind, why);
}

/* run_one runs the command for items[cur] and reports how it ended. */
static void
run_one(WlwItem *items, int n, int cur, int64_t *next_hb)
{
	Run			r;
	WlwEnv		env;
	WlwStart	st;
	WlwError	err;
	WlwCall		v;
	const char *input;

	memset(&r, 0, sizeof(r));
	memset(&env, 0, sizeof(env));
	r.items = items;
	r.n = n;
	r.cur = cur;
	r.it = &items[cur];
	r.next_hb = next_hb;
	r.c.fd_ctl = r.c.fd_in = r.c.fd_out = r.c.fd_err = r.c.fd_ck = -1;
	if ((v = wlw_db_start(r.it, &st, &err)) != WLW_OK)
	{
		start_refused(r.it, v, &err);
		return;
	}
	input = r.it->input ? r.it->input : "null";
	r.input_len = strlen(input) + 1;
	r.input = malloc(r.input_len + 1);
	snprintf(r.input, r.input_len + 1, "%s\n", input);
	wlw_log("%s: running (attempt %d%s)", r.it->workload_id, r.it->attempt,
			st.checkpoint ? ", resuming from its verified latest checkpoint" : "");
	if (!command_env(r.it, &st, &env) || !wlw_spawn(wlw_opt.exec_cmd, &env, &r.c))
	{
		char		why[200];

		snprintf(why, sizeof(why), "could not start the command: %s", strerror(errno));
		fail_item(r.it, "worker_failure", why);
	}
	else
	{
		supervise(&r);
		finish(&r);
	}
	cleanup(&r);
	wlw_env_free(&env);
	wlw_start_free(&st);
}

/*
 * wlw_run_batch runs the claimed workloads one after another.  Once the
 * worker is stopping, those not started are failed as worker_failure so
 * they are retried soon rather than after their lease.
 */
void
wlw_run_batch(WlwItem *items, int n)
{
	int64_t		next_hb = wlw_now_ms() + (int64_t) (wlw_opt.lease_s * 1000 / 3);

	wlw_set_busy(true);
	for (int i = 0; i < n; i++)
	{
		if (items[i].done)
			continue;
		if (wlw_stopping())
		{
			fail_item(&items[i], "worker_failure", "not started: the worker was stopped");
			continue;
		}
		run_one(items, n, i, &next_hb);
	}
	wlw_set_busy(false);
}
