/*
 * report.c: how the worker reports the end of one attempt, and what it
 * does when a report is refused: a fence refusal means the workload is no
 * longer ours (say so and move on, never retry); WORKLOAD_TRANSITION_DENIED
 * on a completion or failure means cancellation won (confirm it); error
 * text the server refuses as a secret is replaced by a note.  Knows items,
 * not commands or slots (run.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "report.h"

/* wlw_report_lost logs a fence refusal; the attempt is over for us. */
void
wlw_report_lost(WlwItem *it, const char *call, const WlwError *err, const char *then)
{
	wlw_log("%s: %s refused by the fence (%s: %s); %s", it->workload_id, call,
			err->sqlstate, err->message, then);
	it->done = true;
}

/* wlw_report_cancelled confirms a requested cancellation. */
void
wlw_report_cancelled(WlwItem *it)
{
	WlwError	err;
	WlwCall		v = wlw_db_confirm_cancel(it, &err);

	if (v == WLW_OK)
		wlw_log("%s: cancelled (confirmed)", it->workload_id);
	else
		wlw_log("%s: could not confirm the cancellation: %s %s", it->workload_id,
				err.sqlstate, err.message);
	it->done = true;
}

/* wlw_report_fail fails the attempt with this kind and error text. */
void
wlw_report_fail(WlwItem *it, const char *kind, const char *error)
{
	WlwError	err;
	char	   *state = NULL;
	char	   *text = strdup(error);
	WlwCall		v;

	wlw_utf8_sanitize(text, strlen(text));
	v = wlw_db_fail(it, kind, text, &state, &err);
	if (v == WLW_REFUSED && strcmp(err.sqlstate, "WL010") == 0)
		v = wlw_db_fail(it, kind, "error text withheld: the server refused it as containing a secret",
						&state, &err);
	free(text);
	if (v == WLW_OK)
		wlw_log("%s: failed (%s), now %s", it->workload_id, kind, state ? state : "?");
	else if (v == WLW_REFUSED && strcmp(err.sqlstate, "WL009") == 0)
		wlw_report_cancelled(it);
	else if (v == WLW_LOST)
		wlw_report_lost(it, "failure report", &err, "moving on");
	else
		wlw_log("%s: could not report the failure: %s %s", it->workload_id, err.sqlstate,
				err.message);
	free(state);
	it->done = true;
}

/*
 * wlw_report_not_started handles a refusal of wlw_db_start: the command
 * must not run.  Authority that no longer holds, a checkpoint that does not
 * verify and governing snapshots that do not match are permanent (kinds
 * authorization_denied, checkpoint_tampered, snapshot_mismatch: not in the
 * default retry_on); any other refusal is a worker_failure.
 */
void
wlw_report_not_started(WlwItem *it, WlwCall v, const WlwError *err)
{
	static const char *const kinds[][2] = {
		{"WL017", "authorization_denied"},
		{"WL013", "checkpoint_tampered"},
		{"WL014", "snapshot_mismatch"},
	};
	const char *kind = "worker_failure";
	char		why[1100];

	if (v == WLW_LOST)
	{
		wlw_report_lost(it, "execution context", err, "not running it");
		return;
	}
	if (v == WLW_NO_CONNECTION)
	{
		wlw_log("%s: could not start (%s); the lease will run out and the workload be retried",
				it->workload_id, err->message);
		it->done = true;
		return;
	}
	for (int i = 0; i < 3; i++)
		if (strcmp(err->sqlstate, kinds[i][0]) == 0)
			kind = kinds[i][1];
	snprintf(why, sizeof(why), "not run: %s%s%s", err->message, err->detail[0] ? ". " : "",
			 err->detail);
	wlw_log("%s: %s", it->workload_id, why);
	wlw_report_fail(it, kind, why);
}

/*
 * wlw_report_completed acts on the answer to a completion: logged when
 * stored (or dead-lettered by the server for unmet completion criteria);
 * a cancellation that won is confirmed; any other refusal of the output
 * (a secret, a duplicate result id, a limit) fails it as invalid_output.
 */
void
wlw_report_completed(WlwItem *it, WlwCall v, const WlwError *err, bool unmet)
{
	char		why[700];

	if (v == WLW_OK && unmet)
		wlw_log("%s: completed, but the output misses the completion criteria: dead-lettered",
				it->workload_id);
	else if (v == WLW_OK)
		wlw_log("%s: succeeded", it->workload_id);
	else if (v == WLW_LOST)
		wlw_report_lost(it, "completion", err, "moving on");
	else if (v == WLW_REFUSED && strcmp(err->sqlstate, "WL009") == 0)
		wlw_report_cancelled(it);	/* cancellation won */
	else if (v == WLW_REFUSED)
	{
		snprintf(why, sizeof(why), "output refused: %s%s%s", err->sqlstate,
				 err->sqlstate[0] ? " " : "", err->message);
		wlw_report_fail(it, "invalid_output", why);
	}
	else
		wlw_log("%s: could not complete (%s); the lease will run out and the workload be retried",
				it->workload_id, err->message);
	it->done = true;
}

/* wlw_report_complete_one completes one item on its own (workload_complete). */
void
wlw_report_complete_one(WlwItem *it, const char *output)
{
	WlwError	err;
	WlwCall		v = wlw_db_complete(it, output, &err);

	wlw_report_completed(it, v, &err, false);
}
