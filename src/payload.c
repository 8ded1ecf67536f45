/*
 * payload.c: jsonb shape checks, unknown-field refusal, size and depth
 * limits, secret scanning, and the small jsonb builder C answers are made
 * with.  It reads and builds values; it never touches a table.
 */
#include "postgres.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

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
 * else WL_E_COUNT.  *detail names the key, never a secret value.
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
		*detail = psprintf("%s is %zu bytes; the limit is %zu.", what,
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
					*detail = psprintf("%s is nested deeper than %d levels.", what, WL_MAX_DEPTH);
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
					*detail = psprintf("%s has a key \"%.*s\"; pass secrets as secret:// references.",
									   what, v.val.string.len, v.val.string.val);
					return WL_E_SECRET_REJECTED;
				}
				if (is_secret_string(v.val.string.val, v.val.string.len))
				{
					*detail = psprintf("%s has a key that looks like a credential.", what);
					return WL_E_SECRET_REJECTED;
				}
				break;
			case WJB_VALUE:
			case WJB_ELEM:
				if (v.type == jbvString &&
					is_secret_string(v.val.string.val, v.val.string.len))
				{
					*detail = psprintf("%s has a string value that looks like a credential; pass secrets as secret:// references.",
									   what);
					return WL_E_SECRET_REJECTED;
				}
				break;
			default:
				break;
		}
	}
	return WL_E_COUNT;
}

/* wl_payload_check raises what wl_payload_verdict finds. */
void
wl_payload_check(Jsonb *j, const char *what, Size max_bytes)
{
	char	   *detail;
	WlErr		err = wl_payload_verdict(j, what, max_bytes, &detail);

	if (err != WL_E_COUNT)
		wl_refuse(err, errdetail_internal("%s", detail));
}

/* wl_payload_check_text applies the secret value rules and a length limit to text. */
void
wl_payload_check_text(const char *s, const char *what, Size max_len)
{
	size_t		len = strlen(s);

	if (len > max_len)
		wl_refuse(WL_E_INVALID,
				  errdetail("%s is %zu bytes; the limit is %zu.", what, len, (size_t) max_len));
	if (is_secret_string(s, (int) len))
		wl_refuse(WL_E_SECRET_REJECTED,
				  errdetail("%s looks like a credential; pass secrets as secret:// references.", what));
}

static bool
is_blank(const char *s, int len)
{
	for (int i = 0; i < len; i++)
	{
		if (!isspace((unsigned char) s[i]))
			return false;
	}
	return true;
}

/* wl_payload_id_arg turns a text argument into a non-blank, bounded C string. */
char *
wl_payload_id_arg(text *t, const char *what)
{
	char	   *s = text_to_cstring(t);
	int			len = strlen(s);

	if (len == 0 || is_blank(s, len))
		wl_refuse(WL_E_INVALID, errdetail("%s must not be blank.", what));
	if (len > WL_MAX_ID_LEN)
		wl_refuse(WL_E_INVALID,
				  errdetail("%s is %d bytes; the limit is %d.", what, len, WL_MAX_ID_LEN));
	return s;
}

/*
 * wl_payload_batch_count checks the items argument of a batch function (a
 * JSON array of at most WL_MAX_BATCH items) and returns how many there are;
 * anything else is WORKLOAD_INVALID.
 */
int
wl_payload_batch_count(Jsonb *items)
{
	int			n;

	if (!JB_ROOT_IS_ARRAY(items) || JB_ROOT_IS_SCALAR(items))
		wl_refuse(WL_E_INVALID, errdetail("items must be a JSON array."));
	n = JB_ROOT_COUNT(items);
	if (n > WL_MAX_BATCH)
		wl_refuse(WL_E_INVALID, errdetail("items has %d entries; the limit is %d.", n, WL_MAX_BATCH));
	return n;
}

/*
 * wl_payload_text_array checks a text[] argument: one dimension (or empty),
 * no NULL element, no blank element, at most WL_MAX_ARRAY_ITEMS.
 */
ArrayType *
wl_payload_text_array(ArrayType *a, const char *what)
{
	int			n;
	char	  **items;

	if (ARR_NDIM(a) > 1)
		wl_refuse(WL_E_INVALID, errdetail("%s must be a one-dimensional array.", what));
	if (array_contains_nulls(a))
		wl_refuse(WL_E_INVALID, errdetail("%s must not contain NULL.", what));
	items = wl_payload_array_items(a, &n);
	if (n > WL_MAX_ARRAY_ITEMS)
		wl_refuse(WL_E_INVALID,
				  errdetail("%s has %d items; the limit is %d.", what, n, WL_MAX_ARRAY_ITEMS));
	for (int i = 0; i < n; i++)
	{
		int			len = strlen(items[i]);

		if (len == 0 || is_blank(items[i], len) || len > WL_MAX_ID_LEN)
			wl_refuse(WL_E_INVALID,
					  errdetail("%s items must be non-blank text of at most %d bytes.",
								what, WL_MAX_ID_LEN));
	}
	return a;
}

/* wl_payload_array_items returns the elements of a checked text[] as C strings. */
char **
wl_payload_array_items(ArrayType *a, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, n);
	out = palloc(sizeof(char *) * (*n + 1));
	for (int i = 0; i < *n; i++)
		out[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
	return out;
}

bool
wl_payload_array_contains(ArrayType *a, const char *item)
{
	int			n;
	char	  **items = wl_payload_array_items(a, &n);

	for (int i = 0; i < n; i++)
	{
		if (items[i] && strcmp(items[i], item) == 0)
			return true;
	}
	return false;
}

/* ---- the jsonb builder ---- */

void
wl_json_begin(WlJson *b)
{
	b->state = NULL;
	pushJsonbValue(&b->state, WJB_BEGIN_OBJECT, NULL);
}

static void
push_key(WlJson *b, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	pushJsonbValue(&b->state, WJB_KEY, &k);
}

void
wl_json_str(WlJson *b, const char *key, const char *val)
{
	JsonbValue	v;

	push_key(b, key);
	if (val == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvString;
		v.val.string.val = (char *) val;
		v.val.string.len = strlen(val);
	}
	pushJsonbValue(&b->state, WJB_VALUE, &v);
}

void
wl_json_int(WlJson *b, const char *key, int64 val)
{
	JsonbValue	v;

	push_key(b, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(val);
	pushJsonbValue(&b->state, WJB_VALUE, &v);
}

void
wl_json_bool(WlJson *b, const char *key, bool val)
{
	JsonbValue	v;

	push_key(b, key);
	v.type = jbvBool;
	v.val.boolean = val;
	pushJsonbValue(&b->state, WJB_VALUE, &v);
}

void
wl_json_ts(WlJson *b, const char *key, TimestampTz val)
{
	wl_json_str(b, key, JsonEncodeDateTime(NULL, TimestampTzGetDatum(val),
										   TIMESTAMPTZOID, NULL));
}

void
wl_json_jsonb(WlJson *b, const char *key, Jsonb *val)
{
	JsonbValue	v;

	push_key(b, key);
	if (val == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvBinary;
		v.val.binary.data = &val->root;
		v.val.binary.len = VARSIZE(val) - VARHDRSZ;
	}
	pushJsonbValue(&b->state, WJB_VALUE, &v);
}

void
wl_json_strs(WlJson *b, const char *key, ArrayType *vals)
{
	int			n;
	char	  **items = wl_payload_array_items(vals, &n);
	JsonbValue	v;

	push_key(b, key);
	pushJsonbValue(&b->state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
	{
		v.type = jbvString;
		v.val.string.val = items[i];
		v.val.string.len = strlen(items[i]);
		pushJsonbValue(&b->state, WJB_ELEM, &v);
	}
	pushJsonbValue(&b->state, WJB_END_ARRAY, NULL);
}

Jsonb *
wl_json_end(WlJson *b)
{
	return JsonbValueToJsonb(pushJsonbValue(&b->state, WJB_END_OBJECT, NULL));
}

/* ---- reading values out of jsonb objects ---- */

/* wl_json_get returns the value of key in object c, or NULL. */
JsonbValue *
wl_json_get(JsonbContainer *c, const char *key)
{
	if (c == NULL || !JsonContainerIsObject(c))
		return NULL;
	return getKeyJsonValueFromContainer(c, key, strlen(key), NULL);
}

/* wl_json_get_object returns the object at key, or NULL if absent or not an object. */
JsonbContainer *
wl_json_get_object(JsonbContainer *c, const char *key)
{
	JsonbValue *v = wl_json_get(c, key);

	if (v && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data))
		return v->val.binary.data;
	return NULL;
}

/* wl_json_get_text returns the string at key, or NULL if absent or not a string. */
char *
wl_json_get_text(JsonbContainer *c, const char *key)
{
	JsonbValue *v = wl_json_get(c, key);

	if (v && v->type == jbvString)
		return pnstrdup(v->val.string.val, v->val.string.len);
	return NULL;
}

/*
 * wl_json_get_strings returns the strings of the array at key as text[], or
 * NULL if absent, not an array, or holding anything but strings.
 */
ArrayType *
wl_json_get_strings(JsonbContainer *c, const char *key)
{
	JsonbValue *v = wl_json_get(c, key);
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	Datum	   *items;
	int			n = 0;

	if (!v || v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		return NULL;
	items = palloc(sizeof(Datum) * (JsonContainerSize(v->val.binary.data) + 1));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (e.type != jbvString)
			return NULL;
		items[n++] = PointerGetDatum(cstring_to_text_with_len(e.val.string.val, e.val.string.len));
	}
	return construct_array(items, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * wl_json_keys_within: every key of object c is in the NULL-terminated list
 * allowed; else false, with *unknown naming the first other key.
 */
bool
wl_json_keys_within(JsonbContainer *c, const char *const *allowed, char **unknown)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbValue	v;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		bool		found = false;

		if (tok != WJB_KEY)
			continue;
		for (int i = 0; allowed[i] && !found; i++)
			found = strlen(allowed[i]) == (size_t) v.val.string.len &&
				strncmp(allowed[i], v.val.string.val, v.val.string.len) == 0;
		if (!found)
		{
			*unknown = pnstrdup(v.val.string.val, Min(v.val.string.len, 64));
			return false;
		}
	}
	return true;
}

/* wl_json_int_value accepts an integral number ("12", "12.000") in int64 range. */
bool
wl_json_int_value(JsonbValue *v, int64 *out)
{
	char	   *s;
	char	   *dot;
	char	   *end;

	if (v == NULL || v->type != jbvNumeric)
		return false;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	if ((dot = strchr(s, '.')) != NULL)
	{
		for (char *p = dot + 1; *p; p++)
		{
			if (*p != '0')
				return false;
		}
		*dot = '\0';
	}
	if (!(isdigit((unsigned char) s[0]) || (s[0] == '-' && isdigit((unsigned char) s[1]))))
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* wl_json_get_int reads the integer at key; false if absent or not an integer. */
bool
wl_json_get_int(JsonbContainer *c, const char *key, int64 *out)
{
	return wl_json_int_value(wl_json_get(c, key), out);
}
