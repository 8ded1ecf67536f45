/*
 * options.c: workload-worker's command line and --help.  It checks each
 * value's form and range and exits 2 on a bad one; it never connects or
 * starts anything.  Defaults are set here and nowhere else.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

WlwOptions	wlw_opt;

static const char *usage_text =
"workload-worker runs workloads from a PostgreSQL database with the workload\n"
"extension: it claims them, runs a command for each, and reports the outcome.\n"
"\n"
"Usage: workload-worker --tenant T --application A --exec CMD [options]\n"
"\n"
"Options:\n"
"  --dsn DSN            libpq connection string or URI (default: PG* variables)\n"
"  --worker-id ID       worker id recorded on claims (default: host:pid)\n"
"  --tenant T           tenant to claim for (required)\n"
"  --application A      application to claim for (required)\n"
"  --capability C       a capability this worker holds; repeat for more\n"
"  --lease SECONDS      lease per claim, renewed every third of it (default 30)\n"
"  --concurrency N      run up to N commands at once, 1 to 256 (default 1)\n"
"  --batch N            claim up to N workloads per claim call, 1 to 1000\n"
"                       (default 1); the worker holds at most the larger of\n"
"                       --batch and --concurrency claims, and claims again\n"
"                       whenever fewer than --concurrency are waiting or running\n"
"  --exec CMD           command run with /bin/sh -c for each workload (required)\n"
"  --env NAME           pass the worker's environment variable NAME on to the\n"
"                       command; repeat for more (see Environment)\n"
"  --expected-snapshots JSON\n"
"                       the governing snapshots this worker's commands are\n"
"                       built for, passed to workload_resume (default none)\n"
"  --grace SECONDS      on SIGTERM, how long running commands may take to\n"
"                       finish before they are killed (default 30)\n"
"  --poll SECONDS       longest sleep between claims when no NOTIFY arrives;\n"
"                       the sleep starts at 0.25 s and doubles (default 5)\n"
"  --verbose            also log heartbeats, checkpoints, progress, wake-ups\n"
"  --help               show this help\n"
"\n"
"Before a command runs, the worker calls workload_execution_context (the\n"
"workload's authority must still hold) and workload_resume (the latest\n"
"checkpoint, verified, and the last wake).  AUTHORIZATION_DENIED,\n"
"WORKLOAD_CHECKPOINT_TAMPERED and WORKLOAD_SNAPSHOT_MISMATCH fail the workload\n"
"without running it, with kind authorization_denied, checkpoint_tampered or\n"
"snapshot_mismatch (not retried by default).\n"
"\n"
"Environment.  The command gets the workload's input JSON on stdin and an\n"
"environment of its own, not the worker's: PATH (/usr/local/bin:/usr/bin:/bin,\n"
"or the worker's own with --env PATH), each --env variable the worker has,\n"
"and WORKLOAD_ID, WORKLOAD_ATTEMPT (1 on the first run), WORKLOAD_DEFINITION_ID,\n"
"WORKLOAD_DEFINITION_REVISION, WORKLOAD_TENANT_ID, WORKLOAD_APPLICATION_ID,\n"
"WORKLOAD_WORKER_ID, WORKLOAD_CONTEXT (JSON: attempt_id, capabilities,\n"
"connection_scopes, environment), WORKLOAD_CHECKPOINT_SEQUENCE and, when there\n"
"is one, WORKLOAD_CHECKPOINT (the verified latest checkpoint's state as JSON)\n"
"and WORKLOAD_WAKE (how the last wait ended, JSON); a value above 64 KiB is in\n"
"the file named by WORKLOAD_CHECKPOINT_FILE or WORKLOAD_WAKE_FILE instead.\n"
"No database credential reaches it (PGPASSWORD, PGPASSFILE, PGSERVICEFILE, the\n"
"DSN), and the worker is non-dumpable, so a command running as the same user\n"
"cannot read them from /proc either.  A command line is readable by every\n"
"local user: keep passwords out of --dsn (use PGPASSFILE or PGPASSWORD).\n"
"\n"
"File descriptor 3 takes JSON lines: a line that is an object whose only\n"
"member is \"progress\" ({\"progress\": {\"done\": 3, \"of\": 10}}) sets the progress\n"
"sent with the next heartbeat; any other JSON line is stored at once as a\n"
"checkpoint.  Lines that are not JSON are logged and skipped.\n"
"\n"
"Outcome, from the command's exit:\n"
"  exit 0           complete with stdout as the output (must be JSON; empty\n"
"                   stdout is {}; otherwise fail with kind invalid_output)\n"
"  exit 75          fail, kind transient_connection (EX_TEMPFAIL; retried)\n"
"  exit 124         fail, kind timeout (as timeout(1) exits; retried)\n"
"  killed by signal fail, kind worker_failure (retried); so is exit 129-192,\n"
"                   which is how /bin/sh reports a child killed by signal N\n"
"                   (128 + N)\n"
"  any other exit   fail, kind command_failed (not retried by default)\n"
"The error text is the exit status and the last 4 KiB of stderr; stderr is\n"
"also passed through to the worker's stderr, a line at a time.  Retries follow\n"
"the workload's retry_policy (default retry_on: timeout, worker_failure,\n"
"transient_connection).  Completions that come within 20 ms of each other go\n"
"in one workload_complete_many call, each decided on its own; the leases of\n"
"all held claims are renewed in one workload_heartbeat_many call.\n"
"\n"
"A heartbeat that reports cancellation sends SIGTERM to the command's process\n"
"group (SIGKILL 2 s later) and confirms the cancellation; a claim not yet\n"
"started is confirmed at once.  A refused fence (WL006, WL007, WL008) means\n"
"the workload is no longer ours: the command is killed and the worker moves\n"
"on.  A dropped connection is re-opened with backoff and the call retried\n"
"(completion is idempotent on the result id <workload_id>:<attempt>).\n"
"SIGTERM or SIGINT: stop claiming, let the running commands finish within\n"
"--grace (then kill them and fail them as worker_failure), fail claimed\n"
"workloads not yet started as worker_failure, and exit 0.  A second SIGTERM\n"
"cuts the grace period short.\n"
"\n"
"Each command runs in a process group of its own under a small guard process\n"
"(wlw-guard).  When the command ends, or the worker ends in any way (even by\n"
"SIGKILL), the guard kills that group and every descendant that left it\n"
"(with setsid, say): nothing a command started outlives its attempt.\n"
"\n"
"Exit status: 0 after SIGTERM or SIGINT, 2 for invalid options, 1 when the\n"
"database refuses the claim itself (invalid arguments, missing function or\n"
"privilege).\n";

static void
usage_error(const char *msg)
{
	fprintf(stderr, "workload-worker: %s\nTry \"workload-worker --help\".\n", msg);
	exit(2);
}

/* add_capability appends one element to the text[] literal, quoted. */
static void
add_capability(const char *cap)
{
	size_t		old = wlw_opt.caps_literal ? strlen(wlw_opt.caps_literal) : 0;
	char	   *lit = malloc(old + 2 * strlen(cap) + 5);
	char	   *p = lit;

	if (lit == NULL)
		usage_error("out of memory");
	if (old > 0)
	{
		memcpy(p, wlw_opt.caps_literal, old - 1);	/* drop the closing brace */
		p += old - 1;
		*p++ = ',';
	}
	else
		*p++ = '{';
	*p++ = '"';
	for (const char *c = cap; *c; c++)
	{
		if (*c == '"' || *c == '\\')
			*p++ = '\\';
		*p++ = *c;
	}
	*p++ = '"';
	*p++ = '}';
	*p = '\0';
	free(wlw_opt.caps_literal);
	wlw_opt.caps_literal = lit;
}

/*
 * add_env records --env NAME: a variable name (letters, digits, '_', not
 * starting with a digit) that the worker does not set itself.
 */
static void
add_env(const char *name)
{
	const char **names;

	if (name[0] == '\0' || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
								   "0123456789_") != strlen(name) ||
		(name[0] >= '0' && name[0] <= '9'))
		usage_error("--env takes a variable name; its value comes from the worker's environment");
	if (strncmp(name, "WORKLOAD_", 9) == 0)
		usage_error("--env cannot name a WORKLOAD_ variable: the worker sets those");
	names = realloc(wlw_opt.env_names, sizeof(char *) * (wlw_opt.n_env + 1));
	if (names == NULL)
		usage_error("out of memory");
	names[wlw_opt.n_env++] = name;
	wlw_opt.env_names = names;
}

static double
parse_seconds(const char *arg, const char *name, double min)
{
	char	   *end;
	double		v = strtod(arg, &end);
	char		msg[128];

	if (end == arg || *end != '\0' || v < min || v > 86400)
	{
		snprintf(msg, sizeof(msg), "%s must be a number of seconds from %g to 86400", name, min);
		usage_error(msg);
	}
	return v;
}

static void
default_worker_id(void)
{
	char		host[256];
	char		id[300];

	if (wlw_opt.worker_id && wlw_opt.worker_id[0])
		return;
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(id, sizeof(id), "%s:%d", host, (int) getpid());
	free(wlw_opt.worker_id);
	wlw_opt.worker_id = strdup(id);
}

static int
parse_count(const char *arg, const char *name, int min, int max)
{
	char	   *end;
	long		v = strtol(arg, &end, 10);
	char		msg[128];

	if (end == arg || *end != '\0' || v < min || v > max)
	{
		snprintf(msg, sizeof(msg), "%s must be a whole number from %d to %d", name, min, max);
		usage_error(msg);
	}
	return (int) v;
}

static const struct option longopts[] = {
	{"dsn", required_argument, NULL, 'd'},
	{"worker-id", required_argument, NULL, 'w'},
	{"tenant", required_argument, NULL, 't'},
	{"application", required_argument, NULL, 'a'},
	{"capability", required_argument, NULL, 'c'},
	{"lease", required_argument, NULL, 'l'},
	{"batch", required_argument, NULL, 'b'},
	{"concurrency", required_argument, NULL, 'n'},
	{"exec", required_argument, NULL, 'e'},
	{"grace", required_argument, NULL, 'g'},
	{"poll", required_argument, NULL, 'p'},
	{"env", required_argument, NULL, 'E'},
	{"expected-snapshots", required_argument, NULL, 'S'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0}
};

/* apply_option sets what one option says. */
static void
apply_option(int c, const char *arg)
{
	switch (c)
	{
		case 'd': wlw_opt.dsn = arg; break;
		case 'w': wlw_opt.worker_id = strdup(arg); break;
		case 't': wlw_opt.tenant = arg; break;
		case 'a': wlw_opt.application = arg; break;
		case 'c': add_capability(arg); break;
		case 'l': wlw_opt.lease_s = parse_seconds(arg, "--lease", 1); break;
		case 'b': wlw_opt.batch = parse_count(arg, "--batch", 1, 1000); break;
		case 'n': wlw_opt.concurrency = parse_count(arg, "--concurrency", 1, 256); break;
		case 'e': wlw_opt.exec_cmd = arg; break;
		case 'g': wlw_opt.grace_s = parse_seconds(arg, "--grace", 0); break;
		case 'p': wlw_opt.poll_max_s = parse_seconds(arg, "--poll", 0.25); break;
		case 'E': add_env(arg); break;
		case 'S': wlw_opt.expected_snapshots = arg; break;
		case 'v': wlw_opt.verbose = true; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: usage_error("invalid option");
	}
}

/*
 * wlw_options_parse fills wlw_opt from the command line, or exits with
 * status 2 and a message (0 for --help).
 */
void
wlw_options_parse(int argc, char **argv)
{
	int			c;

	wlw_opt.dsn = "";
	wlw_opt.lease_s = 30;
	wlw_opt.batch = 1;
	wlw_opt.concurrency = 1;
	wlw_opt.grace_s = 30;
	wlw_opt.poll_max_s = 5;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		apply_option(c, optarg);
	if (optind < argc)
		usage_error("unexpected argument");
	if (!wlw_opt.tenant || !wlw_opt.application || !wlw_opt.exec_cmd)
		usage_error("--tenant, --application and --exec are required");
	default_worker_id();
	if (wlw_opt.caps_literal == NULL)
		wlw_opt.caps_literal = strdup("{}");
}
