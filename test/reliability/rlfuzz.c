/*
 * rlfuzz.c: calls every SQL function of the workload extension with random
 * and malformed arguments, from a seeded PRNG, and records how each call
 * ended.  The functions are read from pg_proc (every function that belongs to
 * the extension, except triggers), so a new function is fuzzed without
 * touching this file.  Arguments are made by type: NULLs, values from a pool
 * of real ones (workload ids, live fences, a valid spec, signed grants),
 * valid values of random shape, and hostile ones (huge strings, deep nesting,
 * invalid UTF-8 and \u escapes in jsonb, overflowing and negative numbers,
 * far-past and far-future times, wrong array shapes).  Each call is one
 * autocommit statement (its own transaction), as a superuser or as a
 * tenant-scoped login role.
 *
 *   rlfuzz --dsn DSN --dsn-role DSN --seed N --iterations N --out FILE
 *
 * --out gets "CALLS", "STATE" (count per SQLSTATE), "FUNC" (calls and
 * successes per function), "UNEXPECTED" (an error outside the allowed
 * classes, or a WL error whose message does not start with its code) and
 * "CRASH" (the connection dropped) lines.  Exit status 0 unless a crash or
 * an unexpected error was seen.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#define MAX_FUNCS 256
#define MAX_ARGS 16
#define POOL 64

typedef struct Fn
{
	char	   *schema;
	char	   *name;
	int			nargs;
	int			ndefaults;
	char	   *types[MAX_ARGS];
	char	   *argnames[MAX_ARGS];
	long		calls;
	long		oks;
	char		fst[24][8];		/* SQLSTATEs this function answered, */
	long		fstn[24];		/* and how often */
	int			nfst;
} Fn;

typedef struct Fence
{
	char	   *workload_id;
	char	   *claim_id;
	char	   *worker_id;
	char	   *token;
} Fence;

static Fn	fns[MAX_FUNCS];
static int	nfns = 0;
static PGconn *su = NULL;		/* superuser */
static PGconn *role = NULL;		/* tenant-scoped login role */
static const char *dsn_su, *dsn_role;
static FILE *out;

/* pools of real values, refreshed from the database */
static char *pool_ids[POOL];
static int	n_ids = 0;
static Fence pool_fences[POOL];
static int	n_fences = 0;
static char *pool_results[POOL];
static int	n_results = 0;
static char *pool_keys[POOL];
static int	n_keys = 0;
static char *pool_spec = NULL;
static char *pool_grant = NULL;		/* signed */
static char *pool_ugrant = NULL;	/* unsigned */

/* error codes: sqlstate -> code, from workload_error_codes() */
static char codes_state[64][8];
static char codes_name[64][64];
static int	n_codes = 0;

/* SQLSTATE counts */
static char st_name[512][8];
static long st_count[512];
static int	n_st = 0;
static long n_calls = 0, n_ok = 0, n_crash = 0, n_unexpected = 0;

/* ---- PRNG: xorshift64*, seeded ---- */
static uint64_t rs;

static uint64_t
rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

static long
rr(long n)
{
	return n <= 0 ? 0 : (long) (rnd() % (uint64_t) n);
}

static int
pct(int p)
{
	return rr(100) < p;
}

/* ---- strings ---- */
typedef struct Buf
{
	char	   *s;
	size_t		len;
	size_t		cap;
} Buf;

static void
bput(Buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
	{
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void
bstr(Buf *b, const char *s)
{
	bput(b, s, strlen(s));
}

static void
bfmt(Buf *b, const char *fmt,...)
{
	char		tmp[1024];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	bput(b, tmp, n < (int) sizeof(tmp) ? n : (int) sizeof(tmp) - 1);
}

static char *
sdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *
repeat(const char *unit, long n)
{
	Buf			b = {0};

	bstr(&b, "");
	for (long i = 0; i < n; i++)
		bstr(&b, unit);
	return b.s;
}

static char *
fmt(const char *f,...)
{
	char		tmp[4096];
	va_list		ap;

	va_start(ap, f);
	vsnprintf(tmp, sizeof(tmp), f, ap);
	va_end(ap);
	return strdup(tmp);
}

/* ---- connections ---- */
static PGconn *
connect_retry(const char *dsn)
{
	for (int i = 0; i < 600; i++)
	{
		PGconn	   *c = PQconnectdb(dsn);

		if (PQstatus(c) == CONNECTION_OK)
		{
			PQclear(PQexec(c, "SET statement_timeout = '20s'"));
			PQclear(PQexec(c, "SET client_min_messages = error"));
			return c;
		}
		PQfinish(c);
		usleep(100000);
	}
	fprintf(stderr, "rlfuzz: could not connect to %s\n", dsn);
	exit(2);
}

static PGresult *
q(const char *sql)
{
	PGresult   *r = PQexec(su, sql);

	if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
	{
		if (PQstatus(su) != CONNECTION_OK)
		{
			PQclear(r);
			PQfinish(su);
			su = connect_retry(dsn_su);
			return PQexec(su, sql);
		}
	}
	return r;
}

/* ---- function list ---- */
static void
load_functions(void)
{
	PGresult   *r = q(
		"SELECT n.nspname, p.proname, p.pronargs, p.pronargdefaults, "
		"  (SELECT string_agg(format_type(t, NULL), '|' ORDER BY o) "
		"     FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, o)), "
		"  (SELECT string_agg(coalesce(nm, ''), '|' ORDER BY o) FROM unnest( "
		"     CASE WHEN p.proargmodes IS NULL THEN p.proargnames "
		"     ELSE (SELECT array_agg(nm2 ORDER BY o2) FROM unnest(p.proargnames, p.proargmodes) "
		"           WITH ORDINALITY x(nm2, md, o2) WHERE md IN ('i', 'b', 'v')) END) "
		"     WITH ORDINALITY u(nm, o)) "
		"FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
		"JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e' "
		"JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'workload' "
		"WHERE p.prorettype <> 'trigger'::regtype AND p.prokind = 'f' ORDER BY 1, 2, 3");

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
	{
		fprintf(stderr, "rlfuzz: %s", PQerrorMessage(su));
		exit(2);
	}
	for (int i = 0; i < PQntuples(r) && nfns < MAX_FUNCS; i++)
	{
		Fn		   *f = &fns[nfns++];
		char	   *types = strdup(PQgetvalue(r, i, 4));
		char	   *names = strdup(PQgetvalue(r, i, 5));
		char	   *save = NULL, *tok;
		int			k = 0;

		f->schema = strdup(PQgetvalue(r, i, 0));
		f->name = strdup(PQgetvalue(r, i, 1));
		f->nargs = atoi(PQgetvalue(r, i, 2));
		f->ndefaults = atoi(PQgetvalue(r, i, 3));
		for (tok = strtok_r(types, "|", &save); tok && k < MAX_ARGS; tok = strtok_r(NULL, "|", &save))
			f->types[k++] = strdup(tok);
		k = 0;
		/* names may be empty strings: split by hand */
		for (char *p = names, *start = names;; p++)
		{
			if (*p == '|' || *p == 0)
			{
				char		c = *p;

				*p = 0;
				if (k < MAX_ARGS)
					f->argnames[k++] = strdup(start);
				if (c == 0)
					break;
				start = p + 1;
			}
		}
		for (; k < MAX_ARGS; k++)
			f->argnames[k] = strdup("");
		if (f->nargs > MAX_ARGS)
			f->nargs = MAX_ARGS;
	}
	PQclear(r);
	r = q("SELECT sqlstate, code FROM workload_error_codes()");
	for (int i = 0; i < PQntuples(r) && n_codes < 64; i++)
	{
		snprintf(codes_state[n_codes], 8, "%s", PQgetvalue(r, i, 0));
		snprintf(codes_name[n_codes], 64, "%s", PQgetvalue(r, i, 1));
		n_codes++;
	}
	PQclear(r);
}

/* ---- pools ---- */
static void
fill(char **pool, int *n, const char *sql)
{
	PGresult   *r = q(sql);

	for (int i = 0; i < *n; i++)
		free(pool[i]);
	*n = 0;
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		for (int i = 0; i < PQntuples(r) && *n < POOL; i++)
			pool[(*n)++] = strdup(PQgetvalue(r, i, 0));
	PQclear(r);
}

static char *
one(const char *sql)
{
	PGresult   *r = q(sql);
	char	   *v = NULL;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strdup(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

static long refreshes = 0;

/*
 * refresh_pools makes fresh work to fuzz against (new workloads, some
 * claimed and started, so that live fences exist), repairs what earlier
 * calls may have taken away (membership, the grant) and rereads the pools.
 */
static void
refresh_pools(void)
{
	char		sql[2048];
	PGresult   *r;

	refreshes++;
	PQclear(q("SELECT workload_add_tenant_member('rl_worker', 't1', 'app')"));
	free(pool_grant);
	free(pool_ugrant);
	snprintf(sql, sizeof(sql), "SELECT rl.grant('fz-grant-%ld')::text", refreshes);
	pool_grant = one(sql);
	snprintf(sql, sizeof(sql), "SELECT rl.unsigned_grant('fz-grant-%ld')::text", refreshes);
	pool_ugrant = one(sql);
	snprintf(sql, sizeof(sql),
			 "SELECT count(workload_create(rl.spec('fz-%ld-' || i, jsonb_build_object('i', i)) "
			 "  || jsonb_build_object('authorization_snapshot', rl.grant('fz-grant-%ld')))) "
			 "FROM generate_series(1, 6) i", refreshes, refreshes);
	PQclear(q(sql));
	PQclear(q("SELECT count(*) FROM workload_claim('fz-w', '{}', 't1', 'app', '1 hour', 3, true)"));
	PQclear(q("SELECT count(*) FROM workload_claim('fz-w2', '{}', 't1', 'app', '2 seconds', 1, false)"));
	free(pool_spec);
	snprintf(sql, sizeof(sql),
			 "SELECT (rl.spec('fz-spec-%ld-%ld') || jsonb_build_object('authorization_snapshot', "
			 "rl.grant('fz-grant-%ld')))::text", refreshes, (long) rr(1000), refreshes);
	pool_spec = one(sql);
	/* samples from a random point of each primary key: cheap however large the store grows */
	fill(pool_ids, &n_ids, "SELECT workload_id FROM workload.workloads "
		 "WHERE workload_id >= 'workload_' || md5(random()::text) ORDER BY workload_id LIMIT 32");
	fill(pool_results, &n_results, "SELECT result_id FROM workload.results "
		 "WHERE result_id >= 'r' || md5(random()::text) ORDER BY result_id LIMIT 16");
	fill(pool_keys, &n_keys, "(SELECT key_id FROM workload.signing_keys "
		 "WHERE key_id >= 'key_' || md5(random()::text) ORDER BY key_id LIMIT 4) "
		 "UNION ALL (SELECT key_id FROM workload.signing_keys ORDER BY key_id LIMIT 4)");
	for (int i = 0; i < n_fences; i++)
	{
		free(pool_fences[i].workload_id);
		free(pool_fences[i].claim_id);
		free(pool_fences[i].worker_id);
		free(pool_fences[i].token);
	}
	n_fences = 0;
	r = q("SELECT workload_id, claim_id, worker_id, fencing_token FROM workload.workloads "
		  "WHERE claim_id IS NOT NULL AND workload_id >= 'workload_' || md5(random()::text) "
		  "ORDER BY workload_id LIMIT 32");
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		for (int i = 0; i < PQntuples(r) && n_fences < POOL; i++)
		{
			pool_fences[n_fences].workload_id = strdup(PQgetvalue(r, i, 0));
			pool_fences[n_fences].claim_id = strdup(PQgetvalue(r, i, 1));
			pool_fences[n_fences].worker_id = strdup(PQgetvalue(r, i, 2));
			pool_fences[n_fences].token = strdup(PQgetvalue(r, i, 3));
			n_fences++;
		}
	PQclear(r);
}

static const char *
pick(char **pool, int n, const char *dflt)
{
	return n > 0 ? pool[rr(n)] : dflt;
}

/* ---- value generators ---- */
static const char *const words[] = {
	"t1", "app", "t2", "other", "acme", "billing", "fz-w", "fz-w2", "actor", "ops", "rl_worker",
	"postgres", "workload_admin", "workload_worker", "pdf", "*", "secret://vault/x", "secret:/x",
	"sk-live-123", "fdb_live_abc", "-----BEGIN PRIVATE KEY-----", "%s%s%s%n%d", "%", "\\", "'",
	"\"", "'; DROP TABLE workload.workloads; --", "NULL", "null", "true", "0", "-1",
	"READY", "SUCCEEDED", "żółw 🐢", "\xe2\x80\xae" "rtl", "a\tb\nc", "workload_000000000000000000000000",
	"claim_00000000000000000000", "timeout", "worker_failure", "transient_connection", "bogus_kind",
	"password", "grant-rl", "exponential", "fixed", "COMPLETION_CRITERIA_UNMET", NULL
};

static const char *
word(void)
{
	int			n = 0;

	while (words[n])
		n++;
	return words[rr(n)];
}

static char *
rand_ascii(long len)
{
	char	   *s = malloc(len + 1);

	for (long i = 0; i < len; i++)
		s[i] = (char) (32 + rr(95));
	s[len] = 0;
	return s;
}

static char *
gen_text(void)
{
	switch (rr(22))
	{
		case 0:
			return strdup("");
		case 1:
			return strdup("   ");
		case 2:
			return repeat("a", 256);
		case 3:
			return repeat("a", 257);
		case 4:
			return pct(20) ? repeat("x", 4 * 1024 * 1024) : repeat("ab", 64 * 1024);
		case 5:
			return strdup("\xff\xfe invalid utf-8");
		case 6:
		case 7:
			return rand_ascii(rr(300));
		case 8:
		case 9:
		case 10:
			return sdup(pick(pool_ids, n_ids, "workload_x"));
		case 11:
			return n_fences ? strdup(pool_fences[rr(n_fences)].claim_id) : strdup("claim_x");
		case 12:
			return sdup(pick(pool_results, n_results, "r:x"));
		case 13:
			return sdup(pick(pool_keys, n_keys, "key_x"));
		case 14:
			return repeat("é", 200);	/* 400 bytes, 200 characters */
		default:
			return strdup(word());
	}
}

static void gen_json(Buf *b, int depth);

static const char *const json_keys[] = {
	"tenant_id", "application_id", "input", "output", "state", "password", "Token", "API_KEY",
	"private_key", "secret", "workload_id", "claim_id", "fencing_token", "result_id", "kind",
	"id", "grant", "signature", "key_id", "retry_policy", "max_attempts", "dependencies",
	"required_state", "completion_criteria", "min", "max", "field", "equals", "timeouts",
	"queue_ms", "artifacts", "schema_version", "items", "a", "", "\\u0000", NULL
};

static void
json_string(Buf *b)
{
	switch (rr(12))
	{
		case 0:
			bstr(b, "\"\\ud800\"");		/* lone high surrogate */
			break;
		case 1:
			bstr(b, "\"\\udc00x\"");	/* lone low surrogate */
			break;
		case 2:
			bstr(b, "\"a\\u0000b\"");	/* NUL: jsonb cannot hold it */
			break;
		case 3:
			bstr(b, "\"\\uD83D\\uDC22\"");	/* a valid pair */
			break;
		case 4:
			bstr(b, "\"sk-abc\"");
			break;
		case 5:
			bstr(b, "\"-----BEGIN PRIVATE KEY-----\"");
			break;
		default:
			{
				const char *w = word();

				bstr(b, "\"");
				for (const char *p = w; *p; p++)
				{
					if (*p == '"' || *p == '\\')
						bstr(b, "\\");
					if ((unsigned char) *p < 32)
					{
						bfmt(b, "\\u%04x", *p);
						continue;
					}
					bput(b, p, 1);
				}
				bstr(b, "\"");
			}
	}
}

static void
json_number(Buf *b)
{
	static const char *const nums[] = {
		"0", "-0", "1", "-1", "3", "1000", "1001", "2147483647", "2147483648", "-2147483649",
		"9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400", "-1e400",
		"1.5", "0.0000001", "123456789012345678901234567890", "1e-400", NULL
	};
	int			n = 0;

	while (nums[n])
		n++;
	bstr(b, nums[rr(n)]);
}

static void
gen_json(Buf *b, int depth)
{
	int			k = (int) rr(depth > 4 ? 4 : 8);

	switch (k)
	{
		case 0:
			bstr(b, pct(50) ? "null" : (pct(50) ? "true" : "false"));
			break;
		case 1:
		case 2:
			json_string(b);
			break;
		case 3:
			json_number(b);
			break;
		case 4:
		case 5:
			{
				int			n = (int) rr(5);

				bstr(b, "{");
				for (int i = 0; i < n; i++)
				{
					int			nk = 0;

					while (json_keys[nk])
						nk++;
					if (i)
						bstr(b, ",");
					bfmt(b, "\"%s\":", json_keys[rr(nk)]);
					gen_json(b, depth + 1);
				}
				bstr(b, "}");
				break;
			}
		default:
			{
				int			n = (int) rr(5);

				bstr(b, "[");
				for (int i = 0; i < n; i++)
				{
					if (i)
						bstr(b, ",");
					gen_json(b, depth + 1);
				}
				bstr(b, "]");
			}
	}
}

static char *
nest(int depth, int object)
{
	Buf			b = {0};

	bstr(&b, "");
	for (int i = 0; i < depth; i++)
		bstr(&b, object ? "{\"a\":" : "[");
	bstr(&b, "1");
	for (int i = 0; i < depth; i++)
		bstr(&b, object ? "}" : "]");
	return b.s;
}

/* mutate_json: the text of a valid document with one part replaced, removed or added */
static char *
mutate_json(const char *doc)
{
	char		sql[256];
	const char *params[3];
	PGresult   *r;
	Buf			v = {0};
	char	   *res;

	if (doc == NULL)
		return strdup("{}");
	bstr(&v, "");
	gen_json(&v, 2);
	params[0] = doc;
	params[1] = v.s;
	params[2] = json_keys[rr(20)];
	switch (rr(4))
	{
		case 0:					/* drop a top-level key */
			snprintf(sql, sizeof(sql), "SELECT ($1::jsonb - (SELECT k FROM jsonb_object_keys($1::jsonb) k "
					 "ORDER BY md5(k || $3) LIMIT 1))::text");
			break;
		case 1:					/* replace a top-level value */
			snprintf(sql, sizeof(sql), "SELECT jsonb_set($1::jsonb, ARRAY[(SELECT k FROM jsonb_object_keys($1::jsonb) k "
					 "ORDER BY md5(k || $3) LIMIT 1)], $2::jsonb)::text");
			break;
		case 2:					/* add a key (maybe unknown) */
			snprintf(sql, sizeof(sql), "SELECT ($1::jsonb || jsonb_build_object($3::text, $2::jsonb))::text");
			break;
		default:				/* replace one nested value */
			snprintf(sql, sizeof(sql), "SELECT jsonb_set($1::jsonb, ARRAY[(SELECT k FROM jsonb_object_keys($1::jsonb) k "
					 "ORDER BY md5(k || $3) LIMIT 1), $3::text], $2::jsonb, true)::text");
	}
	r = PQexecParams(su, sql, 3, NULL, params, NULL, NULL, 0);
	res = (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
		? strdup(PQgetvalue(r, 0, 0)) : strdup(doc);
	PQclear(r);
	free(v.s);
	return res;
}

static char *
items_json(void)
{
	Buf			b = {0};
	int			n = (int) rr(6);

	bstr(&b, "[");
	for (int i = 0; i < n; i++)
	{
		Fence	   *f = n_fences ? &pool_fences[rr(n_fences)] : NULL;

		if (i)
			bstr(&b, ",");
		if (f == NULL || pct(15))
		{
			gen_json(&b, 3);
			continue;
		}
		bfmt(&b, "{\"workload_id\":\"%s\",\"claim_id\":\"%s\",\"fencing_token\":%s,"
			 "\"result_id\":\"fz-%lu\",\"output\":",
			 f->workload_id, pct(85) ? f->claim_id : "claim_bogus",
			 pct(85) ? f->token : "-1", (unsigned long) rr(1000000));
		gen_json(&b, 3);
		if (pct(30))
			bstr(&b, ",\"artifacts\":[\"a\",\"b\"]");
		if (pct(20))
		{
			bstr(&b, ",\"schema_version\":");
			json_number(&b);
		}
		bstr(&b, "}");
	}
	bstr(&b, "]");
	return b.s;
}

static char *
gen_jsonb(const Fn *f, int arg)
{
	int			k = (int) rr(30);

	if ((strcmp(f->argnames[arg], "output") == 0 || strcmp(f->argnames[arg], "state") == 0 ||
		 strcmp(f->argnames[arg], "progress") == 0) && k < 12)
		return fmt("{\"n\": %ld, \"items\": [1, 2, 3]}", (long) rr(1000));
	if (strcmp(f->name, "workload_create") == 0 && k < 18)
		return k < 4 ? sdup(pool_spec) : mutate_json(pool_spec);
	if (strcmp(f->name, "workload_complete_many") == 0 && k < 18)
		return items_json();
	if ((strcmp(f->name, "workload_verify_grant") == 0) && k < 15)
		return k < 4 ? sdup(pool_grant) : mutate_json(pool_grant);
	if ((strcmp(f->name, "workload_sign_grant") == 0) && k < 15)
		return k < 4 ? sdup(pool_ugrant) : mutate_json(pool_ugrant);
	switch (k)
	{
		case 0:
			return nest((int) (pct(50) ? 60 + rr(10) : 1000 + rr(200000)), (int) rr(2));
		case 1:
			{
				char	   *big = repeat("y", (long) (pct(30) ? 1100000 : 9000));
				char	   *s = malloc(strlen(big) + 32);

				sprintf(s, "{\"blob\": \"%s\"}", big);
				free(big);
				return s;
			}
		case 2:
			return strdup("[\"\\ud800\"]");
		case 3:
			return strdup("{\"a\": \"\\u0000\"}");
		case 4:
			return strdup("{\"a\": \"\\x41\"}");
		case 5:
			return strdup("{\"a\": 1, \"a\": 2}");
		case 6:
			return strdup(pct(50) ? "{\"unterminated\": " : "NaN");
		case 7:
			return repeat("[1,", 5) /* malformed */ ;
		case 8:
			return strdup("\"\xff\xfe\"");	/* invalid UTF-8 */
		case 9:
			return sdup(pool_grant);
		case 10:
			return mutate_json(pool_grant);
		case 11:
			return mutate_json(pool_spec);
		case 12:
			return items_json();
		case 13:
			{
				Buf			b = {0};

				bstr(&b, "[");
				for (int i = 0; i < 300; i++)
					bfmt(&b, "%s\"e%d\"", i ? "," : "", i);
				bstr(&b, "]");
				return b.s;
			}
		default:
			{
				Buf			b = {0};

				bstr(&b, "");
				gen_json(&b, 0);
				return b.s;
			}
	}
}

static char *
gen_text_array(void)
{
	switch (rr(16))
	{
		case 0:
			return strdup("{}");
		case 1:
			return strdup("{NULL}");
		case 2:
			return strdup("{{a},{b}}");
		case 3:
			return strdup("[0:1]={a,b}");
		case 4:
			return strdup("{a");
		case 5:
			return strdup("{\"\",\" \"}");
		case 6:
			{
				Buf			b = {0};

				bstr(&b, "{");
				for (int i = 0; i < 257; i++)
					bfmt(&b, "%sc%d", i ? "," : "", i);
				bstr(&b, "}");
				return b.s;
			}
		case 7:
			{
				char	   *l = repeat("z", 300);
				char	   *s = fmt("{%s}", l);

				free(l);
				return s;
			}
		case 8:
			return strdup("{secret://vault/a,secret://vault/b}");
		case 9:
			return strdup("{plain-reference}");
		case 10:
			return strdup("{*}");
		case 11:
			return strdup("{pdf,email}");
		case 12:
			return strdup("{\"\xff\"}");
		default:
			return fmt("{\"%s\",\"%s\"}", "a", pct(50) ? "b" : "pdf");
	}
}

static char *
gen_interval(void)
{
	static const char *const v[] = {
		"30 seconds", "0", "-1 second", "1 microsecond", "24 hours", "24 hours 1 microsecond",
		"1 day", "2 days", "1 mon", "-1 mon", "1 year", "178000000 years", "-178000000 years",
		"1 day -86399 seconds", "-1 day 86401 seconds", "00:00:00.000001", "P1D", "PT1S",
		"infinity", "garbage", "10000000000 hours", "1 day 25 hours", "-2147483648 days", NULL
	};
	int			n = 0;

	if (pct(30))
		return fmt("%ld seconds", (long) rr(200000) - 1000);
	while (v[n])
		n++;
	return strdup(v[rr(n)]);
}

static char *
gen_bigint(void)
{
	static const char *const v[] = {
		"0", "1", "-1", "2", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "1e3", "abc", "", NULL
	};
	int			n = 0;

	if (n_fences && pct(40))
		return strdup(pool_fences[rr(n_fences)].token);
	if (pct(20))
		return fmt("%ld", (long) rr(100));
	while (v[n])
		n++;
	return strdup(v[rr(n)]);
}

static char *
gen_int(void)
{
	static const char *const v[] = {
		"0", "1", "-1", "2", "1000", "1001", "10000", "10001", "100000", "100001",
		"2147483647", "-2147483648", "2147483648", "3", NULL
	};
	int			n = 0;

	if (pct(20))
		return fmt("%ld", (long) rr(20));
	while (v[n])
		n++;
	return strdup(v[rr(n)]);
}

static char *
gen_timestamptz(void)
{
	static const char *const v[] = {
		"now", "infinity", "-infinity", "epoch", "4713-01-01 00:00:00+00 BC", "294276-12-31 23:59:59+00",
		"294277-01-01 00:00:00+00", "2000-01-01 00:00:00+00", "1900-02-29", "garbage", "",
		"2100-01-01T00:00:00Z", NULL
	};
	int			n = 0;

	if (pct(40))
		return fmt("%s", pct(50) ? "2030-01-01 00:00:00+00" : "2001-01-01 00:00:00+00");
	while (v[n])
		n++;
	return strdup(v[rr(n)]);
}

static char *
gen_state(void)
{
	static const char *const v[] = {
		"CREATED", "READY", "CLAIMED", "RUNNING", "CHECKPOINTED", "RECOVERING",
		"CANCELLATION_REQUESTED", "WAITING", "SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT",
		"DEAD_LETTER", "BOGUS", "", "ready", NULL
	};
	int			n = 0;

	while (v[n])
		n++;
	return strdup(v[rr(n)]);
}

/*
 * gen_arg: one argument's text (NULL for SQL NULL).  Arguments of a fence
 * (workload_id, claim_id, worker_id, fencing_token) come, often, from one
 * live claim, so the calls get past the fence to the payload checks.
 */
static char *
gen_arg(const Fn *f, int i, const Fence *fence)
{
	const char *t = f->types[i];
	const char *nm = f->argnames[i];

	if (pct(7))
		return NULL;
	if (fence && pct(95))
	{
		if (strcmp(nm, "workload_id") == 0 || strcmp(nm, "id") == 0)
			return strdup(fence->workload_id);
		if (strcmp(nm, "claim_id") == 0)
			return strdup(fence->claim_id);
		if (strcmp(nm, "worker_id") == 0)
			return strdup(fence->worker_id);
		if (strcmp(nm, "fencing_token") == 0)
			return strdup(fence->token);
	}
	if (strcmp(nm, "kind") == 0 && pct(70))
	{
		static const char *const kinds[] = {
			"event", "schedule", "human_approval", "timeout", "worker_failure",
			"transient_connection", "command_failed", "EVENT", NULL
		};
		int			k = 0;

		while (kinds[k])
			k++;
		return strdup(kinds[rr(k)]);
	}
	if (strcmp(nm, "tenant_id") == 0 && pct(60))
		return strdup(pct(85) ? "t1" : "t2");
	if (strcmp(nm, "application_id") == 0 && pct(60))
		return strdup("app");
	if (strcmp(t, "text") == 0 || strcmp(t, "character varying") == 0)
		return gen_text();
	if (strcmp(t, "jsonb") == 0 || strcmp(t, "json") == 0)
		return gen_jsonb(f, i);
	if (strcmp(t, "text[]") == 0)
		return gen_text_array();
	if (strcmp(t, "interval") == 0)
		return gen_interval();
	if (strcmp(t, "bigint") == 0)
		return gen_bigint();
	if (strcmp(t, "integer") == 0 || strcmp(t, "smallint") == 0)
		return gen_int();
	if (strcmp(t, "boolean") == 0)
		return strdup(pct(45) ? "t" : (pct(90) ? "f" : "maybe"));
	if (strcmp(t, "name") == 0)
	{
		if (pct(15))
			return repeat("n", 100);
		return strdup(pct(50) ? "rl_worker" : word());
	}
	if (strcmp(t, "timestamp with time zone") == 0)
		return gen_timestamptz();
	if (strstr(t, "workload_state"))
		return gen_state();
	if (strcmp(t, "bytea") == 0)
		return strdup(pct(50) ? "\\x00ff" : "\\xzz");
	return gen_text();
}

/* ---- classification ---- */
static void
count_fn_state(Fn *f, const char *st)
{
	for (int i = 0; i < f->nfst; i++)
		if (strcmp(f->fst[i], st) == 0)
		{
			f->fstn[i]++;
			return;
		}
	if (f->nfst < 24)
	{
		snprintf(f->fst[f->nfst], 8, "%s", st);
		f->fstn[f->nfst++] = 1;
	}
}

static void
count_state(const char *st)
{
	for (int i = 0; i < n_st; i++)
		if (strcmp(st_name[i], st) == 0)
		{
			st_count[i]++;
			return;
		}
	if (n_st < 512)
	{
		snprintf(st_name[n_st], 8, "%s", st);
		st_count[n_st++] = 1;
	}
}

/*
 * allowed: a refusal with our own code (class WL) whose message starts with
 * that code's name, or a standard SQLSTATE of the classes that bad input
 * produces: 22 data exception (bad literals, out of range, invalid UTF-8 or
 * \u escapes), 42 syntax or access (a worker role calling an admin function),
 * 54 program limit (nesting deeper than the stack allows).  Internal errors
 * (XX), timeouts (57014) and anything else are unexpected.
 */
static int
allowed(const char *st, const char *msg)
{
	if (strncmp(st, "WL", 2) == 0)
	{
		for (int i = 0; i < n_codes; i++)
			if (strcmp(codes_state[i], st) == 0)
				return strncmp(msg, codes_name[i], strlen(codes_name[i])) == 0 &&
					msg[strlen(codes_name[i])] == ':';
		return 0;
	}
	return strncmp(st, "22", 2) == 0 || strncmp(st, "42", 2) == 0 || strncmp(st, "54", 2) == 0;
}

static void
describe_call(Buf *b, const char *sql, int n, char **vals)
{
	bstr(b, sql);
	for (int i = 0; i < n; i++)
	{
		char		tmp[160];

		if (vals[i] == NULL)
			snprintf(tmp, sizeof(tmp), " | $%d=NULL", i + 1);
		else if (strlen(vals[i]) > 100)
			snprintf(tmp, sizeof(tmp), " | $%d=%.60s...(%zu bytes)", i + 1, vals[i], strlen(vals[i]));
		else
			snprintf(tmp, sizeof(tmp), " | $%d=%s", i + 1, vals[i]);
		for (char *p = tmp; *p; p++)
			if (*p == '\n' || *p == '\t')
				*p = ' ';
		bstr(b, tmp);
	}
}

static void
one_call(long iter)
{
	Fn		   *f = &fns[rr(nfns)];
	int			n = f->nargs;
	char	   *vals[MAX_ARGS];
	Buf			sql = {0};
	int			named = pct(25);
	Fence	   *fence = (n_fences && pct(60)) ? &pool_fences[rr(n_fences)] : NULL;
	PGconn	   *c = pct(25) ? role : su;
	PGresult   *r;

	/* sometimes leave out trailing arguments that have defaults */
	if (f->ndefaults > 0 && pct(40))
		n -= (int) rr(f->ndefaults + 1);
	bfmt(&sql, "SELECT * FROM %s.%s(", f->schema, f->name);
	for (int i = 0; i < n; i++)
	{
		vals[i] = gen_arg(f, i, fence);
		if (i)
			bstr(&sql, ", ");
		if (named && f->argnames[i][0])
			bfmt(&sql, "\"%s\" => ", f->argnames[i]);
		bfmt(&sql, "$%d::%s", i + 1, f->types[i]);
	}
	bstr(&sql, ")");
	f->calls++;
	n_calls++;
	r = PQexecParams(c, sql.s, n, NULL, (const char *const *) vals, NULL, NULL, 0);
	if (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK)
	{
		f->oks++;
		n_ok++;
		count_state("00000");
		count_fn_state(f, "00000");
	}
	else if (PQstatus(c) != CONNECTION_OK || PQresultErrorField(r, PG_DIAG_SQLSTATE) == NULL)
	{
		Buf			d = {0};

		describe_call(&d, sql.s, n, vals);
		n_crash++;
		count_state("CRASH");
		count_fn_state(f, "CRASH");
		fprintf(out, "CRASH\t%ld\t%s\t%s\t%s\n", iter, f->name,
				PQerrorMessage(c), d.s);
		fflush(out);
		free(d.s);
		PQfinish(su);
		PQfinish(role);
		sleep(1);
		su = connect_retry(dsn_su);
		role = connect_retry(dsn_role);
	}
	else
	{
		const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);

		count_state(st);
		count_fn_state(f, st);
		if (!allowed(st, msg ? msg : ""))
		{
			Buf			d = {0};
			char		m[300];

			snprintf(m, sizeof(m), "%s", msg ? msg : "");
			for (char *p = m; *p; p++)
				if (*p == '\n' || *p == '\t')
					*p = ' ';
			describe_call(&d, sql.s, n, vals);
			n_unexpected++;
			fprintf(out, "UNEXPECTED\t%ld\t%s\t%s\t%s\t%s\n", iter, st, f->name, m, d.s);
			fflush(out);
			free(d.s);
		}
	}
	PQclear(r);
	for (int i = 0; i < n; i++)
		free(vals[i]);
	free(sql.s);
}

static const char *
arg(int argc, char **argv, const char *name, const char *dflt)
{
	for (int i = 1; i < argc - 1; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return dflt;
}

int
main(int argc, char **argv)
{
	unsigned long long seed = strtoull(arg(argc, argv, "--seed", "1"), NULL, 10);
	long		iterations = atol(arg(argc, argv, "--iterations", "1000"));
	long		refresh_every = atol(arg(argc, argv, "--refresh-every", "150"));
	time_t		t0 = time(NULL);

	dsn_su = arg(argc, argv, "--dsn", "dbname=postgres");
	dsn_role = arg(argc, argv, "--dsn-role", dsn_su);
	out = fopen(arg(argc, argv, "--out", "/dev/stdout"), "a");
	if (!out)
		return 2;
	rs = seed * 0x9E3779B97F4A7C15ULL + 1;
	su = connect_retry(dsn_su);
	role = connect_retry(dsn_role);
	load_functions();
	fprintf(out, "SEED\t%llu\n", seed);
	fprintf(out, "FUNCTIONS\t%d\n", nfns);
	refresh_pools();
	for (long i = 1; i <= iterations; i++)
	{
		if (i % refresh_every == 0)
			refresh_pools();
		one_call(i);
	}
	fprintf(out, "CALLS\t%ld\tok=%ld\tcrashes=%ld\tunexpected=%ld\tseconds=%ld\n",
			n_calls, n_ok, n_crash, n_unexpected, (long) (time(NULL) - t0));
	for (int i = 0; i < n_st; i++)
		fprintf(out, "STATE\t%s\t%ld\n", st_name[i], st_count[i]);
	for (int i = 0; i < nfns; i++)
	{
		fprintf(out, "FUNC\t%s.%s\t%ld\t%ld\t", fns[i].schema, fns[i].name, fns[i].calls, fns[i].oks);
		for (int k = 0; k < fns[i].nfst; k++)
			fprintf(out, "%s%s=%ld", k ? " " : "", fns[i].fst[k], fns[i].fstn[k]);
		fprintf(out, "\n");
	}
	fclose(out);
	PQfinish(su);
	PQfinish(role);
	return (n_crash || n_unexpected) ? 1 : 0;
}
