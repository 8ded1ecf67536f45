/*
 * spawn.h: starting the command and controlling it: its environment, its
 * pipes, and the guard process that holds its process group.  Knows
 * nothing of workloads or the database.
 */
#ifndef WLW_SPAWN_H
#define WLW_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

#define WLW_ENV_MAX_VALUE	(64 * 1024)	/* larger values go to a file */
#define WLW_ENV_MAX_FILES	2

/* The command's environment, NAME=value strings, and the files it names. */
typedef struct WlwEnv
{
	char	  **vars;
	int			n;
	int			cap;
	char		files[WLW_ENV_MAX_FILES][80];
	int			nfiles;
} WlwEnv;

/*
 * A running command: its guard (our child), the command's pid (its process
 * group; 0 until the guard reports it), our ends of its pipes, and how it
 * ended once the guard says so.
 */
typedef struct WlwChild
{
	pid_t		guard;
	pid_t		pid;
	int			fd_ctl;
	int			fd_in;
	int			fd_out;
	int			fd_err;
	int			fd_ck;
	bool		exited;
	int			status;			/* wait status, once exited */
	char		msg[8];			/* a partly read guard message */
	int			msg_len;
} WlwChild;

extern void wlw_spawn_setup(void);
extern void wlw_close_fd(int *fd);
extern bool wlw_env_base(WlwEnv *env);
extern bool wlw_env_set(WlwEnv *env, const char *name, const char *value);
extern bool wlw_env_set_large(WlwEnv *env, const char *name, const char *file_name,
							  const char *value);
extern void wlw_env_free(WlwEnv *env);
extern bool wlw_spawn(const char *cmd, const WlwEnv *env, WlwChild *c);
extern void wlw_child_read(WlwChild *c);
extern void wlw_child_signal(WlwChild *c, int signo);
extern void wlw_child_release(WlwChild *c);
extern void wlw_spawn_reap(void);

#endif							/* WLW_SPAWN_H */
