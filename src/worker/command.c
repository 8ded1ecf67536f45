/*
 * command.c: the worker's side of one running command: writes its input,
 * collects stdout (up to 4 MiB), passes stderr through a line at a time and
 * keeps its last 4 KiB, splits fd 3 into lines, and follows its end through
 * the guard (spawn.c).  Nothing here talks to the database or knows what a
 * line or an exit means for the workload: run.c decides.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "log.h"

#define NO_DEADLINE INT64_MAX

/*
 * wlw_command_start starts shell_cmd with this input (a line of JSON on
 * stdin) and environment.  False, with errno set, if it could not.
 */
bool
wlw_command_start(WlwCommand *cmd, const char *label, const char *shell_cmd,
				  const char *input, const WlwEnv *env)
{
	int			saved;

	memset(cmd, 0, sizeof(*cmd));
	cmd->label = label;
	cmd->c.fd_ctl = cmd->c.fd_in = cmd->c.fd_out = cmd->c.fd_err = cmd->c.fd_ck = -1;
	if (wlw_str_cat(&cmd->input, input) && wlw_str_cat(&cmd->input, "\n") &&
		wlw_spawn(shell_cmd, env, &cmd->c))
		return true;
	saved = errno ? errno : ENOMEM;
	wlw_str_free(&cmd->input);
	errno = saved;
	return false;
}

/* wlw_command_pollfds fills in what to wait for; returns how many. */
int
wlw_command_pollfds(const WlwCommand *cmd, struct pollfd *fds)
{
	int			n = 0;

	if (cmd->c.fd_ctl >= 0)
		fds[n++] = (struct pollfd) {cmd->c.fd_ctl, POLLIN, 0};
	if (cmd->c.fd_in >= 0)
		fds[n++] = (struct pollfd) {cmd->c.fd_in, POLLOUT, 0};
	if (cmd->c.fd_out >= 0)
		fds[n++] = (struct pollfd) {cmd->c.fd_out, POLLIN, 0};
	if (cmd->c.fd_err >= 0)
		fds[n++] = (struct pollfd) {cmd->c.fd_err, POLLIN, 0};
	if (cmd->c.fd_ck >= 0)
		fds[n++] = (struct pollfd) {cmd->c.fd_ck, POLLIN, 0};
	return n;
}

static void
write_input(WlwCommand *cmd)
{
	while (cmd->c.fd_in >= 0 && cmd->input_off < cmd->input.len)
	{
		ssize_t		put = write(cmd->c.fd_in, cmd->input.data + cmd->input_off,
								cmd->input.len - cmd->input_off);

		if (put < 0 && errno == EINTR)
			continue;
		if (put < 0 && errno == EAGAIN)
			return;
		if (put < 0)
			break;				/* EPIPE: the command does not read its input */
		cmd->input_off += put;
	}
	wlw_close_fd(&cmd->c.fd_in);
}

static void
keep_tail(WlwCommand *cmd, const char *data, size_t len)
{
	if (len >= WLW_STDERR_TAIL)
	{
		memcpy(cmd->tail, data + len - WLW_STDERR_TAIL, WLW_STDERR_TAIL);
		cmd->tail_len = WLW_STDERR_TAIL;
		return;
	}
	if (cmd->tail_len + len > WLW_STDERR_TAIL)
	{
		size_t		drop = cmd->tail_len + len - WLW_STDERR_TAIL;

		memmove(cmd->tail, cmd->tail + drop, cmd->tail_len - drop);
		cmd->tail_len -= drop;
	}
	memcpy(cmd->tail + cmd->tail_len, data, len);
	cmd->tail_len += len;
}

/*
 * pass_stderr writes the complete lines of what the command wrote to stderr
 * to the worker's stderr (all of it at EOF, or once 4 KiB lack a newline),
 * so lines of commands running side by side do not interleave.
 */
static void
pass_stderr(WlwCommand *cmd, bool all)
{
	WlwStr	   *s = &cmd->err_line;
	char	   *nl = s->len ? memrchr(s->data, '\n', s->len) : NULL;
	size_t		n = (all || s->len >= WLW_STDERR_TAIL) ? s->len : (nl ? (size_t) (nl - s->data) + 1 : 0);

	if (n == 0)
		return;
	if (write(STDERR_FILENO, s->data, n) < 0)
	{
		/* our own stderr is gone; the tail is still kept */
	}
	memmove(s->data, s->data + n, s->len - n);
	s->len -= n;
}

/*
 * take_fd3 appends fd-3 bytes; a line that grows past WLW_MAX_FD3_LINE is
 * dropped up to its newline (and the drop logged).
 */
static void
take_fd3(WlwCommand *cmd, const char *data, size_t len)
{
	char	   *nl;

	if (cmd->fd3_skipping)
	{
		if ((nl = memchr(data, '\n', len)) == NULL)
			return;
		wlw_log("%s: fd 3: skipped a line longer than %d bytes", cmd->label, WLW_MAX_FD3_LINE);
		cmd->fd3_skipping = false;
		len -= (nl + 1 - data);
		data = nl + 1;
	}
	wlw_str_add(&cmd->fd3, data, len, SIZE_MAX / 2);
	nl = cmd->fd3.len ? memrchr(cmd->fd3.data, '\n', cmd->fd3.len) : NULL;
	if (cmd->fd3.len - (nl ? (size_t) (nl + 1 - cmd->fd3.data) : 0) > WLW_MAX_FD3_LINE)
	{
		cmd->fd3.len = nl ? (size_t) (nl + 1 - cmd->fd3.data) : 0;
		cmd->fd3_skipping = true;
	}
}

/* read_pipe reads what is there from one of the three pipes; closes it at EOF. */
static void
read_pipe(WlwCommand *cmd, int *fd)
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
			if (fd == &cmd->c.fd_err)
				pass_stderr(cmd, true);
			wlw_close_fd(fd);
			return;
		}
		if (fd == &cmd->c.fd_out)
			wlw_str_add(&cmd->out, buf, got, WLW_MAX_STDOUT);
		else if (fd == &cmd->c.fd_err)
		{
			keep_tail(cmd, buf, got);
			wlw_str_add(&cmd->err_line, buf, got, SIZE_MAX / 2);
			pass_stderr(cmd, false);
		}
		else
			take_fd3(cmd, buf, got);
	}
}

/*
 * wlw_command_service does what is ready: input written, the pipes read,
 * the guard's reports taken in.  It never blocks.
 */
void
wlw_command_service(WlwCommand *cmd)
{
	write_input(cmd);
	read_pipe(cmd, &cmd->c.fd_out);
	read_pipe(cmd, &cmd->c.fd_err);
	read_pipe(cmd, &cmd->c.fd_ck);
	if (!cmd->c.exited)
	{
		wlw_child_read(&cmd->c);
		if (cmd->c.exited)
			cmd->exited_at = wlw_now_ms();
	}
}

/*
 * wlw_command_take_line returns the next complete fd-3 line (malloc'd,
 * without its newline; a last line without one once fd 3 is closed), or
 * NULL.
 */
char *
wlw_command_take_line(WlwCommand *cmd, size_t *len)
{
	WlwStr	   *s = &cmd->fd3;
	char	   *nl = s->len ? memchr(s->data, '\n', s->len) : NULL;
	size_t		n;
	size_t		consumed;
	char	   *line;

	if (nl == NULL && (s->len == 0 || cmd->c.fd_ck >= 0))
		return NULL;
	n = nl ? (size_t) (nl - s->data) : s->len;
	if ((line = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(line, s->data, n);
	line[n] = '\0';
	*len = n;
	consumed = nl ? n + 1 : n;
	memmove(s->data, s->data + consumed, s->len - consumed);
	s->len -= consumed;
	return line;
}

/*
 * wlw_command_over says the command is done with: it has exited and its
 * pipes are drained, or WLW_DRAIN_MS after the exit something it left
 * behind still holds them open (the guard kills it on release).
 */
bool
wlw_command_over(const WlwCommand *cmd, int64_t now)
{
	if (!cmd->c.exited)
		return false;
	if (cmd->c.fd_out < 0 && cmd->c.fd_err < 0 && cmd->c.fd_ck < 0)
		return true;
	return now >= cmd->exited_at + WLW_DRAIN_MS;
}

/* wlw_command_deadline is when the command next needs attention by time. */
int64_t
wlw_command_deadline(const WlwCommand *cmd)
{
	int64_t		t = cmd->kill_at ? cmd->kill_at : NO_DEADLINE;

	if (cmd->c.exited && cmd->exited_at + WLW_DRAIN_MS < t)
		t = cmd->exited_at + WLW_DRAIN_MS;
	return t;
}

/* wlw_command_stop sends SIGTERM to the command's group; SIGKILL follows. */
void
wlw_command_stop(WlwCommand *cmd)
{
	if (cmd->stopping || cmd->c.exited)
		return;
	cmd->stopping = true;
	wlw_child_signal(&cmd->c, SIGTERM);
	cmd->kill_at = wlw_now_ms() + WLW_KILL_AFTER_MS;
}

/* wlw_command_tick sends the SIGKILL that is due. */
void
wlw_command_tick(WlwCommand *cmd, int64_t now)
{
	if (cmd->kill_at && now >= cmd->kill_at)
	{
		if (!cmd->c.exited)
			wlw_child_signal(&cmd->c, SIGKILL);
		cmd->kill_at = 0;
	}
}

/*
 * wlw_command_stdout is the output, trimmed of white space ("{}" when
 * empty); *overflow says it passed WLW_MAX_STDOUT.
 */
const char *
wlw_command_stdout(WlwCommand *cmd, bool *overflow)
{
	char	   *out = cmd->out.data ? cmd->out.data : "";
	size_t		len = cmd->out.len;

	*overflow = cmd->out.overflow;
	while (len > 0 && strchr(" \t\r\n", out[len - 1]))
		out[--len] = '\0';
	while (len > 0 && strchr(" \t\r\n", *out))
		out++, len--;
	return len == 0 ? "{}" : out;
}

/* wlw_command_describe says how the command ended, with its stderr tail. */
void
wlw_command_describe(const WlwCommand *cmd, char *buf, size_t size)
{
	int			st = cmd->c.status;
	int			n;

	if (WIFSIGNALED(st))
		n = snprintf(buf, size, "command killed by signal %d (%s)", WTERMSIG(st),
					 strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st) > 128 && WEXITSTATUS(st) <= 128 + 64)
		n = snprintf(buf, size, "command exited with status %d (killed by signal %d, %s)",
					 WEXITSTATUS(st), WEXITSTATUS(st) - 128, strsignal(WEXITSTATUS(st) - 128));
	else
		n = snprintf(buf, size, "command exited with status %d", WEXITSTATUS(st));
	if (cmd->tail_len > 0 && n > 0 && (size_t) n + 2 < size)
		snprintf(buf + n, size - n, "; stderr:\n%.*s", (int) cmd->tail_len, cmd->tail);
}

/*
 * wlw_command_release lets go of the command: its guard kills whatever is
 * left of it, and everything is freed.
 */
void
wlw_command_release(WlwCommand *cmd)
{
	pass_stderr(cmd, true);
	wlw_child_release(&cmd->c);
	wlw_str_free(&cmd->input);
	wlw_str_free(&cmd->out);
	wlw_str_free(&cmd->fd3);
	wlw_str_free(&cmd->err_line);
}
