/*
 * spawn.c: the command's environment, and starting and controlling it
 * through its guard (guard.c): the pipes (stdin, stdout, stderr, fd 3),
 * the control socket, signals for its process group, and reaping the
 * guards.  It never talks to the database and knows nothing of workloads;
 * run.c does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "guard.h"
#include "log.h"
#include "options.h"
#include "spawn.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/*
 * wlw_spawn_setup prepares the worker before any command runs: on Linux it
 * makes the worker (and the guards it forks) non-dumpable, so a command
 * running as the same user cannot read the worker's environment or memory
 * (/proc/<pid>/environ, /proc/<pid>/mem, ptrace).  It logs the --env
 * names that are not set.
 */
void
wlw_spawn_setup(void)
{
#ifdef __linux__
	if (prctl(PR_SET_DUMPABLE, 0) != 0)
		wlw_log("could not make the worker non-dumpable: %s", strerror(errno));
#endif
	for (int i = 0; i < wlw_opt.n_env; i++)
	{
		if (getenv(wlw_opt.env_names[i]) == NULL)
			wlw_log("--env %s: not set in the worker's environment; not passed on",
					wlw_opt.env_names[i]);
	}
}

/*
 * wlw_env_base starts a command's environment: PATH (the worker's own only
 * with --env PATH, else DEFAULT_PATH) and each --env variable the worker
 * has.  Nothing else of the worker's environment (PGPASSWORD, PGPASSFILE,
 * PGSERVICEFILE, the connection settings) reaches the command.
 */
bool
wlw_env_base(WlwEnv *env)
{
	bool		ok = true;
	bool		path = false;

	for (int i = 0; i < wlw_opt.n_env; i++)
	{
		const char *v = getenv(wlw_opt.env_names[i]);

		path = path || strcmp(wlw_opt.env_names[i], "PATH") == 0;
		if (v)
			ok = ok && wlw_env_set(env, wlw_opt.env_names[i], v);
	}
	if (!path)
		ok = ok && wlw_env_set(env, "PATH", DEFAULT_PATH);
	return ok;
}

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

/* wlw_close_fd closes *fd if open and marks it closed (-1). */
void
wlw_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Guards whose command is over but that have not exited yet, to reap later. */
static pid_t unreaped[256];
static int	n_unreaped = 0;

/*
 * wlw_spawn starts a guard (see guard.c), which starts the command with
 * /bin/sh -c, these environment variables and its four pipes, in its own
 * process group; *c gets the guard's pid and our (non-blocking) ends of the
 * pipes and of the control socket.  Returns false, with errno set and
 * nothing left open, if it could not.
 */
bool
wlw_spawn(const char *cmd, const WlwEnv *env, WlwChild *c)
{
	int			fd[10];

	memset(c, 0, sizeof(*c));
	c->fd_ctl = c->fd_in = c->fd_out = c->fd_err = c->fd_ck = -1;
	for (int i = 0; i < 10; i++)
		fd[i] = -1;
	/* pairs: stdin, stdout, stderr, fd 3, control; [0] read end, [1] write end */
	if (pipe2(&fd[0], O_CLOEXEC) || pipe2(&fd[2], O_CLOEXEC) || pipe2(&fd[4], O_CLOEXEC) ||
		pipe2(&fd[6], O_CLOEXEC) ||
		socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, &fd[8]) ||
		(c->guard = fork()) < 0)
	{
		int			saved = errno;

		for (int i = 0; i < 10; i++)
			wlw_close_fd(&fd[i]);
		c->guard = 0;
		errno = saved;
		return false;
	}
	if (c->guard == 0)
	{
		int			theirs[4] = {fd[0], fd[3], fd[5], fd[7]};

		wlw_guard_main(cmd, env->vars, theirs, fd[9]);
	}
	close(fd[0]);
	close(fd[3]);
	close(fd[5]);
	close(fd[7]);
	close(fd[9]);
	c->fd_in = fd[1];
	c->fd_out = fd[2];
	c->fd_err = fd[4];
	c->fd_ck = fd[6];
	c->fd_ctl = fd[8];
	fcntl(c->fd_in, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_out, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_err, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_ck, F_SETFL, O_NONBLOCK);
	fcntl(c->fd_ctl, F_SETFL, O_NONBLOCK);
	return true;
}

/* guard_gone: the guard ended without reporting the command's end. */
static void
guard_gone(WlwChild *c)
{
	wlw_close_fd(&c->fd_ctl);
	if (c->exited)
		return;
	wlw_log("the guard of command %d ended unexpectedly; killing its process group", (int) c->pid);
	if (c->pid > 0)
		killpg(c->pid, SIGKILL);
	c->exited = true;
	c->status = SIGKILL;		/* as a wait status: killed by SIGKILL */
}

/* wlw_child_read takes in what the guard reported: the pid, the exit. */
void
wlw_child_read(WlwChild *c)
{
	while (c->fd_ctl >= 0)
	{
		ssize_t		n = read(c->fd_ctl, c->msg + c->msg_len, sizeof(c->msg) - c->msg_len);
		WlwGuardMsg m;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
		{
			guard_gone(c);
			return;
		}
		c->msg_len += n;
		if (c->msg_len < (int) sizeof(m))
			continue;
		memcpy(&m, c->msg, sizeof(m));
		c->msg_len = 0;
		if (m.type == WLW_GUARD_PID)
			c->pid = (pid_t) m.value;
		else if (m.type == WLW_GUARD_EXIT && !c->exited)
		{
			c->exited = true;
			c->status = m.value;
		}
	}
}

/* wlw_child_signal has the guard send signo to the command's process group. */
void
wlw_child_signal(WlwChild *c, int signo)
{
	WlwGuardMsg m;

	memset(&m, 0, sizeof(m));
	m.type = WLW_GUARD_SIGNAL;
	m.value = signo;
	if (c->fd_ctl >= 0 && write(c->fd_ctl, &m, sizeof(m)) == sizeof(m))
		return;
	if (c->pid > 0)
		killpg(c->pid, signo);	/* no guard to ask: do it ourselves */
}

/*
 * wlw_child_release ends our hold on the command: closing the control
 * socket has the guard kill whatever is left of it and exit.  The guard is
 * reaped now if it has already gone, else by wlw_spawn_reap.
 */
void
wlw_child_release(WlwChild *c)
{
	wlw_close_fd(&c->fd_ctl);
	wlw_close_fd(&c->fd_in);
	wlw_close_fd(&c->fd_out);
	wlw_close_fd(&c->fd_err);
	wlw_close_fd(&c->fd_ck);
	if (c->guard > 0 && waitpid(c->guard, NULL, WNOHANG) == 0)
	{
		if (n_unreaped < (int) (sizeof(unreaped) / sizeof(unreaped[0])))
			unreaped[n_unreaped++] = c->guard;
		else
			waitpid(c->guard, NULL, 0);
	}
	c->guard = 0;
}

/* wlw_spawn_reap reaps the released guards that have exited since. */
void
wlw_spawn_reap(void)
{
	for (int i = 0; i < n_unreaped;)
	{
		if (waitpid(unreaped[i], NULL, WNOHANG) == 0)
			i++;
		else
			unreaped[i] = unreaped[--n_unreaped];
	}
}
