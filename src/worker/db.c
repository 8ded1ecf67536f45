/*
 * db.c: workload-worker's connection and every SQL statement it sends.
 * Connecting also LISTENs on the tenant's channel.  A call that finds the
 * connection gone reconnects (with backoff) and is sent again; the claim
 * is the exception, since a claim that committed before the drop would be
 * taken twice: the caller reconnects and claims afresh, and the lost claim
 * comes back through lease recovery.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libpq-fe.h"

#include "db.h"
#include "log.h"
#include "options.h"
#include "signals.h"

static PGconn *conn = NULL;

static const char *const claim_sql =
"SELECT workload_id, claim_id, fencing_token, attempt, definition_id, "
"       definition_revision, input::text, checkpoint_sequence "
"FROM workload_claim($1, $2::text[], $3, $4, $5::interval, $6::integer, start => true)";

/* wlw_db_close drops the connection, if any. */
void
wlw_db_close(void)
{
	if (conn)
		PQfinish(conn);
	conn = NULL;
}

/* wlw_db_socket is the connection's socket, for poll(); -1 when none. */
int
wlw_db_socket(void)
{
	return conn ? PQsocket(conn) : -1;
}

static void
drain_notifies(bool *notified)
{
	PGnotify   *n;

	while ((n = PQnotifies(conn)) != NULL)
	{
		if (notified)
			*notified = true;
		PQfreemem(n);
	}
}

/*
 * exec_once sends one statement.  On success it returns the result; else
 * NULL with *err filled and *lost set when the connection is gone.
 */
static PGresult *
exec_once(const char *sql, int n, const char *const *params, WlwError *err, bool *lost)
{
	PGresult   *res;
	ExecStatusType st;
	const char *state;
	const char *msg;

	*lost = false;
	memset(err, 0, sizeof(*err));
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		*lost = true;
		snprintf(err->message, sizeof(err->message), "not connected");
		return NULL;
	}
	res = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
	{
		drain_notifies(NULL);
		return res;
	}
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	snprintf(err->sqlstate, sizeof(err->sqlstate), "%s", state ? state : "");
	snprintf(err->message, sizeof(err->message), "%s", msg ? msg : PQerrorMessage(conn));
	err->message[strcspn(err->message, "\n")] = '\0';
	msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	snprintf(err->detail, sizeof(err->detail), "%s", msg ? msg : "");
	PQclear(res);
	if (PQstatus(conn) != CONNECTION_OK || strncmp(err->sqlstate, "08", 2) == 0 ||
		strncmp(err->sqlstate, "57P0", 4) == 0)
		*lost = true;
	return NULL;
}

/* notice_to_log: server notices and errors that arrive between queries */
static void
notice_to_log(void *arg, const char *message)
{
	wlw_log("server: %.*s", (int) strcspn(message, "\n"), message);
}

static bool
try_connect(void)
{
	const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
	const char *vals[] = {"10", "workload-worker", wlw_opt.dsn, NULL};
	const char *params[2] = {wlw_opt.tenant, wlw_opt.application};
	PGresult   *res;
	WlwError	err;
	bool		lost;
	char	   *ident;
	char		sql[600];

	conn = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		wlw_log("could not connect: %.*s", (int) strcspn(PQerrorMessage(conn), "\n"),
				PQerrorMessage(conn));
		wlw_db_close();
		return false;
	}
	PQsetNoticeProcessor(conn, notice_to_log, NULL);
	res = exec_once("SELECT workload_channel($1, $2)", 2, params, &err, &lost);
	if (res == NULL)
	{
		wlw_log("could not find the notification channel: %s", err.message);
		wlw_db_close();
		return false;
	}
	ident = PQescapeIdentifier(conn, PQgetvalue(res, 0, 0), strlen(PQgetvalue(res, 0, 0)));
	snprintf(sql, sizeof(sql), "LISTEN %s", ident ? ident : "\"\"");
	PQfreemem(ident);
	PQclear(res);
	res = exec_once(sql, 0, NULL, &err, &lost);
	if (res == NULL)
	{
		wlw_log("could not LISTEN: %s", err.message);
		wlw_db_close();
		return false;
	}
	PQclear(res);
	wlw_log("connected (server pid %d); %s", PQbackendPID(conn), sql);
	return true;
}

/*
 * wlw_db_connect (re)connects, retrying with backoff (0.5 s doubling to
 * 10 s).  It gives up, returning false, only when the worker is stopping
 * (wlw_should_give_up).
 */
bool
wlw_db_connect(void)
{
	int			backoff_ms = 500;

	wlw_db_close();
	for (;;)
	{
		struct pollfd pfd = {wlw_signal_fd(), POLLIN, 0};
		int64_t		until;

		if (try_connect())
			return true;
		until = wlw_now_ms() + backoff_ms;
		while (!wlw_should_give_up() && wlw_now_ms() < until)
		{
			poll(&pfd, 1, (int) (until - wlw_now_ms()));
			wlw_signals_drain();
		}
		if (wlw_should_give_up())
			return false;
		backoff_ms = backoff_ms * 2 > 10000 ? 10000 : backoff_ms * 2;
	}
}

/*
 * wlw_db_consume reads what the server sent while we were idle; sets
 * *notified on a NOTIFY.  Returns false when the connection is gone.
 */
bool
wlw_db_consume(bool *notified)
{
	if (conn == NULL || !PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK)
	{
		wlw_log("connection lost while waiting; reconnecting");
		return false;
	}
	drain_notifies(notified);
	return true;
}

/*
 * call sends a statement, reconnecting and sending it again when the
 * connection was lost (at most five times).  *nocon says it never got
 * through.
 */
static PGresult *
call(const char *sql, int n, const char *const *params, WlwError *err, bool *nocon)
{
	for (int tries = 0;; tries++)
	{
		bool		lost;
		PGresult   *res = exec_once(sql, n, params, err, &lost);

		*nocon = false;
		if (res || !lost)
			return res;
		wlw_log("connection lost (%s); reconnecting", err->message);
		if (tries >= 5 || !wlw_db_connect())
		{
			*nocon = true;
			return NULL;
		}
	}
}

static WlwCall
verdict(PGresult *res, bool nocon, WlwError *err)
{
	if (res)
		return WLW_OK;
	if (nocon)
		return WLW_NO_CONNECTION;
	if (strcmp(err->sqlstate, "WL006") == 0 || strcmp(err->sqlstate, "WL007") == 0 ||
		strcmp(err->sqlstate, "WL008") == 0)
		return WLW_LOST;
	return WLW_REFUSED;
}

static char *
dup_value(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : strdup(PQgetvalue(res, row, col));
}

/*
 * wlw_db_claim claims (and starts) up to --batch workloads.  Returns how
 * many, with *items allocated; -1 on a refusal (logged) or a lost
 * connection (*conn_lost).
 */
int
wlw_db_claim(WlwItem **items, WlwError *err, bool *conn_lost)
{
	char		lease[32];
	char		batch[16];
	const char *params[6];
	PGresult   *res;
	int			n;

	snprintf(lease, sizeof(lease), "%g seconds", wlw_opt.lease_s);
	snprintf(batch, sizeof(batch), "%d", wlw_opt.batch);
	params[0] = wlw_opt.worker_id;
	params[1] = wlw_opt.caps_literal;
	params[2] = wlw_opt.tenant;
	params[3] = wlw_opt.application;
	params[4] = lease;
	params[5] = batch;
	res = exec_once(claim_sql, 6, params, err, conn_lost);
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

		it->workload_id = dup_value(res, i, 0);
		it->claim_id = dup_value(res, i, 1);
		snprintf(it->token, sizeof(it->token), "%s", PQgetvalue(res, i, 2));
		it->attempt = atoi(PQgetvalue(res, i, 3));
		it->definition_id = dup_value(res, i, 4);
		it->definition_revision = dup_value(res, i, 5);
		it->input = dup_value(res, i, 6);
		it->checkpoint_sequence = atoi(PQgetvalue(res, i, 7));
		wlw_log("claimed %s (attempt %d, fencing token %s, claim %s)",
				it->workload_id, it->attempt, it->token, it->claim_id);
	}
	PQclear(res);
	return n;
}

/* wlw_items_free frees what wlw_db_claim allocated. */
void
wlw_items_free(WlwItem *items, int n)
{
	for (int i = 0; i < n; i++)
	{
		free(items[i].workload_id);
		free(items[i].claim_id);
		free(items[i].definition_id);
		free(items[i].definition_revision);
		free(items[i].input);
		free(items[i].progress);
	}
	free(items);
}

/* fence_call sends fn(workload_id, claim_id, worker_id, token, extra...). */
static WlwCall
fence_call(const char *sql, WlwItem *it, int nextra, const char *const *extra,
		   WlwError *err, char **value)
{
	const char *params[8];
	PGresult   *res;
	bool		nocon;
	WlwCall		v;

	params[0] = it->workload_id;
	params[1] = it->claim_id;
	params[2] = wlw_opt.worker_id;
	params[3] = it->token;
	for (int i = 0; i < nextra; i++)
		params[4 + i] = extra[i];
	res = call(sql, 4 + nextra, params, err, &nocon);
	v = verdict(res, nocon, err);
	if (value)
		*value = (res && PQntuples(res) > 0) ? dup_value(res, 0, 0) : NULL;
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
	"SELECT workload_heartbeat($1, $2, $3, $4::bigint, $5::interval, $6::jsonb) ->> 'cancellation_requested'";
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

	return fence_call("SELECT workload_checkpoint($1, $2, $3, $4::bigint, $5::jsonb)",
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
	return fence_call("SELECT workload_complete($1, $2, $3, $4::bigint, $5, $6::jsonb)",
					  it, 2, extra, err, NULL);
}

/* wlw_db_fail fails the attempt; *state is where the workload ended (malloc'd). */
WlwCall
wlw_db_fail(WlwItem *it, const char *kind, const char *error, char **state, WlwError *err)
{
	const char *extra[2] = {kind, error};

	return fence_call("SELECT workload_fail($1, $2, $3, $4::bigint, $5, $6)::text",
					  it, 2, extra, err, state);
}

/* wlw_db_confirm_cancel moves CANCELLATION_REQUESTED on to CANCELLED. */
WlwCall
wlw_db_confirm_cancel(WlwItem *it, WlwError *err)
{
	return fence_call("SELECT workload_confirm_cancel($1, $2, $3, $4::bigint)",
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
	"WITH c AS MATERIALIZED (SELECT workload_execution_context($1, $2, $3, $4::bigint) AS x), "
	"     r AS MATERIALIZED (SELECT workload_resume($1, $2, $3, $4::bigint, $5::jsonb) AS y FROM c) "
	"SELECT (SELECT jsonb_object_agg(key, value) FROM jsonb_each(x) "
	"        WHERE key IN ('attempt_id', 'capabilities', 'connection_scopes', 'environment'))::text, "
	"       coalesce((y -> 'checkpoint' ->> 'sequence')::int, 0), "
	"       (y -> 'checkpoint' -> 'state')::text, "
	"       nullif(y -> 'wake', 'null'::jsonb)::text "
	"FROM c, r";
	const char *params[5];
	PGresult   *res;
	bool		nocon;
	WlwCall		v;

	memset(start, 0, sizeof(*start));
	params[0] = it->workload_id;
	params[1] = it->claim_id;
	params[2] = wlw_opt.worker_id;
	params[3] = it->token;
	params[4] = wlw_opt.expected_snapshots;
	res = call(sql, 5, params, err, &nocon);
	v = verdict(res, nocon, err);
	if (v == WLW_OK && PQntuples(res) == 1)
	{
		start->context = dup_value(res, 0, 0);
		start->checkpoint_sequence = atoi(PQgetvalue(res, 0, 1));
		start->checkpoint = dup_value(res, 0, 2);
		start->wake = dup_value(res, 0, 3);
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
