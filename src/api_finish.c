/*
 * api_finish.c: the worker reporting back: workload_checkpoint,
 * workload_complete, workload_fail, workload_confirm_cancel,
 * workload_execution_context.  Every call checks the fence on the locked row
 * before it writes anything.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "authz.h"
#include "clock.h"
#include "compat.h"
#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "orchestration.h"
#include "payload.h"
#include "retry.h"
#include "store.h"

/*
 * workload_checkpoint(workload_id, claim_id, worker_id, fencing_token, state)
 * appends checkpoint n+1 with its state_hash and its authentication tag
 * (workload_resume verifies both); RUNNING or CHECKPOINTED -> CHECKPOINTED.
 */
PG_FUNCTION_INFO_V1(workload_checkpoint);
Datum
workload_checkpoint(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	Jsonb	   *state;
	char	   *hash;
	Jsonb	   *doc;
	WlJson		b;
	char	   *key_id;
	char	   *tag;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4))
		wl_refuse(WL_E_INVALID, errdetail("state must not be NULL."));
	state = PG_GETARG_JSONB_P(4);
	wl_payload_check(state, "checkpoint state", WL_MAX_PAYLOAD_BYTES);
	hash = wl_jsonb_hash(state);

	SPI_connect();
	wl_fence_lock(&fence, &row);
	row.checkpoint_sequence++;
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "sequence", row.checkpoint_sequence);
	wl_json_str(&b, "state_hash", hash);
	wl_store_transition(&row, WL_CHECKPOINTED, fence.worker_id, wl_json_end(&b));
	tag = wl_orch_checkpoint_tag(wl_checkpoint_id(row.workload_id, row.checkpoint_sequence),
								 row.workload_id, row.checkpoint_sequence, hash, &key_id);
	doc = wl_store_transfer(wl_store_checkpoint_put(&row, state, hash, key_id, tag));
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
}

static bool
same_fence(const WlFence *a, const WlFence *b)
{
	return strcmp(a->claim_id, b->claim_id) == 0 &&
		strcmp(a->worker_id, b->worker_id) == 0 &&
		a->fencing_token == b->fencing_token;
}

/* One completion request, as workload_complete and workload_complete_many take it. */
typedef struct WlCompletion
{
	WlFence		fence;
	char	   *result_id;
	Jsonb	   *output;
	ArrayType  *artifacts;
	int			schema_version;
} WlCompletion;

/*
 * complete_decide is the verdict on one completion of a locked row, given
 * what the result id already names (stored: the result's workload in owner
 * and its provenance in prov).  Returns the refusal with *detail, or
 * WL_E_COUNT: then *replay says whether the stored result is the answer (the
 * same result_id again from the same claim) or the completion is to be
 * written.  The same result_id from another claim is WL_E_STALE_FENCE; a
 * result_id of another workload is WL_E_RESULT_DUPLICATE.  Cancellation
 * wins: a workload in CANCELLATION_REQUESTED refuses with
 * WL_E_TRANSITION_DENIED.
 */
static WlErr
complete_decide(const WlRow *row, const WlCompletion *c, bool stored, const char *owner,
				const WlFence *prov, char **detail, bool *replay)
{
	WlErr		err;

	*replay = false;
	if (stored)
	{
		if (strcmp(owner, row->workload_id) != 0)
		{
			*detail = psprintf("Result \"%s\" belongs to another workload.", c->result_id);
			return WL_E_RESULT_DUPLICATE;
		}
		if (!same_fence(prov, &c->fence))
		{
			*detail = psprintf("Result \"%s\" was stored by another claim.", c->result_id);
			return WL_E_STALE_FENCE;
		}
		*replay = true;
		return WL_E_COUNT;
	}
	if ((err = wl_fence_verdict(row, &c->fence, detail)) != WL_E_COUNT)
		return err;
	if (!wl_state_allowed(row->state, WL_SUCCEEDED))
	{
		*detail = psprintf("Workload \"%s\" cannot move from %s to SUCCEEDED.",
						   row->workload_id, wl_state_name(row->state));
		return WL_E_TRANSITION_DENIED;
	}
	return wl_payload_verdict(c->output, "output", WL_MAX_PAYLOAD_BYTES, detail);
}

/* complete_evidence: the completion event's evidence (before the claim is released). */
static Jsonb *
complete_evidence(const WlRow *row, const WlCompletion *c)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_str(&b, "result_id", c->result_id);
	return wl_json_end(&b);
}

/*
 * complete_one decides and applies one completion without raising for a
 * refusal: returns WL_E_COUNT and the result in *doc, or the refusal and
 * *detail (see complete_decide).  An output that does not meet the
 * workload's completion criteria is not a refusal: the attempt fails for
 * good (wl_orch_criteria_fail), *unmet is set and *doc says why.  Takes the
 * row lock; on a refusal nothing has been written.
 */
static WlErr
complete_one(const WlCompletion *c, Jsonb **doc, char **detail, bool *unmet)
{
	WlRow		row;
	WlFence		prov;
	char	   *owner = NULL;
	WlErr		err;
	Jsonb	   *evidence;
	char	   *reason;
	bool		stored;
	bool		replay;

	*unmet = false;
	if (!wl_store_lock(c->fence.workload_id, &row))
	{
		*detail = psprintf("No workload \"%s\".", c->fence.workload_id);
		return WL_E_NOT_FOUND;
	}
	stored = wl_store_result_find(c->result_id, &owner, &prov, doc);
	if ((err = complete_decide(&row, c, stored, owner, &prov, detail, &replay)) != WL_E_COUNT ||
		replay)
		return err;
	if (row.has_criteria &&
		(reason = wl_orch_criteria_unmet(row.workload_id, c->output)) != NULL)
	{
		*unmet = true;
		*doc = wl_orch_criteria_fail(&row, c->fence.worker_id, c->result_id, reason);
		return WL_E_COUNT;
	}

	evidence = complete_evidence(&row, c);
	wl_fence_release(&row);
	wl_store_transition(&row, WL_SUCCEEDED, c->fence.worker_id, evidence);
	wl_store_attempt_close(&row, "SUCCEEDED", NULL, NULL);
	*doc = wl_store_result_put(&row, &c->fence, c->result_id, c->output,
							   c->artifacts, c->schema_version);
	if (*doc == NULL)			/* lost a race for the result id after writing: abort it all */
		wl_refuse(WL_E_RESULT_DUPLICATE,
				  errdetail("Result \"%s\" was just stored for another workload.", c->result_id));
	return WL_E_COUNT;
}

/*
 * workload_complete(workload_id, claim_id, worker_id, fencing_token,
 * result_id, output, artifacts, schema_version): stores the result and
 * moves to SUCCEEDED (see complete_one for the refusals).
 */
PG_FUNCTION_INFO_V1(workload_complete);
Datum
workload_complete(PG_FUNCTION_ARGS)
{
	WlCompletion c;
	Jsonb	   *doc;
	char	   *detail;
	WlErr		err;
	bool		unmet;

	wl_fence_from_args(fcinfo, 0, &c.fence);
	if (PG_ARGISNULL(4) || PG_ARGISNULL(5) || PG_ARGISNULL(6) || PG_ARGISNULL(7))
		wl_refuse(WL_E_INVALID,
				  errdetail("result_id, output, artifacts and schema_version must not be NULL."));
	c.result_id = wl_payload_id_arg(PG_GETARG_TEXT_PP(4), "result_id");
	c.output = PG_GETARG_JSONB_P(5);
	c.artifacts = wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(6), "artifacts");
	c.schema_version = PG_GETARG_INT32(7);
	if (c.schema_version < 1)
		wl_refuse(WL_E_INVALID, errdetail("schema_version must be 1 or more."));

	SPI_connect();
	err = complete_one(&c, &doc, &detail, &unmet);
	if (err != WL_E_COUNT)
		wl_refuse(err, errdetail_internal("%s", detail));
	doc = wl_store_transfer(doc);
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
}

static const char *const item_fields[] = {
	"workload_id", "claim_id", "fencing_token", "result_id", "output",
	"artifacts", "schema_version", NULL
};

/*
 * parse_item reads one workload_complete_many item into c; a malformed item
 * is WL_E_INVALID with *detail (the batch goes on without it).
 */
static WlErr
parse_item(JsonbValue *item, const char *worker_id, WlCompletion *c, char **detail)
{
	JsonbContainer *o;
	JsonbValue *v;
	int64		n;

	memset(c, 0, sizeof(*c));
	c->fence.worker_id = (char *) worker_id;
	c->schema_version = 1;
	if (item->type != jbvBinary || !JsonContainerIsObject(item->val.binary.data))
		return (*detail = "Each item must be an object.", WL_E_INVALID);
	o = item->val.binary.data;
	/* read the id first, so even a refused item says which workload it was */
	c->fence.workload_id = wl_json_get_text(o, "workload_id");
	if (!wl_json_keys_within(o, item_fields, detail))
		return WL_E_INVALID;
	c->fence.claim_id = wl_json_get_text(o, "claim_id");
	c->result_id = wl_json_get_text(o, "result_id");
	if (!c->fence.workload_id || !c->fence.claim_id || !c->result_id ||
		!c->fence.workload_id[0] || !c->fence.claim_id[0] || !c->result_id[0] ||
		strlen(c->result_id) > WL_MAX_ID_LEN)
		return (*detail = "workload_id, claim_id and result_id must be non-blank strings.", WL_E_INVALID);
	if (!wl_json_get_int(o, "fencing_token", &c->fence.fencing_token))
		return (*detail = "fencing_token must be an integer.", WL_E_INVALID);
	if ((v = wl_json_get(o, "output")) == NULL)
		return (*detail = "output is required.", WL_E_INVALID);
	c->output = JsonbValueToJsonb(v);
	if (wl_json_get(o, "artifacts") != NULL)
	{
		c->artifacts = wl_json_get_strings(o, "artifacts");
		if (c->artifacts == NULL)
			return (*detail = "artifacts must be an array of strings.", WL_E_INVALID);
	}
	else
		c->artifacts = construct_empty_array(TEXTOID);
	if (wl_json_get(o, "schema_version") != NULL)
	{
		if (!wl_json_get_int(o, "schema_version", &n) || n < 1 || n > INT_MAX)
			return (*detail = "schema_version must be an integer of 1 or more.", WL_E_INVALID);
		c->schema_version = (int) n;
	}
	return WL_E_COUNT;
}

typedef struct WlBatchItem
{
	WlCompletion c;
	WlErr		err;
	char	   *detail;
} WlBatchItem;

static int
item_cmp(const void *a, const void *b)
{
	const WlBatchItem *x = a;
	const WlBatchItem *y = b;

	/* malformed items (no id) first; then by id, so batches lock rows in one order */
	if (x->c.fence.workload_id == NULL || y->c.fence.workload_id == NULL)
		return (x->c.fence.workload_id != NULL) - (y->c.fence.workload_id != NULL);
	return strcmp(x->c.fence.workload_id, y->c.fence.workload_id);
}

/* by_result orders item pointers by result_id, to find a result id named twice */
static int
by_result(const void *a, const void *b)
{
	return strcmp((*(WlBatchItem *const *) a)->c.result_id,
				  (*(WlBatchItem *const *) b)->c.result_id);
}

/*
 * batch_is_plain: whether the items that parsed name each workload and each
 * result id once (items are sorted by workload_id).  Only then are they
 * decided together; otherwise one after another, where the second naming
 * sees what the first wrote.
 */
static bool
batch_is_plain(WlBatchItem *batch, int n)
{
	WlBatchItem **v = palloc(sizeof(WlBatchItem *) * (n + 1));
	int			m = 0;

	for (int i = 0; i < n; i++)
	{
		if (batch[i].err != WL_E_COUNT)
			continue;
		if (m > 0 && strcmp(v[m - 1]->c.fence.workload_id, batch[i].c.fence.workload_id) == 0)
			return false;
		v[m++] = &batch[i];
	}
	qsort(v, m, sizeof(WlBatchItem *), by_result);
	for (int i = 1; i < m; i++)
	{
		if (strcmp(v[i - 1]->c.result_id, v[i]->c.result_id) == 0)
			return false;
	}
	return true;
}

/*
 * complete_together decides and writes the items of a plain batch (see
 * batch_is_plain) with a fixed number of statements, whatever its size: lock
 * every row, look up every result id, decide each item in C with the verdicts
 * complete_one uses, then write the completions together (rows and events,
 * attempts, results).  An item whose workload has completion criteria is
 * left to complete_one, after the others.  docs[i] and unmet[i] answer item i.
 */
static void
complete_together(WlBatchItem *batch, int n, const char *worker_id, Jsonb **docs, bool *unmet)
{
	int		   *ix = palloc(sizeof(int) * (n + 1));
	char	  **ids = palloc(sizeof(char *) * (n + 1));
	char	  **rids = palloc(sizeof(char *) * (n + 1));
	WlRow	   *rows;
	bool	   *found;
	bool	   *stored;
	char	  **owners;
	WlFence    *provs;
	Jsonb	  **stored_docs;
	WlRow	  **g;
	Jsonb	  **evidence;
	int		   *gi;
	char	  **g_claims;
	int64	   *g_tokens;
	char	  **g_rids;
	Jsonb	  **g_outputs;
	ArrayType **g_artifacts;
	int		   *g_versions;
	Jsonb	  **g_docs;
	bool	   *later;
	int			m = 0;
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		if (batch[i].err != WL_E_COUNT)
			continue;
		ix[m] = i;
		ids[m] = batch[i].c.fence.workload_id;
		rids[m] = batch[i].c.result_id;
		m++;
	}
	if (m == 0)
		return;
	rows = palloc0(sizeof(WlRow) * m);
	found = palloc(sizeof(bool) * m);
	stored = palloc(sizeof(bool) * m);
	owners = palloc0(sizeof(char *) * m);
	provs = palloc0(sizeof(WlFence) * m);
	stored_docs = palloc0(sizeof(Jsonb *) * m);
	later = palloc0(sizeof(bool) * m);
	g = palloc(sizeof(WlRow *) * m);
	evidence = palloc(sizeof(Jsonb *) * m);
	gi = palloc(sizeof(int) * m);
	g_claims = palloc(sizeof(char *) * m);
	g_tokens = palloc(sizeof(int64) * m);
	g_rids = palloc(sizeof(char *) * m);
	g_outputs = palloc(sizeof(Jsonb *) * m);
	g_artifacts = palloc(sizeof(ArrayType *) * m);
	g_versions = palloc(sizeof(int) * m);
	g_docs = palloc(sizeof(Jsonb *) * m);

	wl_store_lock_many(ids, m, rows, found);
	wl_store_result_find_many(rids, m, stored, owners, provs, stored_docs);
	for (int j = 0; j < m; j++)
	{
		WlBatchItem *b = &batch[ix[j]];
		bool		replay;

		if (!found[j])
		{
			b->detail = psprintf("No workload \"%s\".", ids[j]);
			b->err = WL_E_NOT_FOUND;
			continue;
		}
		b->err = complete_decide(&rows[j], &b->c, stored[j], owners[j], &provs[j],
								 &b->detail, &replay);
		if (b->err != WL_E_COUNT)
			continue;
		if (replay)
			docs[ix[j]] = stored_docs[j];
		else if (rows[j].has_criteria)
			later[j] = true;
		else
		{
			evidence[k] = complete_evidence(&rows[j], &b->c);
			g_claims[k] = b->c.fence.claim_id;
			g_tokens[k] = b->c.fence.fencing_token;
			g_rids[k] = b->c.result_id;
			g_outputs[k] = b->c.output;
			g_artifacts[k] = b->c.artifacts;
			g_versions[k] = b->c.schema_version;
			wl_fence_release(&rows[j]);
			g[k] = &rows[j];
			gi[k] = ix[j];
			k++;
		}
	}
	if (k > 0)
	{
		wl_store_transition_many(g, k, WL_SUCCEEDED, worker_id, evidence);
		wl_store_attempt_close_many(g, k, "SUCCEEDED");
		if (wl_store_result_put_many(g, k, worker_id, g_claims, g_tokens, g_rids, g_outputs,
									 g_artifacts, g_versions, g_docs) != k)
			wl_refuse(WL_E_RESULT_DUPLICATE,
					  errdetail("A result id of this batch was just stored for another workload."));
		for (int i = 0; i < k; i++)
			docs[gi[i]] = g_docs[i];
	}
	for (int j = 0; j < m; j++)
	{
		WlBatchItem *b = &batch[ix[j]];

		if (later[j])
			b->err = complete_one(&b->c, &docs[ix[j]], &b->detail, &unmet[ix[j]]);
	}
}

/*
 * workload_complete_many(worker_id, items jsonb) -> TABLE(workload_id,
 * outcome, code, result): completes every item in this one transaction.
 * Each is decided on its own: a refused item ("refused", its code) writes
 * nothing and the others still complete.  An item whose output misses the
 * completion criteria is "completion_criteria_unmet" (code NULL, result
 * the reason): its workload is dead-lettered.  Items are taken in
 * workload_id order so two batches never lock rows in opposite orders.
 */
PG_FUNCTION_INFO_V1(workload_complete_many);
Datum
workload_complete_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *worker_id;
	Jsonb	   *items;
	int			n;
	WlBatchItem *batch;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			k = 0;
	Jsonb	  **docs;
	bool	   *unmet;
	bool		plain;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		wl_refuse(WL_E_INVALID, errdetail("worker_id and items must not be NULL."));
	worker_id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "worker_id");
	items = PG_GETARG_JSONB_P(1);
	n = wl_payload_batch_count(items);

	batch = palloc0(sizeof(WlBatchItem) * (n + 1));
	it = JsonbIteratorInit(&items->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		batch[k].err = parse_item(&v, worker_id, &batch[k].c, &batch[k].detail);
		k++;
	}
	qsort(batch, n, sizeof(WlBatchItem), item_cmp);

	docs = palloc0(sizeof(Jsonb *) * (n + 1));
	unmet = palloc0(sizeof(bool) * (n + 1));
	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	plain = batch_is_plain(batch, n);
	if (plain)
		complete_together(batch, n, worker_id, docs, unmet);
	for (int i = 0; i < n; i++)
	{
		WlBatchItem *b = &batch[i];
		Jsonb	   *doc = docs[i];

		if (!plain && b->err == WL_E_COUNT)
			b->err = complete_one(&b->c, &doc, &b->detail, &unmet[i]);
		wl_report_item(rsinfo, b->c.fence.workload_id,
					   unmet[i] ? "completion_criteria_unmet" : "succeeded", b->err,
					   JsonbPGetDatum(doc));
	}
	SPI_finish();
	return (Datum) 0;
}

/*
 * workload_fail(workload_id, claim_id, worker_id, fencing_token, kind, error)
 * -> the state it ends in: FAILED, then READY with backoff if kind is in
 * retry_on and attempts remain, else DEAD_LETTER.
 */
PG_FUNCTION_INFO_V1(workload_fail);
Datum
workload_fail(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	char	   *kind;
	char	   *error;
	WlJson		b;
	WlState		end;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4) || PG_ARGISNULL(5))
		wl_refuse(WL_E_INVALID, errdetail("kind and error must not be NULL."));
	kind = wl_payload_id_arg(PG_GETARG_TEXT_PP(4), "kind");
	error = text_to_cstring(PG_GETARG_TEXT_PP(5));
	wl_payload_check_text(error, "error", WL_MAX_ERROR_LEN);

	SPI_connect();
	wl_fence_lock(&fence, &row);
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "kind", kind);
	wl_json_str(&b, "error", error);
	wl_json_ts(&b, "at", wl_now());
	row.last_failure = wl_json_end(&b);
	row.failure_changed = true;
	wl_fence_release(&row);
	wl_store_transition(&row, WL_FAILED, fence.worker_id, row.last_failure);
	wl_store_attempt_close(&row, "FAILED", kind, error);
	end = wl_retry_or_dead_letter(&row, kind, "workload.retry");
	SPI_finish();
	PG_RETURN_DATUM(wl_store_state_datum(end));
}

/* workload_confirm_cancel(...): CANCELLATION_REQUESTED -> CANCELLED, by the claim holder. */
PG_FUNCTION_INFO_V1(workload_confirm_cancel);
Datum
workload_confirm_cancel(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	Jsonb	   *evidence;

	wl_fence_from_args(fcinfo, 0, &fence);
	SPI_connect();
	wl_fence_lock(&fence, &row);
	evidence = wl_fence_evidence(&row, "cancellation_confirmed");
	wl_fence_release(&row);
	wl_store_transition(&row, WL_CANCELLED, fence.worker_id, evidence);
	wl_store_attempt_close(&row, "CANCELLED", NULL, NULL);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * workload_execution_context(..., secret_references): what the current run
 * may use.  Each reference must be a secret:// URI (WORKLOAD_SECRET_REJECTED);
 * a grant that is no longer active or valid is AUTHORIZATION_DENIED.
 */
PG_FUNCTION_INFO_V1(workload_execution_context);
Datum
workload_execution_context(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	ArrayType  *refs;
	int			n;
	char	  **items;
	SPITupleTable *t;
	Datum		args[1];
	bool		isnull;
	Jsonb	   *snapshot;
	ArrayType  *granted;
	const char *why;
	WlJson		b;
	Jsonb	   *answer;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4))
		wl_refuse(WL_E_INVALID, errdetail("secret_references must not be NULL."));
	refs = wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(4), "secret_references");
	items = wl_payload_array_items(refs, &n);
	for (int i = 0; i < n; i++)
	{
		if (strncmp(items[i], "secret://", 9) != 0 || items[i][9] == '\0')
			wl_refuse(WL_E_SECRET_REJECTED,
					  errdetail("secret_references[%d] is not a secret:// reference.", i + 1));
	}

	SPI_connect();
	wl_fence_lock(&fence, &row);
	args[0] = CStringGetTextDatum(row.workload_id);
	t = wl_store_run(P_CONTEXT, args, NULL, 1, SPI_OK_SELECT);
	snapshot = DatumGetJsonbP(wl_store_datum(t, 0, 1, &isnull));
	if (!wl_authz_verify(snapshot, &why))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("The authorization snapshot does not hold: %s.", why));
	wl_authz_check_run_authority(DatumGetJsonbP(wl_store_datum(t, 0, 6, &isnull)),
								 row.workload_id, row.tenant_id, row.application_id);
	granted = wl_json_get_strings(wl_json_get_object(&snapshot->root, "grant"), "capabilities");

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row.workload_id);
	wl_json_str(&b, "tenant_id", row.tenant_id);
	wl_json_str(&b, "application_id", row.application_id);
	wl_json_str(&b, "definition_id", wl_store_text(t, 0, 3));
	wl_json_str(&b, "definition_revision", wl_store_text(t, 0, 4));
	wl_json_str(&b, "environment", wl_store_text(t, 0, 5));
	wl_json_str(&b, "attempt_id", wl_attempt_id(row.workload_id, row.attempt_count));
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_str(&b, "claim_id", row.claim_id);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_ts(&b, "lease_expires_at", row.lease_expires_at);
	wl_json_strs(&b, "capabilities", wl_authz_effective_scopes(granted, row.capability_snapshot));
	wl_json_strs(&b, "connection_scopes", DatumGetArrayTypeP(wl_store_datum(t, 0, 2, &isnull)));
	wl_json_strs(&b, "secret_references", refs);
	answer = wl_store_transfer(wl_json_end(&b));
	SPI_finish();
	PG_RETURN_JSONB_P(answer);
}
