/*
 * attempt.h: starting the command of one claimed workload.
 */
#ifndef WLW_ATTEMPT_H
#define WLW_ATTEMPT_H

#include <stdbool.h>

#include "calls.h"
#include "command.h"
#include "spawn.h"

extern bool wlw_attempt_start(WlwItem *it, WlwCommand *cmd, WlwEnv *env);

#endif							/* WLW_ATTEMPT_H */
