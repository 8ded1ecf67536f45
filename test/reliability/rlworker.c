/*
 * rlworker.c: the reliability scenarios' stand-in workers and clients, as
 * plain libpq sessions (not the reference worker).  One program, three roles:
 *
 *   rlworker worker  --dsn DSN --id ID --out FILE [--lease-ms N] [--work-ms N]
 *                    [--stall-pct P] [--stall-extra-ms N] [--seed N]
 *       claims one workload at a time with workload_claim(..., start => true),
 *       optionally works (sleeps) or stalls past its lease, and completes it
 *       with workload_complete, each call in autocommit.  A completion whose
 *       connection dropped is "uncertain" and is sent again, unchanged, after
 *       reconnecting (it is idempotent on result_id).
 *   rlworker creator --dsn DSN --out FILE --grant FILE --prefix P --count N
 *                    [--dep-every K] [--pause-ms N]
 *       creates workloads P-1..P-N in order, retrying a create whose
 *       connection dropped with the same idempotency key.
 *   rlworker ticker  --dsn DSN --out FILE [--interval-ms N]
 *       calls workload_recover_expired() every interval.
 *
 * Every answer the database acknowledged is appended to --out as one
 * tab-separated line, before the program does anything else:
 *   CLAIM    workload_id fencing_token claim_id attempt ms claim_latency_ms
 *   ACK      workload_id result_id output_hash fencing_token ms
 *   REFUSED  workload_id fencing_token sqlstate ms
 *   CREATED  workload_id key ms
 * and, for the record, UNCERTAIN, STALL, LOST, CONNECTED, ERROR and SUMMARY
 * lines.  ms is wall-clock milliseconds since the epoch.  SIGTERM stops the
 * program after the call in progress; it reconnects forever otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

static volatile sig_atomic_t stop_requested = 0;
static PGconn *conn = NULL;
static int	out_fd = -1;
static const char *dsn = NULL;
static long n_lost = 0;

static void on_notice(void *arg, const char *message);

static void
on_term(int sig)
{
	stop_requested = 1;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* sleep_ms sleeps up to ms, waking early when a stop is requested */
static void
sleep_ms(long ms)
{
	while (ms > 0 && !stop_requested)
	{
		long		step = ms > 50 ? 50 : ms;
		struct timespec ts = {step / 1000, (step % 1000) * 1000000L};

		nanosleep(&ts, NULL);
		ms -= step;
	}
}

/* record appends one line to the output file in a single write */
static void
record(const char *fmt,...)
{
	char		buf[2048];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int) sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(out_fd, buf, n) != n)
	{
		perror("write");
		exit(2);
	}
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* ensure_conn: a live connection, or false after one failed attempt */
static int
ensure_conn(void)
{
	if (conn && PQstatus(conn) == CONNECTION_OK)
		return 1;
	if (conn)
		PQfinish(conn);
	conn = PQconnectdb(dsn);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		PQfinish(conn);
		conn = NULL;
		return 0;
	}
	PQsetNoticeProcessor(conn, on_notice, NULL);
	record("CONNECTED\t%lld\t%s:%s", now_ms(), PQhost(conn), PQport(conn));
	return 1;
}

/*
 * lost: the call's outcome is unknown because the connection (or the
 * server) went away; anything with a SQLSTATE the server sent is an answer.
 */
static int
lost(PGresult *res)
{
	const char *st;

	if (PQstatus(conn) != CONNECTION_OK)
		return 1;
	st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (st == NULL)
		return 1;
	/* connection exceptions, admin/crash shutdown, cannot connect now */
	return strncmp(st, "08", 2) == 0 || strcmp(st, "57P01") == 0 ||
		strcmp(st, "57P02") == 0 || strcmp(st, "57P03") == 0;
}

/* libpq's notices (e.g. FATAL on a server crash) go to the record, not stderr */
static void
on_notice(void *arg, const char *message)
{
	char		buf[512];
	size_t		n;

	snprintf(buf, sizeof(buf), "%s", message);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	record("NOTICE\t%lld\t%s", now_ms(), buf);
}

static void
drop_conn(void)
{
	if (conn)
		PQfinish(conn);
	conn = NULL;
	n_lost++;
	record("LOST\t%lld", now_ms());
}

static const char *
opt(int argc, char **argv, const char *name, const char *dflt)
{
	for (int i = 2; i < argc - 1; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return dflt;
}

static char *
read_file(const char *path)
{
	FILE	   *f = fopen(path, "r");
	long		n;
	char	   *s;

	if (!f)
	{
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc(n + 1);
	if (fread(s, 1, n, f) != (size_t) n)
		exit(2);
	s[n] = 0;
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	fclose(f);
	return s;
}

/* ---- worker ---- */

typedef struct Claim
{
	char		workload_id[128];
	char		claim_id[128];
	char		token[32];
} Claim;

static const char *CLAIM_SQL =
"SELECT workload_id, claim_id, fencing_token, attempt "
"FROM workload_claim($1, '{}'::text[], $2, $3, $4::interval, 1, true)";

static const char *COMPLETE_SQL =
"SELECT r ->> 'result_id', r ->> 'output_hash' "
"FROM workload_complete($1, $2, $3, $4::bigint, $5, $6::jsonb) r";

/*
 * complete sends one completion until the database answers (acknowledged
 * or refused), reconnecting after each lost connection; gives up only on
 * SIGTERM or after give_up_ms without an answer.
 */
static void
complete(const char *id, const Claim *c, long give_up_ms, long *acks, long *refused, long *uncertain)
{
	char		result_id[256];
	char		output[512];
	const char *params[6];
	long long	t0 = mono_ms();

	snprintf(result_id, sizeof(result_id), "r:%s:%s", c->workload_id, c->token);
	snprintf(output, sizeof(output), "{\"workload\": \"%s\", \"by\": \"%s\", \"fence\": %s}",
			 c->workload_id, id, c->token);
	params[0] = c->workload_id;
	params[1] = c->claim_id;
	params[2] = id;
	params[3] = c->token;
	params[4] = result_id;
	params[5] = output;
	for (;;)
	{
		PGresult   *res;

		if (mono_ms() - t0 > give_up_ms || (stop_requested && mono_ms() - t0 > 2000))
		{
			record("GAVEUP\t%s\t%s\t%lld", c->workload_id, c->token, now_ms());
			return;
		}
		if (!ensure_conn())
		{
			sleep_ms(100);
			continue;
		}
		res = PQexecParams(conn, COMPLETE_SQL, 6, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		{
			record("ACK\t%s\t%s\t%s\t%s\t%lld", c->workload_id, PQgetvalue(res, 0, 0),
				   PQgetvalue(res, 0, 1), c->token, now_ms());
			(*acks)++;
			PQclear(res);
			return;
		}
		if (lost(res))
		{
			PQclear(res);
			drop_conn();
			record("UNCERTAIN\t%s\t%s\t%lld", c->workload_id, c->token, now_ms());
			(*uncertain)++;
			sleep_ms(100);
			continue;
		}
		record("REFUSED\t%s\t%s\t%s\t%lld", c->workload_id, c->token,
			   PQresultErrorField(res, PG_DIAG_SQLSTATE), now_ms());
		(*refused)++;
		PQclear(res);
		return;
	}
}

static int
run_worker(int argc, char **argv)
{
	const char *id = opt(argc, argv, "--id", "w");
	const char *tenant = opt(argc, argv, "--tenant", "t1");
	const char *app = opt(argc, argv, "--app", "app");
	long		lease_ms = atol(opt(argc, argv, "--lease-ms", "5000"));
	long		work_ms = atol(opt(argc, argv, "--work-ms", "0"));
	int			stall_pct = atoi(opt(argc, argv, "--stall-pct", "0"));
	long		stall_extra = atol(opt(argc, argv, "--stall-extra-ms", "1500"));
	long		give_up_ms = atol(opt(argc, argv, "--give-up-ms", "120000"));
	char		lease[64];
	long		claims = 0, acks = 0, refused = 0, uncertain = 0, stalls = 0, errors = 0;
	long long	max_claim_ms = 0, sum_claim_ms = 0;

	snprintf(lease, sizeof(lease), "%ld milliseconds", lease_ms);
	while (!stop_requested)
	{
		const char *params[4] = {id, tenant, app, lease};
		PGresult   *res;
		Claim		c;
		long long	t0, took;

		if (!ensure_conn())
		{
			sleep_ms(100);
			continue;
		}
		t0 = mono_ms();
		res = PQexecParams(conn, CLAIM_SQL, 4, NULL, params, NULL, NULL, 0);
		took = mono_ms() - t0;
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			if (lost(res))
				drop_conn();	/* a claim that committed unseen is recovered by the tick */
			else
			{
				record("ERROR\tclaim\t%s\t%s", PQresultErrorField(res, PG_DIAG_SQLSTATE),
					   PQresultErrorMessage(res));
				errors++;
			}
			PQclear(res);
			sleep_ms(100);
			continue;
		}
		if (PQntuples(res) == 0)
		{
			PQclear(res);
			sleep_ms(20 + rnd() % 30);
			continue;
		}
		claims++;
		sum_claim_ms += took;
		if (took > max_claim_ms)
			max_claim_ms = took;
		snprintf(c.workload_id, sizeof(c.workload_id), "%s", PQgetvalue(res, 0, 0));
		snprintf(c.claim_id, sizeof(c.claim_id), "%s", PQgetvalue(res, 0, 1));
		snprintf(c.token, sizeof(c.token), "%s", PQgetvalue(res, 0, 2));
		record("CLAIM\t%s\t%s\t%s\t%s\t%lld\t%lld", c.workload_id, c.token, c.claim_id,
			   PQgetvalue(res, 0, 3), now_ms(), took);
		PQclear(res);
		if (stall_pct > 0 && (int) (rnd() % 100) < stall_pct)
		{
			/* a worker that hangs past its lease: its completion must be refused */
			record("STALL\t%s\t%s\t%lld", c.workload_id, c.token, now_ms());
			stalls++;
			sleep_ms(lease_ms + stall_extra);
		}
		else if (work_ms > 0)
			sleep_ms(rnd() % (work_ms + 1));
		complete(id, &c, give_up_ms, &acks, &refused, &uncertain);
	}
	record("SUMMARY\tclaims=%ld\tacks=%ld\trefused=%ld\tuncertain=%ld\tstalls=%ld\tlost=%ld\terrors=%ld\tmax_claim_ms=%lld\tavg_claim_ms=%.2f",
		   claims, acks, refused, uncertain, stalls, n_lost, errors, max_claim_ms,
		   claims ? (double) sum_claim_ms / claims : 0.0);
	return 0;
}

/* ---- creator ---- */

static const char *CREATE_SQL =
"SELECT workload_create(jsonb_build_object("
"  'tenant_id', 't1', 'application_id', 'app', 'environment', 'test',"
"  'definition_id', 'rl.task', 'definition_revision', 'r1', 'trigger', 'test',"
"  'input', jsonb_build_object('key', $1::text, 'n', $2::int),"
"  'requested_by', jsonb_build_object('kind', 'agent', 'id', 'tester'),"
"  'authorization_snapshot', $3::jsonb, 'capability_snapshot', '[]'::jsonb,"
"  'retry_policy', jsonb_build_object('max_attempts', 1000, 'initial_delay_ms', 0, 'backoff', 'fixed'),"
"  'idempotency_key', $1::text,"
"  'dependencies', CASE WHEN $4::text IS NULL THEN '[]'::jsonb"
"    ELSE jsonb_build_array(jsonb_build_object('workload_id', $4::text)) END)) ->> 'workload_id'";

static int
run_creator(int argc, char **argv)
{
	const char *prefix = opt(argc, argv, "--prefix", "k");
	long		count = atol(opt(argc, argv, "--count", "100"));
	int			dep_every = atoi(opt(argc, argv, "--dep-every", "0"));
	long		pause_ms = atol(opt(argc, argv, "--pause-ms", "0"));
	char	   *grant = read_file(opt(argc, argv, "--grant", "grant.json"));
	char		prev[128] = "";
	long		created = 0, retried = 0, errors = 0;

	for (long i = 1; i <= count && !stop_requested; i++)
	{
		char		key[128], n[32];
		const char *params[4];

		snprintf(key, sizeof(key), "%s-%ld", prefix, i);
		snprintf(n, sizeof(n), "%ld", i);
		params[0] = key;
		params[1] = n;
		params[2] = grant;
		params[3] = (dep_every > 0 && i % dep_every == 0 && prev[0]) ? prev : NULL;
		for (;;)
		{
			PGresult   *res;

			if (stop_requested)
				break;
			if (!ensure_conn())
			{
				sleep_ms(100);
				continue;
			}
			res = PQexecParams(conn, CREATE_SQL, 4, NULL, params, NULL, NULL, 0);
			if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
			{
				snprintf(prev, sizeof(prev), "%s", PQgetvalue(res, 0, 0));
				record("CREATED\t%s\t%s\t%lld", prev, key, now_ms());
				created++;
				PQclear(res);
				break;
			}
			if (lost(res))
			{
				PQclear(res);
				drop_conn();
				retried++;		/* the same key again: idempotent */
				sleep_ms(100);
				continue;
			}
			record("ERROR\tcreate\t%s\t%s\t%s", key, PQresultErrorField(res, PG_DIAG_SQLSTATE),
				   PQresultErrorMessage(res));
			errors++;
			PQclear(res);
			break;
		}
		if (pause_ms > 0)
			sleep_ms(pause_ms);
	}
	record("SUMMARY\tcreated=%ld\tretried=%ld\terrors=%ld\tlost=%ld", created, retried, errors, n_lost);
	return 0;
}

/* ---- ticker ---- */

static int
run_ticker(int argc, char **argv)
{
	long		interval = atol(opt(argc, argv, "--interval-ms", "500"));
	long		ticks = 0, recovered = 0;

	while (!stop_requested)
	{
		PGresult   *res;

		if (!ensure_conn())
		{
			sleep_ms(100);
			continue;
		}
		res = PQexec(conn, "SELECT count(*) FROM workload_recover_expired()");
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
		{
			ticks++;
			recovered += atol(PQgetvalue(res, 0, 0));
		}
		else if (lost(res))
			drop_conn();
		else
			record("ERROR\ttick\t%s\t%s", PQresultErrorField(res, PG_DIAG_SQLSTATE),
				   PQresultErrorMessage(res));
		PQclear(res);
		sleep_ms(interval);
	}
	record("SUMMARY\tticks=%ld\trecovered=%ld\tlost=%ld", ticks, recovered, n_lost);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	const char *out;
	int			rc;

	if (argc < 2)
	{
		fprintf(stderr, "usage: rlworker worker|creator|ticker --dsn DSN --out FILE ...\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	dsn = opt(argc, argv, "--dsn", "dbname=postgres");
	out = opt(argc, argv, "--out", "/dev/stdout");
	rng_state ^= (uint64_t) atoll(opt(argc, argv, "--seed", "1")) * 0x9E3779B97F4A7C15ULL + getpid();
	out_fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out_fd < 0)
	{
		perror(out);
		return 2;
	}
	if (strcmp(argv[1], "worker") == 0)
		rc = run_worker(argc, argv);
	else if (strcmp(argv[1], "creator") == 0)
		rc = run_creator(argc, argv);
	else if (strcmp(argv[1], "ticker") == 0)
		rc = run_ticker(argc, argv);
	else
	{
		fprintf(stderr, "unknown role %s\n", argv[1]);
		rc = 2;
	}
	if (conn)
		PQfinish(conn);
	close(out_fd);
	return rc;
}
