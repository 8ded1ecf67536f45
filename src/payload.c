/*
 * payload.c: size and depth limits and secret scanning of every value a
 * caller stores (SPEC section 5, "Secrets").  Layer 1: it reads values and
 * never touches a table.
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "errors.h"
#include "payload.h"

static const char *const secret_keys[] = {
	"password", "secret", "token", "api_key", "private_key"
};

/* is_secret_string: the value rules of SPEC section 5. */
static bool
is_secret_string(const char *s, int len)
{
	static const char marker[] = "BEGIN PRIVATE KEY";

	if (len >= 3 && strncmp(s, "sk-", 3) == 0)
		return true;
	if (len >= 9 && strncmp(s, "fdb_live_", 9) == 0)
		return true;
	for (int i = 0; i + (int) sizeof(marker) - 1 <= len; i++)
	{
		if (memcmp(s + i, marker, sizeof(marker) - 1) == 0)
			return true;
	}
	return false;
}

static bool
is_secret_key(const char *s, int len)
{
	for (int i = 0; i < lengthof(secret_keys); i++)
	{
		if (strlen(secret_keys[i]) == (size_t) len &&
			pg_strncasecmp(s, secret_keys[i], len) == 0)
			return true;
	}
	return false;
}

/*
 * wl_payload_verdict judges a value without raising: WL_E_INVALID when it is
 * larger than max_bytes or nested deeper than WL_MAX_DEPTH,
 * WL_E_SECRET_REJECTED when it carries a secret key or value at any depth,
 * else WL_OK.  *detail names the key, never a secret value.
 */
WlErr
wl_payload_verdict(Jsonb *j, const char *what, Size max_bytes, char **detail)
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
				if (++depth > WL_MAX_DEPTH)
				{
					*detail = psprintf("The %s is nested deeper than %d levels.", what, WL_MAX_DEPTH);
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
					*detail = psprintf("The %s has a key \"%.*s\"; pass secrets as secret:// references.",
									   what, v.val.string.len, v.val.string.val);
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
					*detail = psprintf("The %s has a string that looks like a credential; pass secrets as secret:// references.",
									   what);
					return WL_E_SECRET_REJECTED;
				}
				break;
			default:
				break;
		}
	}
	return WL_OK;
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
				  errdetail("The %s looks like a credential; pass secrets as secret:// references.", what));
}
