/*
 * spawn.c: starts the command: /bin/sh -c with the input pipe on stdin,
 * stdout, stderr and the checkpoint pipe on fd 3, the environment it is
 * given, its own process group, and (on Linux) death with the worker.  It
 * never talks to the database and knows nothing of workloads; run.c does.
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

#include "spawn.h"

/* wlw_env_set adds NAME=value; false when out of memory. */
bool
wlw_env_set(WlwEnv *env, const char *name, const char *value)
{
	size_t		len = strlen(name) + strlen(value) + 2;
	char	   *var;

	if (env->n + 2 > env->cap)
	{
		int			cap = env->cap ? env->cap * 2 : 16;
		char	  **p = realloc(env->vars, sizeof(char *) * cap);

		if (p == NULL)
			return false;
		env->vars = p;
		env->cap = cap;
	}
	if ((var = malloc(len)) == NULL)
		return false;
	snprintf(var, len, "%s=%s", name, value);
	env->vars[env->n++] = var;
	env->vars[env->n] = NULL;
	return true;
}

/*
 * wlw_env_set_large sets name to value, or, when value is larger than
 * WLW_ENV_MAX_VALUE, writes it to a temporary file (in $TMPDIR or /tmp)
 * and sets file_name to its path; wlw_env_free removes the file.
 */
bool
wlw_env_set_large(WlwEnv *env, const char *name, const char *file_name, const char *value)
{
	const char *dir = getenv("TMPDIR");
	size_t		len = strlen(value);
	char	   *path;
	int			fd;

	if (len <= WLW_ENV_MAX_VALUE)
		return wlw_env_set(env, name, value);
	if (env->nfiles >= WLW_ENV_MAX_FILES)
		return false;
	path = env->files[env->nfiles];
	snprintf(path, sizeof(env->files[0]), "%s/workload-env.XXXXXX",
			 dir && dir[0] && strlen(dir) < 40 ? dir : "/tmp");
	if ((fd = mkstemp(path)) < 0)
		return false;
	env->nfiles++;
	if (write(fd, value, len) != (ssize_t) len)
	{
		close(fd);
		return false;
	}
	close(fd);
	return wlw_env_set(env, file_name, path);
}

/* wlw_env_free frees the strings and removes the files. */
void
wlw_env_free(WlwEnv *env)
{
	for (int i = 0; i < env->n; i++)
		free(env->vars[i]);
	free(env->vars);
	for (int i = 0; i < env->nfiles; i++)
		unlink(env->files[i]);
	memset(env, 0, sizeof(*env));
}

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

/* child_exec runs in the forked child and never returns. */
static void
child_exec(const char *cmd, const WlwEnv *env, const int fds[4], pid_t parent)
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
	for (int i = 0; i < 4; i++)
		move_fd(fds[i], i);
	unsetenv("WORKLOAD_CHECKPOINT");
	unsetenv("WORKLOAD_CHECKPOINT_FILE");
	for (int i = 0; i < env->n; i++)
		putenv(env->vars[i]);
	execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
	dprintf(2, "workload-worker: could not run /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/*
 * wlw_spawn forks the command with its four pipes, in its own process
 * group; *c gets the pid and our (non-blocking) ends.  Returns false, with
 * errno set and nothing left open, if it could not.
 */
bool
wlw_spawn(const char *cmd, const WlwEnv *env, WlwChild *c)
{
	int			pin[2], pout[2], perr[2], pck[2];
	pid_t		parent = getpid();

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
	{
		int			fds[4] = {pin[0], pout[1], perr[1], pck[1]};

		child_exec(cmd, env, fds, parent);
	}
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
