/*
 * spec.c: the workload_create spec (SPEC section 4): its closed set of
 * fields, their types, their defaults.  Fills a WlSpec; refuses anything
 * else with WORKLOAD_INVALID.  Layer 1: it reads jsonb and never touches a
 * table.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "args.h"
#include "clock.h"
#include "errors.h"
#include "jsonb_util.h"
#include "payload.h"
#include "spec.h"

static const char *const spec_fields[] = {
	"tenant_id", "application_id", "environment", "definition_id",
	"definition_revision", "trigger", "input", "requested_by",
	"authorization_snapshot", "capability_snapshot", "connection_scopes",
	"priority", "idempotency_key", "retry_policy", "timeouts", "dependencies",
	"completion_criteria", "governing_snapshots", "not_before", NULL
};
static const char *const subject_fields[] = {"kind", "id", NULL};
const char *const wl_subject_kinds[] = {"agent", "human", "service", "workload", NULL};
static const char *const snapshot_fields[] = {"grant", "key_id", "signature", NULL};
static const char *const stored_snapshot_fields[] = {"grant", "key_id", "signature_sha256", NULL};
static const char *const policy_fields[] = {
	"max_attempts", "initial_delay_ms", "max_delay_ms", "backoff", "retry_on", NULL
};
#define WL_TIMEOUT_NAME(f) #f,
const char *const wl_timeout_fields[] = {WL_TIMEOUTS(WL_TIMEOUT_NAME) NULL};
#undef WL_TIMEOUT_NAME
static const char *const dependency_fields[] = {"workload_id", "required_state", NULL};
const char *const wl_governing_fields[] = {
	"proposal_digest", "manifest_digest", "registry_digest", "policy_digest",
	"authorization_digest", NULL
};
static const char *const count_fields[] = {"kind", "min", "max", NULL};
static const char *const contains_fields[] = {"kind", "field", "equals", NULL};

#define MAX_MS ((int64) 10 * 366 * 24 * 3600 * 1000)	/* ten years */

/* wl_in_list: whether s is one of the NULL-terminated list's strings. */
bool
wl_in_list(const char *const *list, const char *s)
{
	for (int i = 0; s && list[i]; i++)
	{
		if (strcmp(list[i], s) == 0)
			return true;
	}
	return false;
}

#define is_object wl_json_is_object
#define is_array wl_json_is_array
#define field wl_json_get

/* check_keys refuses any key of object c not in allowed. */
static void
check_keys(JsonbContainer *c, const char *const *allowed, const char *where)
{
	char	   *key;

	if (!wl_json_keys_within(c, allowed, &key))
		wl_refuse(WL_E_INVALID, errdetail("Object %s has an unknown field \"%s\".", where, key));
}

static JsonbContainer *
object_field(JsonbContainer *c, const char *key, const char *where, bool required)
{
	JsonbValue *v = field(c, key);

	if (v == NULL || v->type == jbvNull)
	{
		if (required)
			wl_refuse(WL_E_INVALID, errdetail("Field %s.%s is required.", where, key));
		return NULL;
	}
	if (!is_object(v))
		wl_refuse(WL_E_INVALID, errdetail("Field %s.%s must be an object.", where, key));
	return v->val.binary.data;
}

static char *
text_value(JsonbValue *v, const char *where, const char *key, int maxlen)
{
	char	   *s;

	if (v->type != jbvString)
		wl_refuse(WL_E_INVALID, errdetail("Field %s.%s must be a string.", where, key));
	if (wl_text_blank(v->val.string.val, v->val.string.len))
		wl_refuse(WL_E_INVALID, errdetail("Field %s.%s must not be blank.", where, key));
	if (v->val.string.len > maxlen)
		wl_refuse(WL_E_INVALID,
				  errdetail("Field %s.%s is longer than %d bytes.", where, key, maxlen));
	s = pnstrdup(v->val.string.val, v->val.string.len);
	return s;
}

static char *
text_field(JsonbContainer *c, const char *key, const char *where, bool required)
{
	JsonbValue *v = field(c, key);

	if (v == NULL || v->type == jbvNull)
	{
		if (required)
			wl_refuse(WL_E_INVALID, errdetail("Field %s.%s is required.", where, key));
		return NULL;
	}
	return text_value(v, where, key, WL_MAX_ID_LEN);
}

static bool
int_field(JsonbContainer *c, const char *key, const char *where,
		  int64 min, int64 max, int64 *out)
{
	JsonbValue *v = field(c, key);

	if (v == NULL || v->type == jbvNull)
		return false;
	if (!wl_json_int_value(v, out) ||
		*out < min || *out > max)
		wl_refuse(WL_E_INVALID,
				  errdetail("Field %s.%s must be an integer from " INT64_FORMAT " to " INT64_FORMAT ".",
							where, key, min, max));
	return true;
}

/* text_array_field turns a JSON array of non-blank strings into text[]; NULL when absent. */
static ArrayType *
text_array_field(JsonbContainer *c, const char *key, const char *where)
{
	JsonbValue *v = field(c, key);
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	int			n;
	Datum	   *items;
	int			count = 0;

	if (v == NULL || v->type == jbvNull)
		return NULL;
	if (!is_array(v))
		wl_refuse(WL_E_INVALID, errdetail("Field %s.%s must be an array of strings.", where, key));
	n = JsonContainerSize(v->val.binary.data);
	if (n > WL_MAX_ARRAY_ITEMS)
		wl_refuse(WL_E_INVALID,
				  errdetail("Field %s.%s has %d items; the limit is %d.", where, key, n, WL_MAX_ARRAY_ITEMS));
	items = palloc(sizeof(Datum) * (n + 1));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		/* an element's refusal names the element: "spec.capability_snapshot[]" */
		items[count++] = CStringGetTextDatum(text_value(&e, where, psprintf("%s[]", key),
														WL_MAX_ID_LEN));
	}
	return construct_array(items, count, TEXTOID, -1, false, TYPALIGN_INT);
}

static ArrayType *
empty_text_array(void)
{
	return construct_empty_array(TEXTOID);
}

static void
parse_subject(WlSpec *out, JsonbValue *v)
{
	char	   *kind;

	if (v == NULL || v->type == jbvNull)
		wl_refuse(WL_E_INVALID, errdetail("Field spec.requested_by is required."));
	if (!is_object(v))
		wl_refuse(WL_E_INVALID, errdetail("Field spec.requested_by must be an object."));
	check_keys(v->val.binary.data, subject_fields, "spec.requested_by");
	kind = text_field(v->val.binary.data, "kind", "spec.requested_by", true);
	if (!wl_in_list(wl_subject_kinds, kind))
		wl_refuse(WL_E_INVALID,
				  errdetail("Field spec.requested_by.kind must be agent, human, service or workload."));
	out->requested_kind = kind;
	out->requested_id = text_field(v->val.binary.data, "id", "spec.requested_by", true);
	out->requested_by = JsonbValueToJsonb(v);
}

static void
parse_snapshot(WlSpec *out, JsonbValue *v)
{
	const char *sig = out->stored_authority ? "signature_sha256" : "signature";

	if (v == NULL || v->type == jbvNull)
		wl_refuse(WL_E_INVALID, errdetail("Field spec.authorization_snapshot is required."));
	if (!is_object(v))
		wl_refuse(WL_E_INVALID, errdetail("Field spec.authorization_snapshot must be an object."));
	check_keys(v->val.binary.data,
			   out->stored_authority ? stored_snapshot_fields : snapshot_fields,
			   "spec.authorization_snapshot");
	object_field(v->val.binary.data, "grant", "spec.authorization_snapshot", true);
	text_field(v->val.binary.data, "key_id", "spec.authorization_snapshot", true);
	text_field(v->val.binary.data, sig, "spec.authorization_snapshot", true);
	out->authorization_snapshot = JsonbValueToJsonb(v);
}

static void
parse_policy(WlSpec *out, JsonbContainer *c)
{
	WlPolicy   *p = &out->policy;
	int64		n;
	char	   *backoff;

	p->max_attempts = 3;
	p->initial_delay_ms = 1000;
	p->max_delay_ms = 300000;
	out->backoff = "exponential";
	p->retry_on = NULL;
	if (c != NULL)
	{
		check_keys(c, policy_fields, "spec.retry_policy");
		if (int_field(c, "max_attempts", "spec.retry_policy", 1, 1000, &n))
			p->max_attempts = (int) n;
		int_field(c, "initial_delay_ms", "spec.retry_policy", 0, MAX_MS, &p->initial_delay_ms);
		int_field(c, "max_delay_ms", "spec.retry_policy", 0, MAX_MS, &p->max_delay_ms);
		if (p->max_delay_ms < p->initial_delay_ms)
			wl_refuse(WL_E_INVALID,
					  errdetail("Field spec.retry_policy.max_delay_ms must not be less than initial_delay_ms."));
		backoff = text_field(c, "backoff", "spec.retry_policy", false);
		if (backoff)
		{
			if (strcmp(backoff, "exponential") != 0 && strcmp(backoff, "fixed") != 0)
				wl_refuse(WL_E_INVALID,
						  errdetail("Field spec.retry_policy.backoff must be \"exponential\" or \"fixed\"."));
			out->backoff = backoff;
		}
		p->retry_on = text_array_field(c, "retry_on", "spec.retry_policy");
	}
	p->exponential = strcmp(out->backoff, "exponential") == 0;
	if (p->retry_on == NULL)
	{
		Datum		kinds[3];

		kinds[0] = CStringGetTextDatum("timeout");
		kinds[1] = CStringGetTextDatum("worker_failure");
		kinds[2] = CStringGetTextDatum("transient_connection");
		p->retry_on = construct_array(kinds, 3, TEXTOID, -1, false, TYPALIGN_INT);
	}
}

/* parse_timeouts reads the timeouts object into out->timeout_ms (0 where absent). */
static void
parse_timeouts(WlSpec *out, JsonbValue *v)
{
	int64		ms[WL_TIMEOUT_COUNT];

	memset(ms, 0, sizeof(ms));
	memset(out->timeout_set, 0, sizeof(out->timeout_set));
	if (v == NULL || v->type == jbvNull)
		out->timeouts = wl_json_parse("{}");
	else
	{
		if (!is_object(v))
			wl_refuse(WL_E_INVALID, errdetail("Field spec.timeouts must be an object."));
		check_keys(v->val.binary.data, wl_timeout_fields, "spec.timeouts");
		for (int i = 0; wl_timeout_fields[i]; i++)
			out->timeout_set[i] = int_field(v->val.binary.data, wl_timeout_fields[i],
											"spec.timeouts", 1, MAX_MS, &ms[i]);
		out->timeouts = JsonbValueToJsonb(v);
	}
	{
		int			i = 0;

#define WL_TIMEOUT_FILL(f) out->timeout_ms.f = ms[i++];
		WL_TIMEOUTS(WL_TIMEOUT_FILL)
#undef WL_TIMEOUT_FILL
	}
}

static void
parse_dependencies(WlSpec *out, JsonbValue *v)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	JsonbParseState *st = NULL;
	int			n;

	out->ndeps = 0;
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	if (v != NULL && v->type != jbvNull)
	{
		if (!is_array(v))
			wl_refuse(WL_E_INVALID, errdetail("Field spec.dependencies must be an array."));
		n = JsonContainerSize(v->val.binary.data);
		if (n > WL_MAX_ARRAY_ITEMS)
			wl_refuse(WL_E_INVALID,
					  errdetail("Field spec.dependencies has %d items; the limit is %d.", n, WL_MAX_ARRAY_ITEMS));
		out->dep_ids = palloc(sizeof(char *) * (n + 1));
		out->dep_states = palloc(sizeof(WlState) * (n + 1));
		it = JsonbIteratorInit(v->val.binary.data);
		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
		{
			char	   *id;
			char	   *req;
			WlState		st_req = WL_SUCCEEDED;
			WlJson		b;

			if (tok != WJB_ELEM)
				continue;
			if (!is_object(&e))
				wl_refuse(WL_E_INVALID, errdetail("Field spec.dependencies items must be objects."));
			check_keys(e.val.binary.data, dependency_fields, "spec.dependencies[]");
			id = text_field(e.val.binary.data, "workload_id", "spec.dependencies[]", true);
			req = text_field(e.val.binary.data, "required_state", "spec.dependencies[]", false);
			if (req && !wl_state_lookup(req, &st_req))
				wl_refuse(WL_E_INVALID,
						  errdetail("Field spec.dependencies[].required_state \"%s\" is not a workload state.", req));
			for (int i = 0; i < out->ndeps; i++)
			{
				if (strcmp(out->dep_ids[i], id) == 0)
					wl_refuse(WL_E_INVALID,
							  errdetail("Field spec.dependencies names \"%s\" twice.", id));
			}
			out->dep_ids[out->ndeps] = id;
			out->dep_states[out->ndeps] = st_req;
			out->ndeps++;
			wl_json_begin(&b);
			wl_json_str(&b, "workload_id", id);
			wl_json_str(&b, "required_state", wl_state_name(st_req));
			e.type = jbvBinary;
			e.val.binary.data = &wl_json_end(&b)->root;
			pushJsonbValue(&st, WJB_ELEM, &e);
		}
	}
	out->dependencies = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_ARRAY, NULL));
}

static void
parse_criterion(JsonbValue *e)
{
	const char *where = "spec.completion_criteria[]";
	char	   *kind;
	int64		min;
	int64		max;
	JsonbValue *f;

	if (!is_object(e))
		wl_refuse(WL_E_INVALID, errdetail("Items of %s must be objects.", where));
	kind = text_field(e->val.binary.data, "kind", where, true);
	if (strcmp(kind, "result_count") == 0)
	{
		check_keys(e->val.binary.data, count_fields, where);
		if (!int_field(e->val.binary.data, "min", where, 1, INT_MAX, &min))
			wl_refuse(WL_E_INVALID, errdetail("Field %s.min is required for result_count.", where));
		if (int_field(e->val.binary.data, "max", where, 1, INT_MAX, &max) && max < min)
			wl_refuse(WL_E_INVALID, errdetail("Field %s.max must not be less than min.", where));
	}
	else if (strcmp(kind, "result_contains") == 0)
	{
		check_keys(e->val.binary.data, contains_fields, where);
		f = field(e->val.binary.data, "field");
		if (f == NULL || f->type != jbvString || f->val.string.len < 1 ||
			f->val.string.len > 128)
			wl_refuse(WL_E_INVALID, errdetail("Field %s.field must be a string of 1 to 128 characters.", where));
		if (field(e->val.binary.data, "equals") == NULL)
			wl_refuse(WL_E_INVALID, errdetail("Field %s.equals is required for result_contains.", where));
	}
	else
		wl_refuse(WL_E_INVALID,
				  errdetail("Field %s.kind must be \"result_count\" or \"result_contains\".", where));
}

static void
parse_criteria(WlSpec *out, JsonbValue *v)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;

	if (v == NULL || v->type == jbvNull)
	{
		out->completion_criteria = wl_json_parse("[]");
		return;
	}
	if (!is_array(v))
		wl_refuse(WL_E_INVALID, errdetail("Field spec.completion_criteria must be an array."));
	if (JsonContainerSize(v->val.binary.data) > WL_MAX_ARRAY_ITEMS)
		wl_refuse(WL_E_INVALID, errdetail("Field spec.completion_criteria has too many items."));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
			parse_criterion(&e);
	}
	out->completion_criteria = JsonbValueToJsonb(v);
}

static void
parse_governing(WlSpec *out, JsonbValue *v)
{
	out->governing_snapshots = NULL;
	if (v == NULL || v->type == jbvNull)
		return;
	if (!is_object(v))
		wl_refuse(WL_E_INVALID, errdetail("Field spec.governing_snapshots must be an object."));
	check_keys(v->val.binary.data, wl_governing_fields, "spec.governing_snapshots");
	for (int i = 0; wl_governing_fields[i]; i++)
		text_field(v->val.binary.data, wl_governing_fields[i], "spec.governing_snapshots", true);
	out->governing_snapshots = JsonbValueToJsonb(v);
}

/* parse_not_before reads not_before: an absolute RFC 3339 timestamp with an offset. */
static void
parse_not_before(WlSpec *out, JsonbValue *v)
{
	out->has_not_before = false;
	out->not_before = 0;
	if (v == NULL || v->type == jbvNull)
		return;
	if (v->type != jbvString || v->val.string.len > 64 ||
		!wl_clock_parse_rfc3339(pnstrdup(v->val.string.val, v->val.string.len),
								&out->not_before))
		wl_refuse(WL_E_INVALID,
				  errdetail("Field spec.not_before must be an RFC 3339 timestamp with an offset, such as \"2027-01-01T00:00:00Z\"."));
	out->has_not_before = true;
}

static void
parse(Jsonb *spec, WlSpec *out)
{
	JsonbContainer *c = &spec->root;
	JsonbValue *v;
	int64		n;

	if (!JB_ROOT_IS_OBJECT(spec) || JB_ROOT_IS_SCALAR(spec))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"spec\" must be a JSON object."));
	if (VARSIZE(spec) > WL_MAX_SPEC_BYTES)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"spec\" is %zu bytes; the limit is %d.", (size_t) VARSIZE(spec), WL_MAX_SPEC_BYTES));
	check_keys(c, spec_fields, "spec");

	out->tenant_id = text_field(c, "tenant_id", "spec", true);
	out->application_id = text_field(c, "application_id", "spec", true);
	if (strchr(out->tenant_id, ':') || strchr(out->application_id, ':'))
		wl_refuse(WL_E_INVALID,
				  errdetail("Fields spec.tenant_id and spec.application_id must not contain \":\"."));
	out->environment = text_field(c, "environment", "spec", true);
	out->definition_id = text_field(c, "definition_id", "spec", true);
	out->definition_revision = text_field(c, "definition_revision", "spec", true);
	out->trigger = text_field(c, "trigger", "spec", true);
	out->idempotency_key = text_field(c, "idempotency_key", "spec", true);

	v = field(c, "input");
	if (v == NULL)
		wl_refuse(WL_E_INVALID, errdetail("Field spec.input is required."));
	out->input = JsonbValueToJsonb(v);
	wl_payload_check(out->input, "input", WL_MAX_PAYLOAD_BYTES);
	/* every other value a caller stores is held to the same secret rules */
	wl_payload_check_secrets(spec, "spec");

	parse_subject(out, field(c, "requested_by"));
	parse_snapshot(out, field(c, "authorization_snapshot"));
	out->capability_snapshot = text_array_field(c, "capability_snapshot", "spec");
	if (out->capability_snapshot == NULL)
		out->capability_snapshot = empty_text_array();
	out->connection_scopes = text_array_field(c, "connection_scopes", "spec");
	if (out->connection_scopes == NULL)
		out->connection_scopes = empty_text_array();
	out->priority = int_field(c, "priority", "spec", INT_MIN, INT_MAX, &n) ? (int) n : 0;
	parse_policy(out, object_field(c, "retry_policy", "spec", false));
	parse_timeouts(out, field(c, "timeouts"));
	parse_dependencies(out, field(c, "dependencies"));
	parse_criteria(out, field(c, "completion_criteria"));
	parse_governing(out, field(c, "governing_snapshots"));
	parse_not_before(out, field(c, "not_before"));
}

/*
 * wl_spec_parse validates a workload_create spec and fills out with
 * its values and defaults.  Raises WORKLOAD_INVALID on any unknown field,
 * wrong type, blank id or out-of-range number, and WORKLOAD_SECRET_REJECTED
 * on a secret in input.
 */
void
wl_spec_parse(Jsonb *spec, WlSpec *out)
{
	out->stored_authority = false;
	out->inherited_grants = NULL;
	parse(spec, out);
}

/*
 * wl_spec_parse_stored is wl_spec_parse for a spec the system makes (a
 * compensation), whose authorization snapshot is a grant as stored.
 */
void
wl_spec_parse_stored(Jsonb *spec, WlSpec *out)
{
	out->stored_authority = true;
	out->inherited_grants = NULL;
	parse(spec, out);
}
