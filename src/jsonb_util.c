/*
 * jsonb_util.c: the small jsonb builder C answers are made with, readers of
 * jsonb objects, and text[] helpers.  Layer 0: knows nothing about
 * workloads and never touches a table.
 */
#include "postgres.h"

#include <ctype.h>
#include <errno.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "jsonb_util.h"

/* wl_array_items returns the elements of a checked text[] as C strings. */
char **
wl_array_items(ArrayType *a, int *n)
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

/* wl_array_contains: whether text[] a holds item. */
bool
wl_array_contains(ArrayType *a, const char *item)
{
	int			n;
	char	  **items = wl_array_items(a, &n);

	for (int i = 0; i < n; i++)
	{
		if (items[i] && strcmp(items[i], item) == 0)
			return true;
	}
	return false;
}

/* wl_array_of: a one-dimensional array of n values of type (nulls may be NULL). */
ArrayType *
wl_array_of(Datum *d, bool *nulls, int n, Oid type)
{
	int16		len;
	bool		byval;
	char		align;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	get_typlenbyvalalign(type, &len, &byval, &align);
	return construct_md_array(d, nulls, 1, dims, lbs, type, len, byval, align);
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
	char	  **items = wl_array_items(vals, &n);
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

/* wl_json_object: an object at key, whose members follow until wl_json_object_end */
void
wl_json_object(WlJson *b, const char *key)
{
	push_key(b, key);
	pushJsonbValue(&b->state, WJB_BEGIN_OBJECT, NULL);
}

void
wl_json_object_end(WlJson *b)
{
	pushJsonbValue(&b->state, WJB_END_OBJECT, NULL);
}

Jsonb *
wl_json_end(WlJson *b)
{
	return JsonbValueToJsonb(pushJsonbValue(&b->state, WJB_END_OBJECT, NULL));
}

/*
 * exact_int: v is a number written as an integer (no fraction digits, as
 * wl_json_int writes one) in int64 range; then *out is it.
 */
static bool
exact_int(JsonbValue *v, int64 *out)
{
	if (v == NULL || v->type != jbvNumeric || numeric_is_nan(v->val.numeric) ||
		numeric_is_inf(v->val.numeric) ||
		DatumGetInt32(DirectFunctionCall1(numeric_scale, NumericGetDatum(v->val.numeric))) != 0)
		return false;
	return wl_json_int_value(v, out);
}

/* push_pairs pushes the pairs of object obj but those of keys found[] */
static void
push_pairs(JsonbParseState **st, Jsonb *obj, const char *const *keys, int n, const bool *found)
{
	JsonbIterator *it = JsonbIteratorInit(&obj->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		skip = false;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			skip = false;
			for (int i = 0; i < n; i++)
				skip |= found[i] && v.val.string.len == (int) strlen(keys[i]) &&
					memcmp(v.val.string.val, keys[i], v.val.string.len) == 0;
			if (!skip)
				pushJsonbValue(st, WJB_KEY, &v);
		}
		else if (tok == WJB_VALUE && !skip)
			pushJsonbValue(st, WJB_VALUE, &v);
	}
}

/*
 * wl_json_take_ints takes the integers at keys[0..n) out of object obj:
 * found[i] and vals[i] say which were there (as exact integers: a number
 * with a fraction, or anything else, stays in the object).  Returns the
 * object without them (obj itself when none was taken); wl_json_put_ints
 * gives obj back.
 */
Jsonb *
wl_json_take_ints(Jsonb *obj, const char *const *keys, int n, int64 *vals, bool *found)
{
	JsonbParseState *st = NULL;
	bool		any = false;

	for (int i = 0; i < n; i++)
	{
		found[i] = JB_ROOT_IS_OBJECT(obj) && exact_int(wl_json_get(&obj->root, keys[i]), &vals[i]);
		any |= found[i];
	}
	if (!any)
		return obj;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_pairs(&st, obj, keys, n, found);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* wl_json_put_ints: object obj with the integers vals[i] at keys[i] where found[i]. */
Jsonb *
wl_json_put_ints(Jsonb *obj, const char *const *keys, int n, const int64 *vals, const bool *found)
{
	WlJson		b;
	bool		any = false;
	static const bool none[1] = {false};

	for (int i = 0; i < n; i++)
		any |= found[i];
	if (!any || !JB_ROOT_IS_OBJECT(obj))
		return obj;
	wl_json_begin(&b);
	push_pairs(&b.state, obj, keys, 0, none);
	for (int i = 0; i < n; i++)
	{
		if (found[i])
			wl_json_int(&b, keys[i], vals[i]);
	}
	return wl_json_end(&b);
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

bool
wl_json_is_object(JsonbValue *v)
{
	return v && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

bool
wl_json_is_array(JsonbValue *v)
{
	return v && v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data);
}

/* wl_json_parse: the jsonb value of a JSON text known to be valid ("{}", "[]"). */
Jsonb *
wl_json_parse(const char *text)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/* wl_json_equal: jsonb equality, as the = operator has it. */
bool
wl_json_equal(Jsonb *a, Jsonb *b)
{
	return DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(a), JsonbPGetDatum(b)));
}

/* ---- jsonb written in its binary form (see jsonb_util.h, utils/jsonb.h) ---- */

/* jw_pad: zero bytes up to a 4-byte boundary (as jsonb aligns numerics and containers); how many */
static int
jw_pad(StringInfo buf)
{
	int			pad = INTALIGN(buf->len) - buf->len;

	if (pad > 0)
	{
		enlargeStringInfo(buf, pad);
		memset(buf->data + buf->len, 0, pad);
		buf->len += pad;
		buf->data[buf->len] = '\0';
	}
	return pad;
}

/* jw_reserve: len bytes at the end of buf, their offset */
static int
jw_reserve(StringInfo buf, int len)
{
	int			at;

	enlargeStringInfo(buf, len);
	at = buf->len;
	buf->len += len;
	buf->data[buf->len] = '\0';
	return at;
}

static void jw_value(StringInfo buf, JEntry *out, const WlJv *v);

/* jw_scalar: a scalar value (not a container), as convertJsonbScalar writes it */
static void
jw_scalar(StringInfo buf, JEntry *out, const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			*out = JENTRY_ISNULL;
			break;
		case jbvString:
			appendBinaryStringInfo(buf, v->val.string.val, v->val.string.len);
			*out = (JEntry) v->val.string.len;
			break;
		case jbvNumeric:
			{
				int			len = VARSIZE_ANY(v->val.numeric);
				int			pad = jw_pad(buf);

				appendBinaryStringInfo(buf, (char *) v->val.numeric, len);
				*out = JENTRY_ISNUMERIC | (pad + len);
				break;
			}
		case jbvBool:
			*out = v->val.boolean ? JENTRY_ISBOOL_TRUE : JENTRY_ISBOOL_FALSE;
			break;
		default:
			elog(ERROR, "unexpected jsonb scalar type %d", (int) v->type);
	}
}

/* jw_string: a string value, s */
static void
jw_string(StringInfo buf, JEntry *out, const char *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = strlen(s);
	jw_scalar(buf, out, &v);
}

/* jw_entry: the JEntry of child i (its data just written, len bytes, in all *total) */
static JEntry
jw_entry(JEntry e, int i, uint32 *total)
{
	uint32		len = JBE_OFFLENFLD(e);

	*total += len;
	if (*total > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %u bytes",
						JENTRY_OFFLENMASK)));
	if ((i % JB_OFFSET_STRIDE) == 0)
		e = (e & JENTRY_TYPEMASK) | *total | JENTRY_HAS_OFF;
	return e;
}

/* jw_end: *out, the JEntry of the container written from base on (as its own data) */
static void
jw_end(StringInfo buf, int base, JEntry *out)
{
	if (buf->len - base > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %u bytes",
						JENTRY_OFFLENMASK)));
	*out = JENTRY_ISCONTAINER | (buf->len - base);
}

/* jw_strings: an array of the strings of text[] a (its NULL elements null), as convertJsonbArray writes it */
static void
jw_strings(StringInfo buf, JEntry *out, ArrayType *a)
{
	int			n;
	char	  **items = wl_array_items(a, &n);
	int			base = buf->len;
	uint32		header;
	uint32		total = 0;
	int			at;

	jw_pad(buf);
	header = (uint32) n | JB_FARRAY;
	appendBinaryStringInfo(buf, (char *) &header, sizeof(header));
	at = jw_reserve(buf, sizeof(JEntry) * n);
	for (int i = 0; i < n; i++)
	{
		JEntry		e;

		if (items[i] == NULL)
			e = JENTRY_ISNULL;
		else
			jw_string(buf, &e, items[i]);
		e = jw_entry(e, i, &total);
		memcpy(buf->data + at + sizeof(JEntry) * i, &e, sizeof(JEntry));
	}
	jw_end(buf, base, out);
}

/* jw_jsonb: the value of jsonb j, its container copied as it is (a scalar's own value) */
static void
jw_jsonb(StringInfo buf, JEntry *out, Jsonb *j)
{
	int			base = buf->len;
	JsonbValue	v;

	if (JB_ROOT_IS_SCALAR(j))
	{
		if (!JsonbExtractScalar(&j->root, &v))
			elog(ERROR, "could not read a jsonb scalar");
		jw_scalar(buf, out, &v);
		return;
	}
	jw_pad(buf);
	appendBinaryStringInfo(buf, (char *) &j->root, VARSIZE(j) - VARHDRSZ);
	jw_end(buf, base, out);
}

/* jw_key_after: whether key b comes after key a in a jsonb object (lengthCompareJsonbString) */
static bool
jw_key_after(const char *a, const char *b)
{
	size_t		la = strlen(a);
	size_t		lb = strlen(b);

	return lb != la ? lb > la : memcmp(b, a, la) > 0;
}

/* jw_obj: an object of pairs p[0..n), as convertJsonbObject writes it */
static void
jw_obj(StringInfo buf, JEntry *out, const WlJv *p, int n)
{
	int			base = buf->len;
	uint32		header;
	uint32		total = 0;
	int			at;

	for (int i = 1; i < n; i++)
	{
		if (!jw_key_after(p[i - 1].key, p[i].key))
			elog(ERROR, "jsonb keys out of order: \"%s\" before \"%s\"", p[i - 1].key, p[i].key);
	}
	jw_pad(buf);
	header = (uint32) n | JB_FOBJECT;
	appendBinaryStringInfo(buf, (char *) &header, sizeof(header));
	at = jw_reserve(buf, sizeof(JEntry) * n * 2);
	for (int i = 0; i < n; i++)
	{
		JEntry		e;

		jw_string(buf, &e, p[i].key);
		e = jw_entry(e, i, &total);
		memcpy(buf->data + at + sizeof(JEntry) * i, &e, sizeof(JEntry));
	}
	for (int i = 0; i < n; i++)
	{
		JEntry		e = JENTRY_ISNULL;

		jw_value(buf, &e, &p[i]);
		e = jw_entry(e, i + n, &total);
		memcpy(buf->data + at + sizeof(JEntry) * (i + n), &e, sizeof(JEntry));
	}
	jw_end(buf, base, out);
}

static void
jw_value(StringInfo buf, JEntry *out, const WlJv *v)
{
	JsonbValue	n;

	if ((v->kind == WL_JV_STR && v->str == NULL) ||
		(v->kind == WL_JV_JSONB && v->jsonb == NULL) || (v->kind == WL_JV_STRS && v->strs == NULL))
	{
		*out = JENTRY_ISNULL;
		return;
	}
	switch (v->kind)
	{
		case WL_JV_STR:
			jw_string(buf, out, v->str);
			break;
		case WL_JV_INT:
			n.type = jbvNumeric;
			n.val.numeric = int64_to_numeric(v->i);
			jw_scalar(buf, out, &n);
			break;
		case WL_JV_JSONB:
			jw_jsonb(buf, out, v->jsonb);
			break;
		case WL_JV_STRS:
			jw_strings(buf, out, v->strs);
			break;
		case WL_JV_OBJECT:
			jw_obj(buf, out, v->obj, v->nobj);
			break;
	}
}

/*
 * wl_jw_object: the jsonb object of pairs[0..n) (see jsonb_util.h), written
 * as convertToJsonb writes the builder's: no tree of values first, which
 * the builder allocates and walks for every value.
 */
Jsonb *
wl_jw_object(const WlJv *pairs, int n)
{
	StringInfoData buf;
	JEntry		root;
	Jsonb	   *res;

	initStringInfo(&buf);
	jw_reserve(&buf, VARHDRSZ);
	jw_obj(&buf, &root, pairs, n);
	res = (Jsonb *) buf.data;
	SET_VARSIZE(res, buf.len);
	return res;
}
