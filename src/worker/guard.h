/*
 * guard.h: the guard process that stands between the worker and each
 * command, and the messages they exchange on their socket.
 */
#ifndef WLW_GUARD_H
#define WLW_GUARD_H

#include <stdint.h>

/* One message, either way: a type and a value (8 bytes, written whole). */
typedef struct WlwGuardMsg
{
	char		type;
	char		pad[3];
	int32_t		value;
} WlwGuardMsg;

/* guard -> worker */
#define WLW_GUARD_PID		'P'		/* value: the command's pid = its process group */
#define WLW_GUARD_EXIT		'X'		/* value: the command's wait status */
/* worker -> guard */
#define WLW_GUARD_SIGNAL	'S'		/* value: a signal for the command's process group */

extern void wlw_guard_main(const char *cmd, char *const *env, const int fds[4], int ctl)
			__attribute__((noreturn));

#endif							/* WLW_GUARD_H */
