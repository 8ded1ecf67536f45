/*
 * attempt.c: starting one attempt: what the run may use and resumes from
 * (the server answers: wlw_db_start), the command's environment built from
 * that, and the command started.  What is refused is reported (report.c);
 * what runs is run.c's to follow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attempt.h"
#include "log.h"
#include "options.h"
#include "report.h"

static bool
env_int(WlwEnv *env, const char *name, long long v)
{
	char		s[32];

	snprintf(s, sizeof(s), "%lld", v);
	return wlw_env_set(env, name, s);
}

/*
 * command_env builds the command's environment: the base (PATH, --env) and
 * the WORKLOAD_* variables, including what the run resumes from.
 */
static bool
command_env(const WlwItem *it, const WlwStart *st, WlwEnv *env)
{
	bool		ok = wlw_env_base(env);

	ok = ok && wlw_env_set(env, "WORKLOAD_ID", it->workload_id);
	ok = ok && env_int(env, "WORKLOAD_ATTEMPT", it->attempt);
	ok = ok && env_int(env, "WORKLOAD_CHECKPOINT_SEQUENCE", st->checkpoint_sequence);
	ok = ok && wlw_env_set(env, "WORKLOAD_DEFINITION_ID",
						   it->definition_id ? it->definition_id : "");
	ok = ok && wlw_env_set(env, "WORKLOAD_DEFINITION_REVISION",
						   it->definition_revision ? it->definition_revision : "");
	ok = ok && wlw_env_set(env, "WORKLOAD_TENANT_ID", wlw_opt.tenant);
	ok = ok && wlw_env_set(env, "WORKLOAD_APPLICATION_ID", wlw_opt.application);
	ok = ok && wlw_env_set(env, "WORKLOAD_WORKER_ID", wlw_opt.worker_id);
	if (st->context)
		ok = ok && wlw_env_set(env, "WORKLOAD_CONTEXT", st->context);
	if (st->checkpoint)
		ok = ok && wlw_env_set_large(env, "WORKLOAD_CHECKPOINT", "WORKLOAD_CHECKPOINT_FILE",
									 st->checkpoint);
	if (st->wake)
		ok = ok && wlw_env_set_large(env, "WORKLOAD_WAKE", "WORKLOAD_WAKE_FILE", st->wake);
	return ok;
}

/*
 * wlw_attempt_start starts the command of a claimed workload, once the
 * server said what the run may use and resumes from (wlw_db_start): true
 * when it runs.  Refused (wlw_report_not_started) or unable to start
 * (failed as worker_failure), the attempt is reported and false returned.
 * env is the caller's to free, after the command.
 */
bool
wlw_attempt_start(WlwItem *it, WlwCommand *cmd, WlwEnv *env)
{
	WlwStart	st;
	WlwError	err;
	WlwCall		v = wlw_db_start(it, &st, &err);
	bool		ok;
	char		why[200];

	if (v != WLW_OK)
	{
		wlw_report_not_started(it, v, &err);
		return false;
	}
	wlw_log("%s: running (attempt %d%s)", it->workload_id, it->attempt,
			st.checkpoint ? ", resuming from its verified latest checkpoint" : "");
	ok = command_env(it, &st, env) &&
		wlw_command_start(cmd, it->workload_id, wlw_opt.exec_cmd,
						  it->input ? it->input : "null", env);
	wlw_start_free(&st);
	if (ok)
		return true;
	snprintf(why, sizeof(why), "could not start the command: %s", strerror(errno));
	wlw_report_fail(it, "worker_failure", why);
	return false;
}

