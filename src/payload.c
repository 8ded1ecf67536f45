/*
 * payload.c: size and depth limits and secret scanning of every value a
 * caller stores (SPEC section 5, "Secrets").  Layer 1: it reads values and
 * never touches a table.
 */
#include "postgres.h"

#include "common/unicode_norm.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/jsonb.h"

#include "errors.h"
#include "payload.h"

/*
 * Credential keys (SPEC section 5), after normalisation (NFKC, lower case,
 * "_", "-", "." and spaces removed): refused when they end with one of these,
 * or are one of the second list.  Keys that merely contain such a word
 * (max_tokens, token_count, next_page_token, secret_ref, password_policy)
 * stay allowed.
 */
static const char *const secret_key_endings[] = {
	"password", "passwd", "secret", "apikey", "privatekey", "secretaccesskey", "credentials", NULL
};
static const char *const secret_key_names[] = {
	"token", "accesstoken", "refreshtoken", "authtoken", "bearertoken", "idtoken",
	"sessiontoken", NULL
};

/*
 * normalize_key: a key as the rule compares it: NFKC (in a UTF-8 database),
 * ASCII lower case, without "_", "-", "." and spaces.
 */
static char *
normalize_key(const char *s, int len)
{
	StringInfoData out;
	bool		ascii = true;

	/* keys are short and there are many: no 1 kB buffer for each */
	out.maxlen = Max(len + 1, 32);
	out.data = palloc(out.maxlen);
	out.data[0] = '\0';
	out.len = 0;
	out.cursor = 0;
	/* NFKC leaves ASCII as it is: only a key with other characters needs it */
	for (int i = 0; i < len && ascii; i++)
		ascii = !IS_HIGHBIT_SET(s[i]);
	if (!ascii && GetDatabaseEncoding() == PG_UTF8)
	{
		pg_wchar   *w = palloc(sizeof(pg_wchar) * (len + 1));
		pg_wchar   *n;
		int			wl = pg_mb2wchar_with_len(s, w, len);

		w[wl] = 0;
		n = unicode_normalize(UNICODE_NFKC, w);
		if (n == NULL)
			elog(ERROR, "out of memory");
		for (int i = 0; n[i]; i++)
		{
			unsigned char mb[8];
			int			k;

			if (n[i] == '_' || n[i] == '-' || n[i] == '.' || n[i] == ' ')
				continue;
			if (n[i] < 128)
			{
				appendStringInfoChar(&out, (char) pg_ascii_tolower((unsigned char) n[i]));
				continue;
			}
			k = pg_wchar2mb_with_len(&n[i], (char *) mb, 1);
			appendBinaryStringInfo(&out, (char *) mb, k);
		}
		pfree(n);
		pfree(w);
		return out.data;
	}
	for (int i = 0; i < len; i++)
	{
		if (s[i] == '_' || s[i] == '-' || s[i] == '.' || s[i] == ' ')
			continue;
		appendStringInfoChar(&out, (char) pg_ascii_tolower((unsigned char) s[i]));
	}
	return out.data;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t		n = strlen(s);
	size_t		m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* is_secret_key: the key rule of SPEC section 5. */
static bool
is_secret_key(const char *s, int len)
{
	char	   *k = normalize_key(s, len);

	for (int i = 0; secret_key_endings[i]; i++)
	{
		if (ends_with(k, secret_key_endings[i]))
			return true;
	}
	for (int i = 0; secret_key_names[i]; i++)
	{
		if (strcmp(k, secret_key_names[i]) == 0)
			return true;
	}
	return false;
}

static bool
starts_with_ci(const char *s, int len, const char *prefix)
{
	int			m = strlen(prefix);

	return len >= m && pg_strncasecmp(s, prefix, m) == 0;
}

/*
 * has_pem_private_key: any PEM private key header, "-----BEGIN ... PRIVATE
 * KEY-----" (RSA, EC, DSA, OPENSSH, ENCRYPTED or none), or 1.1's "BEGIN
 * PRIVATE KEY".
 */
static bool
has_pem_private_key(const char *s, int len)
{
	static const char begin[] = "-----BEGIN ";
	static const char end[] = "PRIVATE KEY-----";
	static const char plain[] = "BEGIN PRIVATE KEY";

	for (int i = 0; i < len; i++)
	{
		if (len - i >= (int) sizeof(plain) - 1 && memcmp(s + i, plain, sizeof(plain) - 1) == 0)
			return true;
		if (len - i >= (int) sizeof(begin) - 1 && memcmp(s + i, begin, sizeof(begin) - 1) == 0)
		{
			int			j = i + sizeof(begin) - 1;

			/* the kind: capital letters and spaces, then PRIVATE KEY----- */
			while (j < len && j - i < 64 && ((s[j] >= 'A' && s[j] <= 'Z') || s[j] == ' '))
			{
				if (len - j >= (int) sizeof(end) - 1 && memcmp(s + j, end, sizeof(end) - 1) == 0)
					return true;
				j++;
			}
		}
	}
	return false;
}

/*
 * Prefixes of the credentials common services issue, refused at the start of
 * a value (any case): OpenAI and the like (sk-), FoundationDB (fdb_live_),
 * Stripe secret, restricted and webhook keys, GitHub tokens, Slack tokens.
 */
static const char *const secret_prefixes[] = {
	"sk-", "fdb_live_",
	"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_",
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-",
	NULL
};

static bool
is_upper_alnum(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool
is_base64url(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_';
}

static bool
is_base64(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '+' || c == '/' || c == '=';
}

/* is_aws_key_id: an AWS access key id, AKIA or ASIA and 16 capitals or digits */
static bool
is_aws_key_id(const char *s, int len)
{
	if (len < 20 || (strncmp(s, "AKIA", 4) != 0 && strncmp(s, "ASIA", 4) != 0))
		return false;
	for (int i = 4; i < 20; i++)
	{
		if (!is_upper_alnum(s[i]))
			return false;
	}
	return len == 20 || !is_upper_alnum(s[20]);
}

/* is_jwt: a JSON Web Token, three base64url parts joined by dots, its header a JSON object */
static bool
is_jwt(const char *s, int len)
{
	int			dots = 0;
	int			i;

	if (len < 10 || strncmp(s, "eyJ", 3) != 0)
		return false;
	for (i = 0; i < len && (is_base64url(s[i]) || s[i] == '.'); i++)
		dots += s[i] == '.';
	return dots == 2 && (i == len || s[i] == ' ' || s[i] == '"');
}

/* is_basic_auth: "Basic " and a base64 user:password */
static bool
is_basic_auth(const char *s, int len)
{
	int			n = 0;

	if (!starts_with_ci(s, len, "basic "))
		return false;
	for (int i = 6; i < len && is_base64(s[i]); i++)
		n++;
	return n >= 4;
}

/*
 * has_url_password: a URL anywhere in the value that carries a password,
 * scheme://user:password@host
 */
static bool
has_url_password(const char *s, int len)
{
	for (int i = 0; i + 3 < len; i++)
	{
		bool		colon = false;

		if (s[i] != ':' || s[i + 1] != '/' || s[i + 2] != '/')
			continue;
		for (int j = i + 3; j < len; j++)
		{
			char		c = s[j];

			if (c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n')
				break;
			if (c == ':')
				colon = true;
			else if (c == '@')
			{
				if (colon)
					return true;
				break;
			}
		}
	}
	return false;
}

/* skip_spaces: past leading spaces and tabs */
static void
skip_spaces(const char **s, int *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t'))
		(*s)++, (*len)--;
}

/*
 * is_secret_string: the value rules of SPEC section 5: a PEM private key
 * header or a URL with a password anywhere; or, after leading spaces, an
 * "Authorization:" header name (whatever follows it) or a "Bearer " prefix,
 * a value starting with a known credential prefix (sk-, fdb_live_, sk_live_,
 * ghp_, xoxb-, ...: secret_prefixes, any case), an AWS access key id, a JSON
 * Web Token, or "Basic " credentials.
 */
static bool
is_secret_string(const char *s, int len)
{
	if (has_pem_private_key(s, len) || has_url_password(s, len))
		return true;
	skip_spaces(&s, &len);
	if (starts_with_ci(s, len, "authorization:") || starts_with_ci(s, len, "proxy-authorization:"))
		return true;
	if (starts_with_ci(s, len, "bearer "))
	{
		s += 7, len -= 7;
		skip_spaces(&s, &len);
	}
	for (int i = 0; secret_prefixes[i]; i++)
	{
		if (starts_with_ci(s, len, secret_prefixes[i]))
			return true;
	}
	return is_aws_key_id(s, len) || is_jwt(s, len) || is_basic_auth(s, len);
}

/* wl_payload_secret_text: whether a text value looks like a credential (the value rules). */
bool
wl_payload_secret_text(const char *s)
{
	return is_secret_string(s, strlen(s));
}

static WlErr verdict(Jsonb *j, const char *what, Size max_bytes, int max_depth, char **detail);

/*
 * wl_payload_verdict judges a value without raising: WL_E_INVALID when it is
 * larger than max_bytes or nested deeper than WL_MAX_DEPTH,
 * WL_E_SECRET_REJECTED when it carries a secret key or value at any depth,
 * else WL_OK.  *detail names the key, never a secret value.
 */
WlErr
wl_payload_verdict(Jsonb *j, const char *what, Size max_bytes, char **detail)
{
	return verdict(j, what, max_bytes, WL_MAX_DEPTH, detail);
}

static WlErr
verdict(Jsonb *j, const char *what, Size max_bytes, int max_depth, char **detail)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			depth = 0;

	if (VARSIZE(j) > max_bytes)
	{
		*detail = psprintf("The %s is %zu bytes; the limit is %zu.", what,
						   (size_t) VARSIZE(j), (size_t) max_bytes);
		return WL_E_INVALID;
	}
	it = JsonbIteratorInit(&j->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		switch (tok)
		{
			case WJB_BEGIN_ARRAY:
			case WJB_BEGIN_OBJECT:
				if (++depth > max_depth)
				{
					*detail = psprintf("The %s is nested deeper than %d levels.", what, max_depth);
					return WL_E_INVALID;
				}
				break;
			case WJB_END_ARRAY:
			case WJB_END_OBJECT:
				depth--;
				break;
			case WJB_KEY:
				if (is_secret_key(v.val.string.val, v.val.string.len))
				{
					*detail = psprintf("The %s has a key \"%.*s\"; pass secrets as %s references.",
									   what, v.val.string.len, v.val.string.val, WL_SECRET_SCHEME);
					return WL_E_SECRET_REJECTED;
				}
				if (is_secret_string(v.val.string.val, v.val.string.len))
				{
					*detail = psprintf("The %s has a key that looks like a credential.", what);
					return WL_E_SECRET_REJECTED;
				}
				break;
			case WJB_VALUE:
			case WJB_ELEM:
				if (v.type == jbvString &&
					is_secret_string(v.val.string.val, v.val.string.len))
				{
					*detail = psprintf("The %s has a string that looks like a credential; pass secrets as %s references.",
									   what, WL_SECRET_SCHEME);
					return WL_E_SECRET_REJECTED;
				}
				break;
			default:
				break;
		}
	}
	return WL_OK;
}

/*
 * wl_payload_check_secrets raises WORKLOAD_SECRET_REJECTED when a value
 * (a whole create spec) carries a secret key or value at any depth; its
 * size and depth are limited elsewhere.
 */
void
wl_payload_check_secrets(Jsonb *j, const char *what)
{
	char	   *detail;
	WlErr		err = verdict(j, what, VARSIZE(j), WL_MAX_DEPTH + 2, &detail);

	if (err != WL_OK)
		wl_refuse(err, errdetail_internal("%s", detail));
}

/* wl_payload_check raises what wl_payload_verdict finds. */
void
wl_payload_check(Jsonb *j, const char *what, Size max_bytes)
{
	char	   *detail;
	WlErr		err = wl_payload_verdict(j, what, max_bytes, &detail);

	if (err != WL_OK)
		wl_refuse(err, errdetail_internal("%s", detail));
}

/* wl_payload_check_text applies the secret value rules and a length limit to text. */
void
wl_payload_check_text(const char *s, const char *what, Size max_len)
{
	size_t		len = strlen(s);

	if (len > max_len)
		wl_refuse(WL_E_INVALID,
				  errdetail("The %s is %zu bytes; the limit is %zu.", what, len, (size_t) max_len));
	if (is_secret_string(s, (int) len))
		wl_refuse(WL_E_SECRET_REJECTED,
				  errdetail("The %s looks like a credential; pass secrets as %s references.", what, WL_SECRET_SCHEME));
}
