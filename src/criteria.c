/*
 * criteria.c: completion criteria (SPEC section 7), a closed set validated
 * at create: whether an output meets them, and what a completion that does
 * not becomes (the attempt fails for good).  Layer 3.
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "clock.h"
#include "criteria.h"
#include "fence.h"
#include "jsonb_util.h"
#include "store_ops.h"
#include "transition.h"



/* contains: whether some object in array output has field equal to want. */
static bool
contains(Jsonb *output, const char *field, JsonbValue *want)
{
	JsonbIterator *it = JsonbIteratorInit(&output->root);
	JsonbValue	e;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		JsonbValue *v;

		if (tok != WJB_ELEM || e.type != jbvBinary || !JsonContainerIsObject(e.val.binary.data))
			continue;
		v = wl_json_get(e.val.binary.data, field);
		if (v && wl_json_equal(JsonbValueToJsonb(v), JsonbValueToJsonb(want)))
			return true;
	}
	return false;
}

/* criterion_unmet: NULL when output meets one criterion (validated at create), else why not. */
static char *
criterion_unmet(JsonbContainer *c, Jsonb *output)
{
	char	   *kind = wl_json_get_text(c, "kind");
	int			count;
	int64		min;
	int64		max;

	if (!JB_ROOT_IS_ARRAY(output) || JB_ROOT_IS_SCALAR(output))
		return psprintf("%s needs an array output", kind);
	count = JB_ROOT_COUNT(output);
	if (strcmp(kind, "result_count") == 0)
	{
		if (wl_json_get_int(c, "min", &min) && count < min)
			return psprintf("output has %d result%s; result_count needs at least " INT64_FORMAT,
							count, count == 1 ? "" : "s", min);
		if (wl_json_get_int(c, "max", &max) && count > max)
			return psprintf("output has %d result%s; result_count allows at most " INT64_FORMAT,
							count, count == 1 ? "" : "s", max);
		return NULL;
	}
	if (!contains(output, wl_json_get_text(c, "field"), wl_json_get(c, "equals")))
		return psprintf("no result has \"%s\" equal to %s", wl_json_get_text(c, "field"),
						JsonbToCString(NULL, &JsonbValueToJsonb(wl_json_get(c, "equals"))->root, -1));
	return NULL;
}

/*
 * wl_criteria_unmet: NULL when output satisfies every completion
 * criterion of the workload, else the first reason it does not.
 */
char *
wl_criteria_unmet(const WlRow *row, Jsonb *output)
{
	WlSpecRow	spec;
	Jsonb	   *criteria;
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;

	wl_store_spec_read(row, &spec);
	criteria = spec.completion_criteria;
	if (criteria == NULL)
		return NULL;
	it = JsonbIteratorInit(&criteria->root);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		char	   *why;

		if (tok == WJB_ELEM && e.type == jbvBinary &&
			(why = criterion_unmet(e.val.binary.data, output)) != NULL)
			return why;
	}
	return NULL;
}

/*
 * wl_criteria_fail ends the locked row's attempt as failed with kind
 * COMPLETION_CRITERIA_UNMET: FAILED, then DEAD_LETTER (permanent, whatever
 * retry_on says); no result is stored.  Returns the answer
 * workload_complete gives instead of a result.
 */
Jsonb *
wl_criteria_fail(WlRow *row, const char *worker_id, const char *result_id,
					  const char *reason)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_str(&b, "kind", "COMPLETION_CRITERIA_UNMET");
	wl_json_str(&b, "error", reason);
	wl_json_ts(&b, "at", wl_now());
	row->last_failure = wl_json_end(&b);
	row->failure_changed = true;
	wl_fence_release(row);
	wl_transition(row, WL_FAILED, worker_id, row->last_failure);
	wl_store_attempt_close(row, "FAILED", "COMPLETION_CRITERIA_UNMET", reason);
	wl_json_begin(&b);
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_str(&b, "cause", "completion_criteria_unmet");
	wl_transition(row, WL_DEAD_LETTER, "workload.retry", wl_json_end(&b));

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row->workload_id);
	wl_json_str(&b, "result_id", result_id);
	wl_json_str(&b, "outcome", "completion_criteria_unmet");
	wl_json_str(&b, "code", "COMPLETION_CRITERIA_UNMET");
	wl_json_str(&b, "reason", reason);
	wl_json_str(&b, "state", wl_state_name(row->state));
	return wl_json_end(&b);
}
