/*
 * bench/latency_probe.c: time from a workload's create commit to its claim by
 * an idle worker.
 *
 *   latency_probe <dbname> <tenant> <app> <count> <poll_ms> <gap_ms> <listen> [bare]
 *
 * A child process is the worker: with listen = 1 it LISTENs on
 * workload_channel(tenant, app); whenever a claim finds nothing it waits for
 * a notification (or, with listen = 0, just sleeps) for at most poll_ms, then
 * claims again (the poll fallback).  It starts and completes
 * each workload it claims.  The parent is the producer: every gap_ms (jittered
 * by +-50%, so the probe never locks onto the poll phase) it creates one
 * workload and stamps the moment the create's commit returned.  Latency is
 * that stamp to the moment the worker's claim returned the workload, on
 * CLOCK_MONOTONIC (the same clock in both processes).
 *
 * Output, one line each: "notifications <n>", then "woke <notify|poll|busy>
 * <latency_ms>" per workload (what woke the worker before the claim that got
 * it), then "summary ...".  A NOTIFY latency is only meaningful when
 * notifications arrived; bench/run.sh prints "pending NOTIFY" otherwise.
 *
 * With "bare" as the last argument the same two processes run a bare queue
 * instead, the floor of this machine for the same path: the producer inserts
 * a row into bench_latency_queue and notifies bench_latency in one autocommit
 * statement, and the worker claims with one UPDATE ... FOR UPDATE SKIP LOCKED
 * and then writes the row twice more (start, complete), each its own commit,
 * as workload's worker does.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#define MAX_ITEMS 100000

/* the bare queue ("bare"): a plain table with a partial index, as bench/sql's (a) */
#define BARE_SETUP \
	"CREATE TABLE IF NOT EXISTS bench_latency_queue (id bigserial PRIMARY KEY, " \
	"key text NOT NULL, state text NOT NULL DEFAULT 'ready', " \
	"claimed_at timestamptz, done_at timestamptz); " \
	"CREATE INDEX IF NOT EXISTS bench_latency_ready ON bench_latency_queue (id) " \
	"WHERE state = 'ready'"
#define BARE_CREATE \
	"WITH i AS (INSERT INTO bench_latency_queue (key) VALUES ($1) RETURNING id) " \
	"SELECT i.id::text, pg_notify('bench_latency', '') FROM i"
#define BARE_CLAIM \
	"UPDATE bench_latency_queue SET state = 'claimed', claimed_at = now() " \
	"WHERE id = (SELECT id FROM bench_latency_queue WHERE state = 'ready' " \
	"ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id::text, '', '0'"
#define BARE_START "UPDATE bench_latency_queue SET state = 'running' WHERE id = $1::bigint"
#define BARE_COMPLETE \
	"UPDATE bench_latency_queue SET state = 'done', done_at = now() WHERE id = $1::bigint"

typedef struct Stamp
{
	char		id[64];
	double		t;				/* ms, CLOCK_MONOTONIC */
	char		woke[8];
} Stamp;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static PGconn *
connect_db(const char *dbname)
{
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {dbname, "latency_probe", NULL};
	PGconn	   *conn = PQconnectdbParams(keys, vals, 1);

	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "latency_probe: %s", PQerrorMessage(conn));
		exit(1);
	}
	return conn;
}

static PGresult *
run(PGconn *conn, const char *sql, int n, const char *const *params, ExecStatusType want)
{
	PGresult   *res = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(res) != want)
	{
		fprintf(stderr, "latency_probe: %s: %s", sql, PQerrorMessage(conn));
		exit(1);
	}
	return res;
}

/* The worker: claim, else wait for a notification or poll_ms; start, complete. */
static void
worker(const char *dbname, const char *tenant, const char *app, int count,
	   int poll_ms, int do_listen, int bare, int ready_fd, FILE *out)
{
	PGconn	   *conn = connect_db(dbname);
	const char *chan_params[] = {tenant, app};
	PGresult   *res;
	char	   *listen;
	char	   *ident;
	const char *woke = "busy";
	int			got = 0;
	long		notifications = 0;
	Stamp	   *stamps = calloc(count, sizeof(Stamp));
	double		deadline;

	res = bare ? run(conn, "SELECT 'bench_latency'", 0, NULL, PGRES_TUPLES_OK)
		: run(conn, "SELECT workload_channel($1, $2)", 2, chan_params, PGRES_TUPLES_OK);
	ident = PQescapeIdentifier(conn, PQgetvalue(res, 0, 0), strlen(PQgetvalue(res, 0, 0)));
	PQclear(res);
	listen = malloc(strlen(ident) + 16);
	sprintf(listen, "LISTEN %s", ident);
	if (do_listen)
		PQclear(run(conn, listen, 0, NULL, PGRES_COMMAND_OK));
	if (write(ready_fd, "r", 1) != 1)
		exit(1);
	close(ready_fd);

	deadline = now_ms() + 600000.0;
	while (got < count && now_ms() < deadline)
	{
		const char *claim_params[] = {"bench-latency", tenant, app};

		res = bare ? run(conn, BARE_CLAIM, 0, NULL, PGRES_TUPLES_OK)
			: run(conn,
				  "SELECT workload_id, claim_id, fencing_token::text "
				  "FROM workload_claim($1, '{}', $2, $3)",
				  3, claim_params, PGRES_TUPLES_OK);
		if (PQntuples(res) == 1)
		{
			double		t = now_ms();
			const char *done_params[] = {PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
			"bench-latency", PQgetvalue(res, 0, 2)};

			snprintf(stamps[got].id, sizeof(stamps[got].id), "%s", PQgetvalue(res, 0, 0));
			stamps[got].t = t;
			snprintf(stamps[got].woke, sizeof(stamps[got].woke), "%s", woke);
			got++;
			if (bare)
			{
				PQclear(run(conn, BARE_START, 1, done_params, PGRES_COMMAND_OK));
				PQclear(run(conn, BARE_COMPLETE, 1, done_params, PGRES_COMMAND_OK));
				PQclear(res);
				woke = "busy";
				continue;
			}
			PQclear(run(conn, "SELECT workload_start($1, $2, $3, $4::bigint)",
						4, done_params, PGRES_TUPLES_OK));
			PQclear(run(conn, "SELECT 1 FROM workload_complete($1, $2, $3, $4::bigint, "
						"'r-' || $1, '{\"ok\": true}')",
						4, done_params, PGRES_TUPLES_OK));
			PQclear(res);
			woke = "busy";
			continue;
		}
		PQclear(res);

		/* nothing to do: wait for a notification, at most poll_ms */
		{
			int			sock = PQsocket(conn);
			fd_set		rfds;
			struct timeval tv = {poll_ms / 1000, (poll_ms % 1000) * 1000};
			PGnotify   *n;
			int			r;

			woke = "poll";
			FD_ZERO(&rfds);
			FD_SET(sock, &rfds);
			r = select(sock + 1, &rfds, NULL, NULL, &tv);
			if (r < 0 && errno != EINTR)
				exit(1);
			PQconsumeInput(conn);
			while ((n = PQnotifies(conn)) != NULL)
			{
				notifications++;
				woke = "notify";
				PQfreemem(n);
			}
		}
	}
	fprintf(out, "notifications %ld\n", notifications);
	for (int i = 0; i < got; i++)
		fprintf(out, "%s %.3f %s\n", stamps[i].id, stamps[i].t, stamps[i].woke);
	fflush(out);
	PQfinish(conn);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	const char *dbname, *tenant, *app;
	int			count, poll_ms, gap_ms, do_listen, bare;
	int			ready[2], data[2];
	pid_t		pid;
	PGconn	   *conn;
	Stamp	   *made;
	double	   *lat;
	int			nlat = 0;
	long		notifications = 0;
	int			by_notify = 0, by_poll = 0, by_busy = 0;
	char		line[256];
	FILE	   *in;

	if (argc != 8 && !(argc == 9 && strcmp(argv[8], "bare") == 0))
	{
		fprintf(stderr, "usage: latency_probe dbname tenant app count poll_ms gap_ms listen [bare]\n");
		return 2;
	}
	dbname = argv[1];
	tenant = argv[2];
	app = argv[3];
	count = atoi(argv[4]);
	poll_ms = atoi(argv[5]);
	gap_ms = atoi(argv[6]);
	do_listen = atoi(argv[7]);
	bare = (argc == 9);
	if (count < 1 || count > MAX_ITEMS || poll_ms < 1 || gap_ms < 2)
	{
		fprintf(stderr, "latency_probe: count 1..%d, poll_ms >= 1, gap_ms >= 2\n", MAX_ITEMS);
		return 2;
	}
	if (bare)
	{
		PGresult   *res;

		conn = connect_db(dbname);
		res = PQexec(conn, BARE_SETUP);	/* two statements: not PQexecParams */
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			fprintf(stderr, "latency_probe: %s", PQerrorMessage(conn));
			return 1;
		}
		PQclear(res);
		PQfinish(conn);
	}
	if (pipe(ready) != 0 || pipe(data) != 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
	{
		FILE	   *out;

		close(ready[0]);
		close(data[0]);
		out = fdopen(data[1], "w");
		worker(dbname, tenant, app, count, poll_ms, do_listen, bare, ready[1], out);
		fclose(out);
		_exit(0);
	}
	close(ready[1]);
	close(data[1]);
	if (read(ready[0], line, 1) != 1)
	{
		fprintf(stderr, "latency_probe: the worker did not start\n");
		return 1;
	}

	conn = connect_db(dbname);
	made = calloc(count, sizeof(Stamp));
	srandom(getpid());
	for (int i = 0; i < count; i++)
	{
		char		key[64];
		const char *params[] = {key, tenant, app};
		PGresult   *res;
		long		us = (long) gap_ms * 500 + random() % ((long) gap_ms * 1000);

		usleep(us);
		snprintf(key, sizeof(key), "latency-%d-%d", (int) getpid(), i);
		res = bare ? run(conn, BARE_CREATE, 1, params, PGRES_TUPLES_OK)
			: run(conn, "SELECT workload_create(bench.spec($1, $2, $3))->>'workload_id'",
				  3, params, PGRES_TUPLES_OK);
		made[i].t = now_ms();
		snprintf(made[i].id, sizeof(made[i].id), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	PQfinish(conn);

	/* the worker's stamps, matched to the producer's by workload id */
	in = fdopen(data[0], "r");
	lat = calloc(count, sizeof(double));
	while (fgets(line, sizeof(line), in))
	{
		char		id[64], woke[8];
		double		t;

		if (sscanf(line, "notifications %ld", &notifications) == 1)
			continue;
		if (sscanf(line, "%63s %lf %7s", id, &t, woke) != 3)
			continue;
		for (int i = 0; i < count; i++)
			if (strcmp(made[i].id, id) == 0)
			{
				lat[nlat++] = t - made[i].t;
				printf("woke %s %.3f\n", woke, t - made[i].t);
				if (strcmp(woke, "notify") == 0)
					by_notify++;
				else if (strcmp(woke, "poll") == 0)
					by_poll++;
				else
					by_busy++;
				break;
			}
	}
	waitpid(pid, NULL, 0);
	printf("notifications %ld\n", notifications);
	if (nlat == 0)
	{
		printf("summary n=0\n");
		return 1;
	}
	qsort(lat, nlat, sizeof(double), cmp_double);
	printf("summary n=%d p50_ms=%.3f p90_ms=%.3f max_ms=%.3f woke_notify=%d woke_poll=%d woke_busy=%d\n",
		   nlat, lat[nlat / 2], lat[(nlat * 9) / 10], lat[nlat - 1], by_notify, by_poll, by_busy);
	return 0;
}
