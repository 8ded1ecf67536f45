/*
 * signals.c: the worker's signal handlers.  SIGTERM and SIGINT ask it to
 * stop (the first starts the grace period, a second ends it), SIGCHLD
 * says a child ended; each writes a byte to a self-pipe that every poll()
 * loop watches.  SIGPIPE is ignored: a closed pipe is an EPIPE, not death.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "signals.h"

static volatile sig_atomic_t stop_count = 0;
static volatile int64_t drain_deadline = 0;
static int64_t grace_ms = 0;
static bool busy = false;
static int	signal_pipe[2] = {-1, -1};

static void
on_signal(int signo)
{
	int			saved = errno;
	char		c = (char) signo;

	if (signo == SIGTERM || signo == SIGINT)
	{
		/* the first request starts the grace period; a second one ends it */
		if (stop_count++ == 0)
			drain_deadline = wlw_now_ms() + grace_ms;
		else
			drain_deadline = 0;
	}
	if (write(signal_pipe[1], &c, 1) < 0)
	{
		/* the pipe is full: a wake-up is already pending */
	}
	errno = saved;
}

/* wlw_signals_setup installs the handlers; grace is --grace in ms. */
void
wlw_signals_setup(int64_t grace)
{
	struct sigaction sa;

	grace_ms = grace;
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
	{
		perror("pipe2");
		exit(1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* wlw_signal_fd is the self-pipe's read end, for poll(). */
int
wlw_signal_fd(void)
{
	return signal_pipe[0];
}

/* wlw_signals_drain empties the self-pipe the handlers write to. */
void
wlw_signals_drain(void)
{
	char		buf[64];

	while (read(signal_pipe[0], buf, sizeof(buf)) > 0)
		;
}

/* wlw_stopping says whether SIGTERM or SIGINT arrived. */
bool
wlw_stopping(void)
{
	return stop_count > 0;
}

/* wlw_drain_deadline is when the grace period ends (0 after a second signal). */
int64_t
wlw_drain_deadline(void)
{
	return drain_deadline;
}

/* wlw_set_busy says whether commands are running (see wlw_should_give_up). */
void
wlw_set_busy(bool b)
{
	busy = b;
}

/*
 * wlw_should_give_up says whether a stopping worker must stop waiting (for
 * a connection, say): when idle at once, when busy once the grace is over.
 */
bool
wlw_should_give_up(void)
{
	if (!wlw_stopping())
		return false;
	return !busy || wlw_now_ms() >= drain_deadline;
}
