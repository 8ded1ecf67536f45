/*
 * command.h: one running command seen from the worker: its input, its
 * output, its stderr tail, its fd-3 lines and its end.  Plain I/O over
 * spawn.c; no database, no workload rules.
 */
#ifndef WLW_COMMAND_H
#define WLW_COMMAND_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "spawn.h"

#define WLW_STDERR_TAIL		4096	/* bytes of stderr kept as the error text */
#define WLW_MAX_STDOUT		(4 * 1024 * 1024)
#define WLW_MAX_FD3_LINE	(2 * 1024 * 1024)
#define WLW_KILL_AFTER_MS	2000	/* SIGTERM, then SIGKILL this much later */
#define WLW_DRAIN_MS		2000	/* how long pipes may stay open after the exit */
#define WLW_COMMAND_FDS		6		/* pollfds one command needs at most */

typedef struct WlwCommand
{
	WlwChild	c;
	const char *label;			/* names the command in the log */
	WlwStr		input;
	size_t		input_off;
	WlwStr		out;			/* stdout, up to WLW_MAX_STDOUT */
	WlwStr		fd3;			/* fd-3 bytes not yet taken as lines */
	bool		fd3_skipping;	/* dropping the rest of an over-long line */
	WlwStr		err_line;		/* stderr not yet passed on (a partial line) */
	char		tail[WLW_STDERR_TAIL];
	size_t		tail_len;
	int64_t		exited_at;
	bool		stopping;		/* SIGTERM sent */
	int64_t		kill_at;		/* when SIGKILL follows it; 0 once sent */
} WlwCommand;

extern bool wlw_command_start(WlwCommand *cmd, const char *label, const char *shell_cmd,
							  const char *input,
							  const WlwEnv *env);
extern int	wlw_command_pollfds(const WlwCommand *cmd, struct pollfd *fds);
extern void wlw_command_service(WlwCommand *cmd);
extern char *wlw_command_take_line(WlwCommand *cmd, size_t *len);
extern bool wlw_command_over(const WlwCommand *cmd, int64_t now);
extern int64_t wlw_command_deadline(const WlwCommand *cmd);
extern void wlw_command_stop(WlwCommand *cmd);
extern void wlw_command_tick(WlwCommand *cmd, int64_t now);
extern const char *wlw_command_stdout(WlwCommand *cmd, bool *overflow);
extern void wlw_command_describe(const WlwCommand *cmd, char *buf, size_t size);
extern void wlw_command_release(WlwCommand *cmd);

#endif							/* WLW_COMMAND_H */
