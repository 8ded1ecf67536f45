/* payload.h: jsonb shape checks, limits and secret scanning (payload.c). */
#ifndef WL_PAYLOAD_H
#define WL_PAYLOAD_H

#include "datatype/timestamp.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "errors.h"
#include "states.h"

#define WL_MAX_PAYLOAD_BYTES	(1024 * 1024)	/* input, state, output */
#define WL_MAX_SPEC_BYTES		(2 * 1024 * 1024)
#define WL_MAX_PROGRESS_BYTES	(8 * 1024)
#define WL_MAX_DEPTH			64
#define WL_MAX_ID_LEN			256
#define WL_MAX_ERROR_LEN		(64 * 1024)
#define WL_MAX_ARRAY_ITEMS		256
#define WL_MAX_BATCH			1000	/* claim max_items, complete_many items */

typedef struct WlSpec
{
	char	   *tenant_id;
	char	   *application_id;
	char	   *environment;
	char	   *definition_id;
	char	   *definition_revision;
	char	   *trigger;
	char	   *idempotency_key;
	Jsonb	   *input;
	Jsonb	   *requested_by;
	char	   *requested_kind;
	char	   *requested_id;
	Jsonb	   *authorization_snapshot;
	ArrayType  *capability_snapshot;
	ArrayType  *connection_scopes;
	int			priority;
	int			max_attempts;
	int64		initial_delay_ms;
	int64		max_delay_ms;
	char	   *backoff;
	ArrayType  *retry_on;
	Jsonb	   *timeouts;
	int			ndeps;
	char	  **dep_ids;
	WlState    *dep_states;
	Jsonb	   *dependencies;	/* normalized: required_state filled in */
	Jsonb	   *completion_criteria;
	Jsonb	   *governing_snapshots;	/* NULL when absent */
} WlSpec;

extern void wl_payload_parse_spec(Jsonb *spec, WlSpec *out);
extern WlErr wl_payload_verdict(Jsonb *j, const char *what, Size max_bytes, char **detail);
extern void wl_payload_check(Jsonb *j, const char *what, Size max_bytes);
extern void wl_payload_check_text(const char *s, const char *what, Size max_len);
extern char *wl_payload_id_arg(text *t, const char *what);
extern ArrayType *wl_payload_text_array(ArrayType *a, const char *what);
extern int	wl_payload_batch_count(Jsonb *items);
extern char **wl_payload_array_items(ArrayType *a, int *n);
extern bool wl_payload_array_contains(ArrayType *a, const char *item);

extern JsonbValue *wl_json_get(JsonbContainer *c, const char *key);
extern JsonbContainer *wl_json_get_object(JsonbContainer *c, const char *key);
extern char *wl_json_get_text(JsonbContainer *c, const char *key);
extern ArrayType *wl_json_get_strings(JsonbContainer *c, const char *key);
extern bool wl_json_keys_within(JsonbContainer *c, const char *const *allowed, char **unknown);
extern bool wl_json_int_value(JsonbValue *v, int64 *out);
extern bool wl_json_get_int(JsonbContainer *c, const char *key, int64 *out);

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
extern Jsonb *wl_json_end(WlJson *b);

#endif
