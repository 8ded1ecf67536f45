/* jsonb_util.h: small jsonb builders and readers (jsonb_util.c; layer 0). */
#ifndef WL_JSONB_UTIL_H
#define WL_JSONB_UTIL_H

#include "datatype/timestamp.h"
#include "utils/array.h"
#include "utils/jsonb.h"

extern JsonbValue *wl_json_get(JsonbContainer *c, const char *key);
extern JsonbContainer *wl_json_get_object(JsonbContainer *c, const char *key);
extern char *wl_json_get_text(JsonbContainer *c, const char *key);
extern ArrayType *wl_json_get_strings(JsonbContainer *c, const char *key);
extern bool wl_json_keys_within(JsonbContainer *c, const char *const *allowed, char **unknown);
extern bool wl_json_int_value(JsonbValue *v, int64 *out);
extern bool wl_json_get_int(JsonbContainer *c, const char *key, int64 *out);
extern bool wl_json_is_object(JsonbValue *v);
extern bool wl_json_is_array(JsonbValue *v);
extern Jsonb *wl_json_parse(const char *text);
extern bool wl_json_equal(Jsonb *a, Jsonb *b);
extern Jsonb *wl_json_take_ints(Jsonb *obj, const char *const *keys, int n, int64 *vals,
								bool *found);
extern Jsonb *wl_json_put_ints(Jsonb *obj, const char *const *keys, int n, const int64 *vals,
							   const bool *found);

/* text[] helpers (elements as C strings) */
extern char **wl_array_items(ArrayType *a, int *n);
extern bool wl_array_contains(ArrayType *a, const char *item);
extern ArrayType *wl_array_of(Datum *d, bool *nulls, int n, Oid type);

/* A small builder for jsonb objects made in C (evidence, answers). */
typedef struct WlJson
{
	JsonbParseState *state;
} WlJson;

extern void wl_json_begin(WlJson *b);
extern void wl_json_str(WlJson *b, const char *key, const char *val);
extern void wl_json_int(WlJson *b, const char *key, int64 val);
extern void wl_json_bool(WlJson *b, const char *key, bool val);
extern void wl_json_ts(WlJson *b, const char *key, TimestampTz val);
extern void wl_json_jsonb(WlJson *b, const char *key, Jsonb *val);
extern void wl_json_strs(WlJson *b, const char *key, ArrayType *vals);
extern void wl_json_object(WlJson *b, const char *key);
extern void wl_json_object_end(WlJson *b);
extern Jsonb *wl_json_end(WlJson *b);

/*
 * A jsonb object written directly in jsonb's binary form (wl_jw_object):
 * pairs[] in jsonb's key order (shorter keys first, then by their bytes),
 * which it checks.  For a document of fixed shape made often (a
 * completion's result); the same bytes as the builder above makes.
 */
typedef enum WlJvKind
{
	WL_JV_STR,					/* str (NULL: null) */
	WL_JV_INT,					/* i */
	WL_JV_JSONB,				/* jsonb (NULL: null) */
	WL_JV_STRS,					/* strs, a text[] (NULL: null) */
	WL_JV_OBJECT				/* obj[0..nobj) */
} WlJvKind;

typedef struct WlJv
{
	const char *key;
	WlJvKind	kind;
	const char *str;
	int64		i;
	Jsonb	   *jsonb;
	ArrayType  *strs;
	const struct WlJv *obj;
	int			nobj;
} WlJv;

extern Jsonb *wl_jw_object(const WlJv *pairs, int n);

#endif
