/*
 * spawn.h: starting the command: its environment, its pipes, its process
 * group.  Knows nothing of workloads or the database.
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

/* The running command: its process (group) id and our ends of its pipes. */
typedef struct WlwChild
{
	pid_t		pid;
	int			fd_in;
	int			fd_out;
	int			fd_err;
	int			fd_ck;
} WlwChild;

extern bool wlw_env_set(WlwEnv *env, const char *name, const char *value);
extern bool wlw_env_set_large(WlwEnv *env, const char *name, const char *file_name,
							  const char *value);
extern void wlw_env_free(WlwEnv *env);
extern bool wlw_spawn(const char *cmd, const WlwEnv *env, WlwChild *c);

#endif							/* WLW_SPAWN_H */
