/*
 * db.c: workload-worker's connection: connecting (which also LISTENs on the
 * channel workload_channel names), NOTIFY wake-ups, and sending a
 * statement.  A call that finds the connection gone reconnects (with
 * backoff) and is sent again.  What the statements are is calls.c's.
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

/* A NOTIFY arrived (while waiting or with a statement's answer) not yet reported. */
static bool notify_pending = false;

/*
 * The channel was renamed (a member was removed from the tenant, and the
 * server said so on the old name): LISTEN on the new one before the next
 * statement.
 */
#define CHANNEL_ROTATED "workload.channel_rotated"
static bool relisten_pending = false;

static void
drain_notifies(void)
{
	PGnotify   *n;

	while ((n = PQnotifies(conn)) != NULL)
	{
		notify_pending = true;
		if (n->extra != NULL && strcmp(n->extra, CHANNEL_ROTATED) == 0)
			relisten_pending = true;
		PQfreemem(n);
	}
}

static bool listen_channel(void);

/*
 * wlw_db_notified says whether a NOTIFY arrived since it was last taken
 * (take: and takes it).
 */
bool
wlw_db_notified(bool take)
{
	bool		was = notify_pending;

	if (take)
		notify_pending = false;
	return was;
}

/*
 * wlw_db_exec_once sends one statement.  On success it returns the result;
 * else NULL with *err filled and *lost set when the connection is gone.
 */
PGresult *
wlw_db_exec_once(const char *sql, int n, const char *const *params, WlwError *err, bool *lost)
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
	if (relisten_pending)
	{
		relisten_pending = false;
		(void) listen_channel();
	}
	res = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
	{
		drain_notifies();
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

/* open: a connection to --dsn, on host and port instead when they are given */
static bool
open_conn(const char *host, const char *port)
{
	const char *keys[] = {"connect_timeout", "application_name", "dbname", "host", "port", NULL};
	const char *vals[] = {"10", "workload-worker", wlw_opt.dsn, host, port, NULL};

	if (host == NULL)
		keys[3] = NULL;
	conn = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		wlw_log("could not connect%s%s: %.*s", host ? " to " : "", host ? host : "",
				(int) strcspn(PQerrorMessage(conn), "\n"), PQerrorMessage(conn));
		wlw_db_close();
		return false;
	}
	PQsetNoticeProcessor(conn, notice_to_log, NULL);
	return true;
}

/*
 * follow_tenant: on a Citus cluster, the node that holds the tenant
 * (workload_tenant_node) is where its calls run and its NOTIFY is sent, so
 * the worker moves its connection there when --dsn reached another node
 * (asked again on every reconnect).  One node, or a server without the
 * function: the connection stays.
 */
static bool
follow_tenant(void)
{
	const char *params[1] = {wlw_opt.tenant};
	PGresult   *res;
	WlwError	err;
	bool		lost;
	char		host[256];
	char		port[16];

	res = wlw_db_exec_once("SELECT host, port::text FROM workload_tenant_node($1)", 1, params,
						   &err, &lost);
	if (res == NULL)
	{
		/* no such function (a server before 1.3): stay, silently; else say why */
		if (!lost && strcmp(err.sqlstate, "42883") != 0)
			wlw_log("could not ask where tenant %s lives (%s: %s); staying on this node",
					wlw_opt.tenant, err.sqlstate, err.message);
		return !lost;
	}
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		return true;
	}
	snprintf(host, sizeof(host), "%s", PQgetvalue(res, 0, 0));
	snprintf(port, sizeof(port), "%s", PQgetvalue(res, 0, 1));
	PQclear(res);
	if (strcmp(port, PQport(conn)) == 0 &&
		(strcmp(host, PQhost(conn)) == 0 || PQhost(conn)[0] == '/'))
		return true;			/* here already (a socket path names this host) */
	wlw_log("tenant %s is held by the node at %s:%s; connecting there", wlw_opt.tenant, host, port);
	wlw_db_close();
	return open_conn(host, port);
}

static bool
try_connect(void)
{
	if (!open_conn(NULL, NULL))
		return false;
	if (!follow_tenant() || !listen_channel())
	{
		wlw_db_close();
		return false;
	}
	wlw_log("connected (server pid %d)", PQbackendPID(conn));
	return true;
}

/*
 * listen_channel asks for the tenant's channel (workload_channel) and
 * LISTENs on it, and on nothing else.
 */
static bool
listen_channel(void)
{
	const char *params[2] = {wlw_opt.tenant, wlw_opt.application};
	PGresult   *res;
	WlwError	err;
	bool		lost;
	char	   *ident;
	char		sql[600];

	res = wlw_db_exec_once("SELECT workload_channel($1, $2)", 2, params, &err, &lost);
	if (res == NULL)
	{
		wlw_log("could not find the notification channel: %s", err.message);
		return false;
	}
	ident = PQescapeIdentifier(conn, PQgetvalue(res, 0, 0), strlen(PQgetvalue(res, 0, 0)));
	snprintf(sql, sizeof(sql), "LISTEN %s", ident ? ident : "\"\"");
	PQfreemem(ident);
	PQclear(res);
	res = wlw_db_exec_once("UNLISTEN *", 0, NULL, &err, &lost);
	if (res != NULL)
	{
		PQclear(res);
		res = wlw_db_exec_once(sql, 0, NULL, &err, &lost);
	}
	if (res == NULL)
	{
		wlw_log("could not LISTEN: %s", err.message);
		return false;
	}
	PQclear(res);
	wlw_log("%s", sql);
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
 * wlw_db_consume reads what the server sent while we were idle (see
 * wlw_db_notified).  Returns false when the connection is gone.
 */
bool
wlw_db_consume(void)
{
	if (conn == NULL || !PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK)
	{
		wlw_log("connection lost while waiting; reconnecting");
		return false;
	}
	drain_notifies();
	return true;
}

/*
 * wlw_db_call sends a statement, reconnecting and sending it again when the
 * connection was lost (at most five times).  *nocon says it never got
 * through.
 */
PGresult *
wlw_db_call(const char *sql, int n, const char *const *params, WlwError *err, bool *nocon)
{
	for (int tries = 0;; tries++)
	{
		bool		lost;
		PGresult   *res = wlw_db_exec_once(sql, n, params, err, &lost);

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

/*
 * wlw_db_verdict classifies a call's end: WLW_OK, WLW_NO_CONNECTION,
 * WLW_LOST for a fence refusal (WL006-WL008), else WLW_REFUSED.
 */
WlwCall
wlw_db_verdict(PGresult *res, bool nocon, WlwError *err)
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

/* wlw_db_value copies a result value (malloc'd), or NULL for SQL NULL. */
char *
wlw_db_value(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : strdup(PQgetvalue(res, row, col));
}

