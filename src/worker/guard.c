/*
 * guard.c: the guard, a forked copy of the worker that runs one command and
 * outlives the worker if it must.  It starts the command in a process group
 * of its own, with exactly the environment it is given, reports its pid and exit status on the control socket, passes
 * signals on to the group, and, once the worker closes the socket or dies
 * (the socket reads EOF either way), kills the group and every descendant
 * that left it (it is their subreaper, so orphans become its children) and
 * exits.  Only libc; it never returns to the worker's code.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "guard.h"

#define SWEEP_BUDGET_MS	3000	/* longest the final kill may take */

static pid_t command_pid = 0;

static void
on_sigchld(int signo)
{
	/* nothing: it only interrupts ppoll() */
}

static void
send_msg(int ctl, char type, int32_t value)
{
	WlwGuardMsg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.value = value;
	if (write(ctl, &m, sizeof(m)) != sizeof(m))
	{
		/* the worker is gone; EOF on the socket will end the watch */
	}
}

/* close_others closes every descriptor but 0-2 and the kept ones. */
static void
close_others(const int *keep, int nkeep)
{
	struct rlimit rl;
	int			max = 65536;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		rl.rlim_cur < (rlim_t) max)
		max = (int) rl.rlim_cur;
	for (int fd = 3; fd < max; fd++)
	{
		bool		kept = false;

		for (int i = 0; i < nkeep; i++)
			kept = kept || keep[i] == fd;
		if (kept)
			continue;
#ifdef __linux__
		{
			int			next = max;

			/* close up to the next kept descriptor in one call */
			for (int i = 0; i < nkeep; i++)
				if (keep[i] > fd && keep[i] < next)
					next = keep[i];
			if (close_range(fd, next - 1, 0) == 0)
			{
				fd = next - 1;
				continue;
			}
		}
#endif
		close(fd);
	}
}

/* exec_command runs in the command's process and never returns. */
static void
exec_command(const char *cmd, char *const *env, const int fds[4], pid_t guard)
{
	sigset_t	none;

	setpgid(0, 0);
#ifdef __linux__
	/* should the guard itself be killed, the command goes with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != guard)
		_exit(1);
#endif
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < 4; i++)
	{
		if (fds[i] == i)
			fcntl(fds[i], F_SETFD, 0);
		else
			dup2(fds[i], i);
	}
	execve("/bin/sh", (char *const[]) {"sh", "-c", (char *) cmd, NULL}, env);
	dprintf(2, "workload-worker: could not run /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* reap collects every ended child; the command's end is reported once. */
static void
reap(int ctl)
{
	pid_t		p;
	int			status;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0)
	{
		if (p == command_pid)
			send_msg(ctl, WLW_GUARD_EXIT, status);
	}
}

/*
 * kill_children sends SIGKILL to every process whose parent is the guard:
 * descendants that left the command's group and were orphaned to us.
 */
static void
kill_children(void)
{
#ifdef __linux__
	DIR		   *d = opendir("/proc");
	struct dirent *e;
	char		path[64];
	char		buf[512];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		int			fd;
		ssize_t		n;
		char	   *close_paren;
		int			ppid;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* pid (comm) state ppid ...; comm may hold anything but ends at the last ')' */
		close_paren = strrchr(buf, ')');
		if (close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1 && ppid == getpid())
			kill((pid_t) atoi(e->d_name), SIGKILL);
	}
	closedir(d);
#endif
}

/*
 * sweep kills the command's group and all the guard's descendants, until
 * none is left (waitpid says there are no children) or the budget is spent.
 */
static void
sweep(void)
{
	struct timespec pause = {0, 10 * 1000 * 1000};

	for (int i = 0; i < SWEEP_BUDGET_MS / 10; i++)
	{
		int			status;

		killpg(command_pid, SIGKILL);
		kill_children();
		while (waitpid(-1, &status, WNOHANG) > 0)
			;
		if (waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD)
			return;
		nanosleep(&pause, NULL);
	}
}

/* watch serves the control socket until the worker closes it or dies. */
static void
watch(int ctl, const sigset_t *waitmask)
{
	for (;;)
	{
		struct pollfd pfd = {ctl, POLLIN, 0};
		WlwGuardMsg m;
		ssize_t		n;

		reap(ctl);
		if (ppoll(&pfd, 1, NULL, waitmask) < 0)
			continue;			/* EINTR: a child ended */
		n = read(ctl, &m, sizeof(m));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n != sizeof(m))
			return;				/* EOF (or garbage): the watch is over */
		if (m.type == WLW_GUARD_SIGNAL && m.value > 0 && m.value < NSIG)
			killpg(command_pid, m.value);
	}
}

/*
 * wlw_guard_main is the guard's life, in the process the worker forked:
 * fds are the command's ends of its stdin, stdout, stderr and fd-3 pipes,
 * ctl the guard's end of the control socket.
 */
void
wlw_guard_main(const char *cmd, char *const *env, const int fds[4], int ctl)
{
	int			keep[5] = {fds[0], fds[1], fds[2], fds[3], ctl};
	struct sigaction sa;
	sigset_t	chld, waitmask;
	pid_t		me;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	/* stop requests are the worker's to act on; it tells us what to do */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_sigchld;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &waitmask);
	sigdelset(&waitmask, SIGCHLD);
	close_others(keep, 5);
#ifdef __linux__
	prctl(PR_SET_NAME, "wlw-guard");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
	me = getpid();
	command_pid = fork();
	if (command_pid == 0)
		exec_command(cmd, env, fds, me);
	if (command_pid < 0)
	{
		send_msg(ctl, WLW_GUARD_EXIT, 127 << 8);
		_exit(1);
	}
	setpgid(command_pid, command_pid);	/* also here, so killpg works at once */
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	send_msg(ctl, WLW_GUARD_PID, (int32_t) command_pid);
	watch(ctl, &waitmask);
	sweep();
	_exit(0);
}
