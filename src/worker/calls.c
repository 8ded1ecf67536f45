/*
 * calls.c: every API call the worker makes, one function each, over db.c.
 * The claim is never resent after a lost connection, since a claim that
 * committed before the drop would be taken twice: the caller reconnects
 * and claims afresh, and the lost claim comes back through lease
 * recovery.  The batch calls (heartbeat_many, complete_many) report each
 * item's outcome on its own.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libpq-fe.h"

#include "calls.h"
#include "db.h"
#include "json.h"
#include "log.h"
#include "options.h"

static const char *const claim_sql =
"SELECT workload_id, claim_id, fencing_token, attempt, definition_id, "
"       definition_revision, input::text, checkpoint_sequence "
"FROM workload_claim($1, $2::text[], $3, $4, $5::interval, $6::integer, start => true)";

/*
 * wlw_db_claim claims (and starts) up to max_items workloads.  Returns how
 * many, with *items allocated (the caller takes the items over and frees
 * the array); -1 on a refusal (logged) or a lost connection (*conn_lost).
 */
int
wlw_db_claim(int max_items, WlwItem **items, WlwError *err, bool *conn_lost)
{
	char		lease[32];
	char		batch[16];
	const char *params[6];
	PGresult   *res;
	int			n;

	snprintf(lease, sizeof(lease), "%g seconds", wlw_opt.lease_s);
	snprintf(batch, sizeof(batch), "%d", max_items);
	params[0] = wlw_opt.worker_id;
	params[1] = wlw_opt.caps_literal;
	params[2] = wlw_opt.tenant;
	params[3] = wlw_opt.application;
	params[4] = lease;
	params[5] = batch;
	res = wlw_db_exec_once(claim_sql, 6, params, err, conn_lost);
	if (res == NULL && *conn_lost)
		wlw_log("connection lost (%s); reconnecting", err->message);
	else if (res == NULL)
		wlw_log("claim refused: %s %s", err->sqlstate, err->message);
	if (res == NULL)
		return -1;
	n = PQntuples(res);
	*items = calloc(n > 0 ? n : 1, sizeof(WlwItem));
	for (int i = 0; i < n; i++)
	{
		WlwItem    *it = &(*items)[i];

		it->workload_id = wlw_db_value(res, i, 0);
		it->claim_id = wlw_db_value(res, i, 1);
		snprintf(it->token, sizeof(it->token), "%s", PQgetvalue(res, i, 2));
		it->attempt = atoi(PQgetvalue(res, i, 3));
		it->definition_id = wlw_db_value(res, i, 4);
		it->definition_revision = wlw_db_value(res, i, 5);
		it->input = wlw_db_value(res, i, 6);
		it->checkpoint_sequence = atoi(PQgetvalue(res, i, 7));
		wlw_log("claimed %s (attempt %d, fencing token %s, claim %s)",
				it->workload_id, it->attempt, it->token, it->claim_id);
	}
	PQclear(res);
	return n;
}

/* wlw_item_free frees the strings of one item that wlw_db_claim filled. */
void
wlw_item_free(WlwItem *it)
{
	free(it->workload_id);
	free(it->claim_id);
	free(it->definition_id);
	free(it->definition_revision);
	free(it->input);
	free(it->progress);
	memset(it, 0, sizeof(*it));
}

/*
 * fence_call sends fn(tenant, workload_id, claim_id, worker_id, token,
 * extra...): $1..$4 are the fence, the extras follow, and the tenant is the
 * last parameter (the tenant-first overloads: on Citus the call runs on the
 * tenant's node with no lookup of where the workload is).
 */
static WlwCall
fence_call(const char *sql, WlwItem *it, int nextra, const char *const *extra,
		   WlwError *err, char **value)
{
	const char *params[9];
	PGresult   *res;
	bool		nocon;
	WlwCall		v;

	params[0] = it->workload_id;
	params[1] = it->claim_id;
	params[2] = wlw_opt.worker_id;
	params[3] = it->token;
	for (int i = 0; i < nextra; i++)
		params[4 + i] = extra[i];
	params[4 + nextra] = wlw_opt.tenant;
	res = wlw_db_call(sql, 5 + nextra, params, err, &nocon);
	v = wlw_db_verdict(res, nocon, err);
	if (value)
		*value = (res && PQntuples(res) > 0) ? wlw_db_value(res, 0, 0) : NULL;
	PQclear(res);
	return v;
}

/*
 * wlw_db_heartbeat renews the lease for another --lease, passing on the
 * item's pending progress; *cancel says cancellation was requested.  A
 * progress value the server refuses is dropped and the heartbeat resent.
 */
WlwCall
wlw_db_heartbeat(WlwItem *it, bool *cancel, WlwError *err)
{
	static const char *sql =
	"SELECT workload_heartbeat($7, $1, $2, $3, $4::bigint, $5::interval, $6::jsonb) ->> 'cancellation_requested'";
	char		lease[32];
	const char *extra[2];
	char	   *answer = NULL;
	WlwCall		v;

	snprintf(lease, sizeof(lease), "%g seconds", wlw_opt.lease_s);
	extra[0] = lease;
	extra[1] = it->progress;
	v = fence_call(sql, it, 2, extra, err, &answer);
	if (v == WLW_REFUSED && it->progress)
	{
		wlw_log("progress for %s refused (%s %s); dropped", it->workload_id, err->sqlstate,
				err->message);
		free(it->progress);
		it->progress = NULL;
		extra[1] = NULL;
		v = fence_call(sql, it, 2, extra, err, &answer);
	}
	*cancel = (v == WLW_OK && answer && strcmp(answer, "true") == 0);
	if (v == WLW_OK && it->progress)
	{
		free(it->progress);
		it->progress = NULL;
	}
	free(answer);
	return v;
}

/* wlw_db_checkpoint appends a checkpoint with this state (JSON text). */
WlwCall
wlw_db_checkpoint(WlwItem *it, const char *state, WlwError *err)
{
	const char *extra[1] = {state};

	return fence_call("SELECT workload_checkpoint($6, $1, $2, $3, $4::bigint, $5::jsonb)",
					  it, 1, extra, err, NULL);
}

/*
 * wlw_db_complete stores the output under result id <workload_id>:<attempt>,
 * so sending it again after a lost connection returns the stored result.
 */
WlwCall
wlw_db_complete(WlwItem *it, const char *output, WlwError *err)
{
	char		result_id[300];
	const char *extra[2];

	snprintf(result_id, sizeof(result_id), "%s:%d", it->workload_id, it->attempt);
	extra[0] = result_id;
	extra[1] = output;
	return fence_call("SELECT workload_complete($7, $1, $2, $3, $4::bigint, $5, $6::jsonb)",
					  it, 2, extra, err, NULL);
}

/* wlw_db_fail fails the attempt; *state is where the workload ended (malloc'd). */
WlwCall
wlw_db_fail(WlwItem *it, const char *kind, const char *error, char **state, WlwError *err)
{
	const char *extra[2] = {kind, error};

	return fence_call("SELECT workload_fail($7, $1, $2, $3, $4::bigint, $5, $6)::text",
					  it, 2, extra, err, state);
}

/* wlw_db_confirm_cancel moves CANCELLATION_REQUESTED on to CANCELLED. */
WlwCall
wlw_db_confirm_cancel(WlwItem *it, WlwError *err)
{
	return fence_call("SELECT workload_confirm_cancel($5, $1, $2, $3, $4::bigint)",
					  it, 0, NULL, err, NULL);
}

/*
 * wlw_db_start asks, in one statement, what this run may use
 * (workload_execution_context: AUTHORIZATION_DENIED when the workload's
 * authority no longer holds) and what it resumes from (workload_resume: the
 * latest checkpoint, verified, WORKLOAD_CHECKPOINT_TAMPERED otherwise, and
 * the last wake), passing --expected-snapshots.  The context is checked
 * first.  On WLW_OK, *start is filled (free with wlw_start_free).
 */
WlwCall
wlw_db_start(WlwItem *it, WlwStart *start, WlwError *err)
{
	static const char *sql =
	"WITH c AS MATERIALIZED (SELECT workload_execution_context($6, $1, $2, $3, $4::bigint) AS x), "
	"     r AS MATERIALIZED (SELECT workload_resume($6, $1, $2, $3, $4::bigint, $5::jsonb) AS y FROM c) "
	"SELECT (SELECT jsonb_object_agg(key, value) FROM jsonb_each(x) "
	"        WHERE key IN ('attempt_id', 'capabilities', 'connection_scopes', 'environment'))::text, "
	"       coalesce((y -> 'checkpoint' ->> 'sequence')::int, 0), "
	"       (y -> 'checkpoint' -> 'state')::text, "
	"       nullif(y -> 'wake', 'null'::jsonb)::text "
	"FROM c, r";
	const char *params[6];
	PGresult   *res;
	bool		nocon;
	WlwCall		v;

	memset(start, 0, sizeof(*start));
	params[0] = it->workload_id;
	params[1] = it->claim_id;
	params[2] = wlw_opt.worker_id;
	params[3] = it->token;
	params[4] = wlw_opt.expected_snapshots;
	params[5] = wlw_opt.tenant;
	res = wlw_db_call(sql, 6, params, err, &nocon);
	v = wlw_db_verdict(res, nocon, err);
	if (v == WLW_OK && PQntuples(res) == 1)
	{
		start->context = wlw_db_value(res, 0, 0);
		start->checkpoint_sequence = atoi(PQgetvalue(res, 0, 1));
		start->checkpoint = wlw_db_value(res, 0, 2);
		start->wake = wlw_db_value(res, 0, 3);
	}
	PQclear(res);
	return v;
}

/* wlw_start_free frees what wlw_db_start filled in. */
void
wlw_start_free(WlwStart *start)
{
	free(start->context);
	free(start->checkpoint);
	free(start->wake);
	memset(start, 0, sizeof(*start));
}

/* The refusal codes of batch items the worker acts on, with their SQLSTATEs. */
static const char *const item_codes[][2] = {
	{"WORKLOAD_CLAIM_INVALID", "WL006"},
	{"WORKLOAD_STALE_FENCE", "WL007"},
	{"WORKLOAD_LEASE_EXPIRED", "WL008"},
	{"WORKLOAD_TRANSITION_DENIED", "WL009"},
	{"WORKLOAD_SECRET_REJECTED", "WL010"},
	{"WORKLOAD_RESULT_DUPLICATE", "WL011"},
};

/* item_refused records a batch item's refusal as a single call's would be. */
static void
item_refused(WlwBatchItem *b, const char *code)
{
	snprintf(b->err.message, sizeof(b->err.message), "%s", code ? code : "refused");
	b->err.sqlstate[0] = '\0';
	for (int i = 0; i < (int) (sizeof(item_codes) / sizeof(item_codes[0])); i++)
		if (code && strcmp(code, item_codes[i][0]) == 0)
			snprintf(b->err.sqlstate, sizeof(b->err.sqlstate), "%s", item_codes[i][1]);
	b->v = (strcmp(b->err.sqlstate, "WL006") == 0 || strcmp(b->err.sqlstate, "WL007") == 0 ||
			strcmp(b->err.sqlstate, "WL008") == 0) ? WLW_LOST : WLW_REFUSED;
}

/*
 * item_fence appends {"workload_id":..,"claim_id":..,"fencing_token":..
 * to a batch's JSON (the caller adds its fields and the closing brace).
 */
static bool
item_fence(WlwStr *j, const WlwItem *it)
{
	return wlw_str_cat(j, j->len > 1 ? ",{\"workload_id\":" : "{\"workload_id\":") &&
		wlw_str_quote(j, it->workload_id) && wlw_str_cat(j, ",\"claim_id\":") &&
		wlw_str_quote(j, it->claim_id) && wlw_str_cat(j, ",\"fencing_token\":") &&
		wlw_str_cat(j, it->token);
}

/*
 * batch_call sends a batch function's statement with the worker id and the
 * items array, and matches each answer row (workload_id, outcome, code,
 * value) to its item: outcome ok_outcome (or also_ok, which sets *flag) is
 * WLW_OK, "refused" is the item's code.  value "true" sets cancel.
 */
static WlwCall
batch_call(const char *sql, const char *extra, WlwStr *j, WlwBatchItem *items, int n,
		   const char *ok_outcome, const char *also_ok, WlwError *err)
{
	const char *params[4] = {wlw_opt.worker_id, j->data, extra ? extra : wlw_opt.tenant,
	wlw_opt.tenant};
	bool		nocon;
	PGresult   *res = wlw_db_call(sql, extra ? 4 : 3, params, err, &nocon);
	WlwCall		v = wlw_db_verdict(res, nocon, err);

	for (int i = 0; i < n; i++)
		item_refused(&items[i], "no answer for this item");
	for (int r = 0; v == WLW_OK && r < PQntuples(res); r++)
	{
		const char *outcome = PQgetvalue(res, r, 1);

		for (int i = 0; i < n && !PQgetisnull(res, r, 0); i++)
		{
			WlwBatchItem *b = &items[i];

			if (strcmp(b->it->workload_id, PQgetvalue(res, r, 0)) != 0)
				continue;
			if (strcmp(outcome, ok_outcome) == 0 || (also_ok && strcmp(outcome, also_ok) == 0))
			{
				b->v = WLW_OK;
				b->unmet = also_ok && strcmp(outcome, also_ok) == 0;
				b->cancel = strcmp(PQgetvalue(res, r, 3), "true") == 0;
			}
			else
				item_refused(b, PQgetisnull(res, r, 2) ? NULL : PQgetvalue(res, r, 2));
		}
	}
	PQclear(res);
	return v;
}

/*
 * wlw_db_heartbeat_many renews the leases of these items for another
 * --lease in one transaction (workload_heartbeat_many), passing on each
 * item's pending progress; each item gets its own outcome, and an item
 * extended with its progress has the progress cleared.  A refusal of the
 * whole call (an older server, a limit) is returned for the caller to fall
 * back to wlw_db_heartbeat.
 */
WlwCall
wlw_db_heartbeat_many(WlwBatchItem *items, int n, WlwError *err)
{
	static const char *sql =
	"SELECT workload_id, outcome, code, answer ->> 'cancellation_requested' "
	"FROM workload_heartbeat_many($4, $1, $2::jsonb, $3::interval)";
	char		lease[32];
	WlwStr		j = {0};
	bool		ok = wlw_str_cat(&j, "[");
	WlwCall		v;

	snprintf(lease, sizeof(lease), "%g seconds", wlw_opt.lease_s);
	for (int i = 0; i < n && ok; i++)
	{
		ok = item_fence(&j, items[i].it);
		if (ok && items[i].it->progress)
			ok = wlw_str_cat(&j, ",\"progress\":") && wlw_str_cat(&j, items[i].it->progress);
		ok = ok && wlw_str_cat(&j, "}");
	}
	if (!ok || !wlw_str_cat(&j, "]"))
	{
		wlw_str_free(&j);
		snprintf(err->message, sizeof(err->message), "out of memory");
		return WLW_REFUSED;
	}
	v = batch_call(sql, lease, &j, items, n, "extended", NULL, err);
	for (int i = 0; i < n; i++)
	{
		if (items[i].v == WLW_OK && items[i].it->progress)
		{
			free(items[i].it->progress);
			items[i].it->progress = NULL;
		}
	}
	wlw_str_free(&j);
	return v;
}

/*
 * wlw_db_complete_many completes these items in one transaction
 * (workload_complete_many), each under result id <workload_id>:<attempt>
 * as wlw_db_complete does; each item gets its own outcome (unmet: its
 * output missed the completion criteria, and the server dead-lettered it).
 */
WlwCall
wlw_db_complete_many(WlwBatchItem *items, int n, WlwError *err)
{
	static const char *sql =
	"SELECT workload_id, outcome, code, NULL FROM workload_complete_many($3, $1, $2::jsonb)";
	WlwStr		j = {0};
	bool		ok = wlw_str_cat(&j, "[");
	WlwCall		v;

	for (int i = 0; i < n && ok; i++)
	{
		char		result_id[300];

		snprintf(result_id, sizeof(result_id), "%s:%d", items[i].it->workload_id,
				 items[i].it->attempt);
		ok = item_fence(&j, items[i].it) && wlw_str_cat(&j, ",\"result_id\":") &&
			wlw_str_quote(&j, result_id) && wlw_str_cat(&j, ",\"output\":") &&
			wlw_str_cat(&j, items[i].output) && wlw_str_cat(&j, "}");
	}
	if (!ok || !wlw_str_cat(&j, "]"))
	{
		wlw_str_free(&j);
		snprintf(err->message, sizeof(err->message), "out of memory");
		return WLW_REFUSED;
	}
	v = batch_call(sql, NULL, &j, items, n, "succeeded", "completion_criteria_unmet", err);
	wlw_str_free(&j);
	return v;
}
