/*
 * spawn.c: starts the command for one workload: /bin/sh -c with the input
 * pipe on stdin, stdout, stderr and the checkpoint pipe on fd 3, the
 * WORKLOAD_* environment, its own process group, and (on Linux) death
 * with the worker.  It never talks to the database; run.c does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "worker.h"

#define ENV_CHECKPOINT_MAX	(64 * 1024)

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* move_fd puts fd on target in the child, clearing close-on-exec. */
static void
move_fd(int fd, int target)
{
	if (fd == target)
		fcntl(fd, F_SETFD, 0);
	else
		dup2(fd, target);
}

static void
set_env_int(const char *name, long long v)
{
	char		s[32];

	snprintf(s, sizeof(s), "%lld", v);
	setenv(name, s, 1);
}

/* child_exec runs in the forked child and never returns. */
static void
child_exec(const WlwItem *it, WlwChild *c, int pin, int pout, int perr, int pck,
		   pid_t parent, const char *ckpt)
{
	sigset_t	none;

	setpgid(0, 0);
#ifdef __linux__
	/* if the worker dies (kill -9), so does the command */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
#endif
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	move_fd(pin, 0);
	move_fd(pout, 1);
	move_fd(perr, 2);
	move_fd(pck, 3);
	setenv("WORKLOAD_ID", it->workload_id, 1);
	set_env_int("WORKLOAD_ATTEMPT", it->attempt);
	set_env_int("WORKLOAD_CHECKPOINT_SEQUENCE", it->checkpoint_sequence);
	setenv("WORKLOAD_DEFINITION_ID", it->definition_id ? it->definition_id : "", 1);
	setenv("WORKLOAD_DEFINITION_REVISION", it->definition_revision ? it->definition_revision : "", 1);
	setenv("WORKLOAD_TENANT_ID", wlw_opt.tenant, 1);
	setenv("WORKLOAD_APPLICATION_ID", wlw_opt.application, 1);
	setenv("WORKLOAD_WORKER_ID", wlw_opt.worker_id, 1);
	unsetenv("WORKLOAD_CHECKPOINT");
	unsetenv("WORKLOAD_CHECKPOINT_FILE");
	if (c->ckpt_file[0])
		setenv("WORKLOAD_CHECKPOINT_FILE", c->ckpt_file, 1);
	else if (ckpt)
		setenv("WORKLOAD_CHECKPOINT", ckpt, 1);
	execl("/bin/sh", "sh", "-c", wlw_opt.exec_cmd, (char *) NULL);
	dprintf(2, "workload-worker: could not run /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* checkpoint_file writes a large checkpoint to a temporary file. */
static bool
checkpoint_file(WlwChild *c, const char *ckpt)
{
	const char *dir = getenv("TMPDIR");
	size_t		len = strlen(ckpt);
	int			fd;

	snprintf(c->ckpt_file, sizeof(c->ckpt_file), "%s/workload-ckpt.XXXXXX",
			 dir && strlen(dir) < 40 ? dir : "/tmp");
	fd = mkstemp(c->ckpt_file);
	if (fd < 0)
	{
		c->ckpt_file[0] = '\0';
		return false;
	}
	if (write(fd, ckpt, len) != (ssize_t) len)
	{
		close(fd);
		unlink(c->ckpt_file);
		c->ckpt_file[0] = '\0';
		return false;
	}
	close(fd);
	return true;
}

/*
 * wlw_spawn forks the command for this workload with its four pipes, in
 * its own process group; *c gets the pid and our (non-blocking) ends.
 * Returns false, with errno set and nothing left open, if it could not.
 */
bool
wlw_spawn(const WlwItem *it, const char *ckpt, WlwChild *c)
{
	int			pin[2], pout[2], perr[2], pck[2];
	pid_t		parent = getpid();

	if (ckpt && strlen(ckpt) > ENV_CHECKPOINT_MAX && !checkpoint_file(c, ckpt))
		return false;
	pin[0] = pin[1] = pout[0] = pout[1] = perr[0] = perr[1] = pck[0] = pck[1] = -1;
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC) ||
		pipe2(pck, O_CLOEXEC) || (c->pid = fork()) < 0)
	{
		int			saved = errno;

		for (int i = 0; i < 2; i++)
		{
			close_fd(&pin[i]);
			close_fd(&pout[i]);
			close_fd(&perr[i]);
			close_fd(&pck[i]);
		}
		c->pid = 0;
		errno = saved;
		return false;
	}
	if (c->pid == 0)
		child_exec(it, c, pin[0], pout[1], perr[1], pck[1], parent, ckpt);
	setpgid(c->pid, c->pid);	/* also here, so killpg works at once */
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	close(pck[1]);
	c->fd_in = pin[1];
	c->fd_out = pout[0];
	c->fd_err = perr[0];
	c->fd_ck = pck[0];
	fcntl(c->fd_in, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_out, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_err, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_ck, F_SETFL, O_NONBLOCK);
	return true;
}
