/*
 * orchestration.c: durable orchestration (SPEC section 7) other than waits:
 * authenticated checkpoints and workload_resume, compensation steps and
 * workload_compensate, completion criteria.  Hashing and signing are
 * crypto.c's and keys.c's; SQL is store.c's; states change only through
 * wl_store_transition; compensation workloads are made by the one create
 * path (wl_create_workload).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "authz.h"
#include "clock.h"
#include "compat.h"
#include "create.h"
#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "keys.h"
#include "orchestration.h"
#include "payload.h"
#include "store.h"
#include "waits.h"

/* ---- authenticated checkpoints ---- */

static char *
tag_text(const char *checkpoint_id, const char *workload_id, int sequence, const char *hash)
{
	return psprintf("%s:%s:%d:%s", checkpoint_id, workload_id, sequence, hash);
}

/*
 * wl_orch_checkpoint_tag: the HMAC, under the current server key, of
 * checkpoint_id:workload_id:sequence:state_hash; *key_id names the key.
 */
char *
wl_orch_checkpoint_tag(const char *checkpoint_id, const char *workload_id, int sequence,
					   const char *state_hash, char **key_id)
{
	return wl_keys_mac_current(tag_text(checkpoint_id, workload_id, sequence, state_hash), key_id);
}

#define tampered(...) \
	wl_refuse(WL_E_CHECKPOINT_TAMPERED, errdetail(__VA_ARGS__))

/*
 * verified_checkpoint returns the latest checkpoint of a locked row (with
 * its state) or NULL when it has none, after checking it is the one the
 * row counts, has its own id, its state hashes to state_hash and its tag
 * verifies under a key that is not retired.  Anything else is
 * WORKLOAD_CHECKPOINT_TAMPERED: nothing is recovered partially.
 */
static Jsonb *
verified_checkpoint(const WlRow *row)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;
	int			seq;
	char	   *id;
	char	   *hash;
	const char *why;

	args[0] = CStringGetTextDatum(row->workload_id);
	t = wl_store_run(P_CHECKPOINT_LAST, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
	{
		if (row->checkpoint_sequence > 0)
			tampered("Checkpoint %d of workload \"%s\" is missing.",
					 row->checkpoint_sequence, row->workload_id);
		return NULL;
	}
	seq = (int) wl_store_int(t, 0, 1);
	id = wl_store_text(t, 0, 2);
	hash = wl_store_text(t, 0, 4);
	if (seq != row->checkpoint_sequence)
		tampered("The latest checkpoint of workload \"%s\" is number %d; the workload recorded %d.",
				 row->workload_id, seq, row->checkpoint_sequence);
	if (strcmp(id, wl_checkpoint_id(row->workload_id, seq)) != 0)
		tampered("Checkpoint %d of workload \"%s\" carries another checkpoint's id.",
				 seq, row->workload_id);
	if (!wl_hex_equal(wl_jsonb_hash(DatumGetJsonbP(wl_store_datum(t, 0, 3, &isnull))), hash))
		tampered("The state of checkpoint \"%s\" does not match its state_hash.", id);
	if (!wl_keys_mac_check(wl_store_text(t, 0, 5), tag_text(id, row->workload_id, seq, hash),
						   wl_store_text(t, 0, 6), &why))
		tampered("The tag of checkpoint \"%s\" does not verify: %s.", id, why);
	return DatumGetJsonbP(wl_store_datum(t, 0, 7, &isnull));
}

static const char *const snapshot_fields[] = {
	"proposal_digest", "manifest_digest", "registry_digest", "policy_digest",
	"authorization_digest", NULL
};

/*
 * check_snapshots raises WORKLOAD_SNAPSHOT_MISMATCH unless expected equals
 * the workload's governing snapshots: both absent, or equal as jsonb.
 */
static void
check_snapshots(const char *workload_id, Jsonb *governing, Jsonb *expected)
{
	if (governing == NULL && expected == NULL)
		return;
	if (governing == NULL)
		wl_refuse(WL_E_SNAPSHOT_MISMATCH,
				  errdetail("Workload \"%s\" has no governing snapshots; expected_snapshots must be NULL.",
							workload_id));
	if (expected == NULL)
		wl_refuse(WL_E_SNAPSHOT_MISMATCH,
				  errdetail("Workload \"%s\" is governed by snapshots; expected_snapshots is NULL.",
							workload_id));
	if (DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(governing),
										 JsonbPGetDatum(expected))))
		return;
	for (int i = 0; snapshot_fields[i]; i++)
	{
		char	   *want = wl_json_get_text(&governing->root, snapshot_fields[i]);
		char	   *got = JB_ROOT_IS_OBJECT(expected) ?
			wl_json_get_text(&expected->root, snapshot_fields[i]) : NULL;

		if (got == NULL || strcmp(want, got) != 0)
			wl_refuse(WL_E_SNAPSHOT_MISMATCH,
					  errdetail("expected_snapshots.%s does not match the governing snapshots of workload \"%s\".",
								snapshot_fields[i], workload_id));
	}
	wl_refuse(WL_E_SNAPSHOT_MISMATCH,
			  errdetail("expected_snapshots has fields the governing snapshots of workload \"%s\" do not.",
						workload_id));
}

/* orch_spec runs P_ORCH_SPEC for a workload (columns: see store.c). */
static SPITupleTable *
orch_spec(const char *workload_id)
{
	Datum		args[1];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_ORCH_SPEC, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "workload \"%s\" has no spec", workload_id);
	return t;
}

static Jsonb *
spec_jsonb(SPITupleTable *t, int col)
{
	bool		isnull;
	Datum		d = wl_store_datum(t, 0, col, &isnull);

	return isnull ? NULL : DatumGetJsonbP(d);
}

/*
 * workload_resume(workload_id, claim_id, worker_id, fencing_token,
 * expected_snapshots) -> {workload_id, attempt, fencing_token, checkpoint,
 * wake}: what the run holding the claim resumes from.  checkpoint is the
 * latest, verified (WORKLOAD_CHECKPOINT_TAMPERED), with its state; wake is
 * how the latest finished wait ended (signal payload, approval decision,
 * schedule, expiry), or null.  A workload with governing_snapshots answers
 * only when expected_snapshots equals them (WORKLOAD_SNAPSHOT_MISMATCH).
 * Writes nothing.
 */
PG_FUNCTION_INFO_V1(workload_resume);
Datum
workload_resume(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	Jsonb	   *expected = PG_ARGISNULL(4) ? NULL : PG_GETARG_JSONB_P(4);
	Jsonb	   *checkpoint;
	WlJson		b;
	Jsonb	   *answer;

	wl_fence_from_args(fcinfo, 0, &fence);
	SPI_connect();
	wl_fence_lock(&fence, &row);
	check_snapshots(row.workload_id, spec_jsonb(orch_spec(row.workload_id), 1), expected);
	checkpoint = verified_checkpoint(&row);
	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row.workload_id);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_jsonb(&b, "checkpoint", checkpoint);
	wl_json_jsonb(&b, "wake", wl_wait_last(row.workload_id));
	answer = wl_store_transfer(wl_json_end(&b));
	SPI_finish();
	PG_RETURN_JSONB_P(answer);
}

/* ---- compensation (sagas) ---- */

/* covered: whether the run authority's capabilities include capability. */
static bool
covered(Jsonb *authority, const char *capability)
{
	ArrayType  *caps = wl_json_get_strings(wl_json_get_object(&authority->root, "grant"),
										   "capabilities");

	return caps != NULL && (wl_payload_array_contains(caps, capability) ||
							wl_payload_array_contains(caps, "*"));
}

static void
require_covered(const char *workload_id, Jsonb *authority, const char *capability)
{
	if (!covered(authority, capability))
		wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
				  errdetail("The run authority of workload \"%s\" does not cover capability \"%s\".",
							workload_id, capability),
				  errhint("A compensation's capability must be in the workload's capability_snapshot and its grant."));
}

/*
 * workload_add_compensation(workload_id, claim_id, worker_id, fencing_token,
 * capability_id, input) -> the step: an undo step, bound to the digest of
 * the workload's authorization snapshot, for workload_compensate to run.
 * Refuses a capability the run authority does not cover
 * (WORKLOAD_COMPENSATION_UNAUTHORIZED), a workload already compensated
 * (WORKLOAD_TRANSITION_DENIED), secrets in input, and the fence codes.
 */
PG_FUNCTION_INFO_V1(workload_add_compensation);
Datum
workload_add_compensation(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	char	   *capability;
	Jsonb	   *input;
	SPITupleTable *spec;
	SPITupleTable *steps;
	uint64		n;
	Datum		a[9];
	SPITupleTable *t;
	bool		isnull;
	Jsonb	   *doc;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4) || PG_ARGISNULL(5))
		wl_refuse(WL_E_INVALID, errdetail("capability_id and input must not be NULL."));
	capability = wl_payload_id_arg(PG_GETARG_TEXT_PP(4), "capability_id");
	input = PG_GETARG_JSONB_P(5);
	wl_payload_check(input, "compensation input", WL_MAX_PAYLOAD_BYTES);

	SPI_connect();
	wl_fence_lock(&fence, &row);
	spec = orch_spec(row.workload_id);
	require_covered(row.workload_id, spec_jsonb(spec, 3), capability);
	a[0] = CStringGetTextDatum(row.workload_id);
	steps = wl_store_run(P_COMP_LIST, a, NULL, 0, SPI_OK_SELECT);
	n = SPI_processed;
	if (n > 0 && wl_store_text(steps, 0, 5) != NULL)
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" has already been compensated.", row.workload_id));
	if (n >= WL_MAX_ARRAY_ITEMS)
		wl_refuse(WL_E_INVALID, errdetail("Workload \"%s\" has %d compensation steps; the limit is %d.",
										  row.workload_id, (int) n, WL_MAX_ARRAY_ITEMS));
	a[1] = Int32GetDatum((int32) n + 1);
	a[2] = CStringGetTextDatum(capability);
	a[3] = JsonbPGetDatum(input);
	a[4] = CStringGetTextDatum(wl_jsonb_hash(input));
	a[5] = CStringGetTextDatum(wl_jsonb_hash(spec_jsonb(spec, 2)));
	a[6] = Int32GetDatum(row.attempt_count);
	a[7] = Int64GetDatum(row.fencing_token);
	a[8] = TimestampTzGetDatum(wl_now());
	t = wl_store_run(P_COMP_PUT, a, NULL, 0, SPI_OK_INSERT_RETURNING);
	doc = wl_store_transfer(DatumGetJsonbP(wl_store_datum(t, 0, 1, &isnull)));
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
}

/* One step as P_COMP_LIST reads it. */
typedef struct WlStep
{
	int			step;
	char	   *capability;
	Jsonb	   *input;
	char	   *digest;
	char	   *compensation_id;
} WlStep;

/*
 * compensation_spec: the spec of the workload that undoes one step: same
 * tenant, application and environment, requested by the original workload
 * under its run authority, the step's capability as definition and only
 * capability, and (when given) a dependency on the compensation that must
 * succeed first.
 */
static Jsonb *
compensation_spec(const WlRow *row, SPITupleTable *spec, const WlStep *s, const char *after)
{
	WlJson		b;
	WlJson		who;
	JsonbParseState *st = NULL;
	JsonbValue	v;
	Datum		cap = CStringGetTextDatum(s->capability);

	wl_json_begin(&who);
	wl_json_str(&who, "kind", "workload");
	wl_json_str(&who, "id", row->workload_id);
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	if (after)
	{
		WlJson		d;

		wl_json_begin(&d);
		wl_json_str(&d, "workload_id", after);
		wl_json_str(&d, "required_state", "SUCCEEDED");
		v.type = jbvBinary;
		v.val.binary.data = &wl_json_end(&d)->root;
		pushJsonbValue(&st, WJB_ELEM, &v);
	}
	wl_json_begin(&b);
	wl_json_str(&b, "tenant_id", row->tenant_id);
	wl_json_str(&b, "application_id", row->application_id);
	wl_json_str(&b, "environment", wl_store_text(spec, 0, 4));
	wl_json_str(&b, "definition_id", s->capability);
	wl_json_str(&b, "definition_revision", "compensation");
	wl_json_str(&b, "trigger", "compensation");
	wl_json_jsonb(&b, "input", s->input);
	wl_json_jsonb(&b, "requested_by", wl_json_end(&who));
	wl_json_jsonb(&b, "authorization_snapshot", spec_jsonb(spec, 3));
	wl_json_strs(&b, "capability_snapshot",
				 construct_array(&cap, 1, TEXTOID, -1, false, TYPALIGN_INT));
	wl_json_int(&b, "priority", wl_store_int(spec, 0, 6));
	wl_json_str(&b, "idempotency_key",
				psprintf("compensation:%s:%d", row->workload_id, s->step));
	wl_json_jsonb(&b, "dependencies", JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_ARRAY, NULL)));
	return wl_json_end(&b);
}

/*
 * load_steps reads the steps of a workload in registration order and
 * refuses (WORKLOAD_COMPENSATION_UNAUTHORIZED) if any is not bound to
 * digest, before anything is created.
 */
static WlStep *
load_steps(const char *workload_id, const char *digest, int *n)
{
	Datum		a[1];
	SPITupleTable *t;
	bool		isnull;
	WlStep	   *steps;

	a[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_COMP_LIST, a, NULL, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	steps = palloc0(sizeof(WlStep) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		steps[i].step = (int) wl_store_int(t, i, 1);
		steps[i].capability = wl_store_text(t, i, 2);
		steps[i].input = DatumGetJsonbP(wl_store_datum(t, i, 3, &isnull));
		steps[i].digest = wl_store_text(t, i, 4);
		steps[i].compensation_id = wl_store_text(t, i, 5);
		if (!wl_hex_equal(steps[i].digest, digest))
			wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
					  errdetail("Compensation step %d of workload \"%s\" is not bound to its authorization.",
								steps[i].step, workload_id));
	}
	return steps;
}

static void
emit(ReturnSetInfo *rsinfo, const char *id)
{
	Datum		values[1];
	bool		nulls[1] = {false};

	values[0] = CStringGetTextDatum(id);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * workload_compensate(workload_id, actor) -> the compensation workload ids,
 * in the order they run: one per step, the last registered first, each
 * depending on the success of the one before.  Only FAILED, DEAD_LETTER and
 * CANCELLED workloads (else WORKLOAD_TRANSITION_DENIED); every step must be
 * bound to the workload's authorization digest and covered by its run
 * authority, which must still hold (else WORKLOAD_COMPENSATION_UNAUTHORIZED,
 * and nothing is created).  Again: creates nothing, returns the same ids.
 */
PG_FUNCTION_INFO_V1(workload_compensate);
Datum
workload_compensate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *id;
	char	   *actor;
	WlRow		row;
	SPITupleTable *spec;
	Jsonb	   *authority;
	WlStep	   *steps;
	int			n;
	const char *why;
	char	   *after = NULL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		wl_refuse(WL_E_INVALID, errdetail("workload_id and actor must not be NULL."));
	id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "workload_id");
	actor = wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "actor");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	SPI_connect();
	if (!wl_store_lock(id, &row))
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	if (row.state != WL_FAILED && row.state != WL_DEAD_LETTER && row.state != WL_CANCELLED)
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" is %s; only FAILED, DEAD_LETTER and CANCELLED workloads are compensated.",
							id, wl_state_name(row.state)));
	spec = orch_spec(id);
	authority = spec_jsonb(spec, 3);
	steps = load_steps(id, wl_jsonb_hash(spec_jsonb(spec, 2)), &n);
	if (n > 0 && steps[n - 1].compensation_id == NULL)
	{
		if (!wl_authz_verify(authority, &why))
			wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
					  errdetail("The run authority of workload \"%s\" no longer holds: %s.", id, why));
		for (int i = 0; i < n; i++)
			require_covered(id, authority, steps[i].capability);
	}
	for (int i = n - 1; i >= 0; i--)
	{
		if (steps[i].compensation_id == NULL)
		{
			WlSpec		cs;
			Datum		a[5];

			wl_payload_parse_spec(compensation_spec(&row, spec, &steps[i], after), &cs);
			steps[i].compensation_id =
				wl_json_get_text(&wl_create_workload(&cs)->root, "workload_id");
			a[0] = CStringGetTextDatum(id);
			a[1] = Int32GetDatum(steps[i].step);
			a[2] = CStringGetTextDatum(steps[i].compensation_id);
			a[3] = TimestampTzGetDatum(wl_now());
			a[4] = CStringGetTextDatum(actor);
			wl_store_run(P_COMP_BIND, a, NULL, 0, SPI_OK_UPDATE);
		}
		emit(rsinfo, steps[i].compensation_id);
		after = steps[i].compensation_id;
	}
	SPI_finish();
	return (Datum) 0;
}

/* ---- completion criteria ---- */

static bool
jsonb_values_equal(JsonbValue *a, JsonbValue *b)
{
	return DatumGetBool(DirectFunctionCall2(jsonb_eq,
											JsonbPGetDatum(JsonbValueToJsonb(a)),
											JsonbPGetDatum(JsonbValueToJsonb(b))));
}

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
		if (v && jsonb_values_equal(v, want))
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
 * wl_orch_criteria_unmet: NULL when output satisfies every completion
 * criterion of the workload, else the first reason it does not.
 */
char *
wl_orch_criteria_unmet(const char *workload_id, Jsonb *output)
{
	Jsonb	   *criteria = spec_jsonb(orch_spec(workload_id), 5);
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;

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
 * wl_orch_criteria_fail ends the locked row's attempt as failed with kind
 * COMPLETION_CRITERIA_UNMET: FAILED, then DEAD_LETTER (permanent, whatever
 * retry_on says); no result is stored.  Returns the answer
 * workload_complete gives instead of a result.
 */
Jsonb *
wl_orch_criteria_fail(WlRow *row, const char *worker_id, const char *result_id,
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
	wl_store_transition(row, WL_FAILED, worker_id, row->last_failure);
	wl_store_attempt_close(row, "FAILED", "COMPLETION_CRITERIA_UNMET", reason);
	wl_json_begin(&b);
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_str(&b, "cause", "completion_criteria_unmet");
	wl_store_transition(row, WL_DEAD_LETTER, "workload.retry", wl_json_end(&b));

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row->workload_id);
	wl_json_str(&b, "result_id", result_id);
	wl_json_str(&b, "outcome", "completion_criteria_unmet");
	wl_json_str(&b, "code", "COMPLETION_CRITERIA_UNMET");
	wl_json_str(&b, "reason", reason);
	wl_json_str(&b, "state", wl_state_name(row->state));
	return wl_json_end(&b);
}
