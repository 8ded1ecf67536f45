/*
 * store_parts.c: typed wrappers over the statements on what hangs off a
 * workload: its spec (policy, authority, context), attempts, results,
 * checkpoints, waits and compensation steps.  Layer 2.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/json.h"

#include "catalog.h"
#include "clock.h"
#include "crypto.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_ops.h"

/* wl_store_policy reads the retry policy of a workload. */
void
wl_store_policy(const WlRow *row, WlPolicy *p)
{
	Datum		args[2];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(row->tenant_id);
	args[1] = Int64GetDatum(row->seq);
	t = wl_store_run(P_POLICY, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "workload \"%s\" has no spec", row->workload_id);
	p->max_attempts = (int) wl_store_int(t, 0, 1);
	p->initial_delay_ms = wl_store_int(t, 0, 2);
	p->max_delay_ms = wl_store_int(t, 0, 3);
	p->exponential = strcmp(wl_store_text(t, 0, 4), "exponential") == 0;
	p->retry_on = wl_store_array(t, 0, 5);
	SPI_freetuptable(t);
}

/* wl_store_spec_read reads what the domain needs of a spec after create. */
void
wl_store_spec_read(const WlRow *row, WlSpecRow *out)
{
	Datum		args[2];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(row->tenant_id);
	args[1] = Int64GetDatum(row->seq);
	t = wl_store_run(P_SPEC_READ, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "workload \"%s\" has no spec", row->workload_id);
	out->authorization_snapshot = wl_store_jsonb(t, 0, 1);
	out->run_authority = wl_store_jsonb(t, 0, 2);
	out->connection_scopes = wl_store_array(t, 0, 3);
	out->definition_id = wl_store_text(t, 0, 4);
	out->definition_revision = wl_store_text(t, 0, 5);
	out->environment = wl_store_text(t, 0, 6);
	out->governing_snapshots = wl_store_jsonb(t, 0, 7);
	out->completion_criteria = wl_store_jsonb(t, 0, 8);
	out->priority = row->priority;
	out->created_by = wl_store_text(t, 0, 9);
	out->grant_ids = wl_store_array(t, 0, 10);
	SPI_freetuptable(t);
}

/* wl_store_revoked_among: whether any of the grants ids (a text array) is revoked */
bool
wl_store_revoked_among(ArrayType *ids)
{
	Datum		args[1] = {PointerGetDatum(ids)};
	SPITupleTable *t = wl_store_run(P_REVOKED_AMONG, args, NULL, 1, SPI_OK_SELECT);
	bool		any = wl_store_bool(t, 0, 1);

	SPI_freetuptable(t);
	return any;
}

/* attempt_open: whether the row read held a claim whose attempt is still to be written */
static bool
attempt_open(const WlRow *row)
{
	return row->attempt_claim_id != NULL && !row->attempt_closed;
}

/*
 * wl_store_attempt_close writes the attempt the row's claim held (as read
 * under the lock, before any release), ended now with an outcome; once.  A
 * row read without a claim has no attempt to close.
 */
void
wl_store_attempt_close(WlRow *row, const char *outcome, const char *kind,
					   const char *error)
{
	Datum		a[14];
	char		nulls[14];

	if (!attempt_open(row))
		return;
	memset(nulls, ' ', sizeof(nulls));
	a[0] = CStringGetTextDatum(row->tenant_id);
	a[1] = Int64GetDatum(row->seq);
	a[2] = Int32GetDatum(row->attempt_count);
	a[3] = CStringGetTextDatum(row->workload_id);
	a[4] = CStringGetTextDatum(row->attempt_claim_id);
	a[5] = CStringGetTextDatum(row->attempt_worker_id);
	a[6] = Int64GetDatum(row->fencing_token);
	a[7] = TimestampTzGetDatum(row->claimed_at);
	a[8] = TimestampTzGetDatum(row->attempt_lease);
	a[9] = TimestampTzGetDatum(row->started_at);
	nulls[9] = row->started_at != 0 ? ' ' : 'n';
	a[10] = TimestampTzGetDatum(wl_now());
	a[11] = CStringGetTextDatum(outcome);
	a[12] = kind ? CStringGetTextDatum(kind) : (Datum) 0;
	nulls[12] = kind ? ' ' : 'n';
	a[13] = error ? CStringGetTextDatum(error) : (Datum) 0;
	nulls[13] = error ? ' ' : 'n';
	wl_store_run(P_ATTEMPT_CLOSE, a, nulls, 0, SPI_OK_INSERT);
	row->attempt_closed = true;
}

/* result_read fills a WlStoredResult from row r of P_RESULT_GET(_MANY). */
static void
result_read(SPITupleTable *t, int r, WlStoredResult *out)
{
	out->workload_id = wl_store_text(t, r, 1);
	out->provenance.workload_id = out->workload_id;
	out->provenance.claim_id = wl_store_text(t, r, 2);
	out->provenance.worker_id = wl_store_text(t, r, 3);
	out->provenance.fencing_token = wl_store_int(t, r, 4);
	out->doc = wl_store_jsonb(t, r, 5);
}

/* wl_store_result_find: the result stored under result_id in row's tenant and application, or false. */
bool
wl_store_result_find(const WlRow *row, const char *result_id, WlStoredResult *out)
{
	Datum		args[3];
	SPITupleTable *t;
	bool		found;

	args[0] = CStringGetTextDatum(result_id);
	args[1] = CStringGetTextDatum(row->tenant_id);
	args[2] = CStringGetTextDatum(row->application_id);
	t = wl_store_run(P_RESULT_GET, args, NULL, 1, SPI_OK_SELECT);
	found = SPI_processed > 0;
	if (found)
		result_read(t, 0, out);
	SPI_freetuptable(t);
	return found;
}

/*
 * wl_store_result_find_many is wl_store_result_find for n result ids in one
 * statement, each in the tenant and application of rows[i].
 */
void
wl_store_result_find_many(const WlRow *rows, char **result_ids, int n, bool *found,
						  WlStoredResult *out)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	Datum	   *tn = palloc(sizeof(Datum) * (n + 1));
	Datum	   *ap = palloc(sizeof(Datum) * (n + 1));
	Datum		args[3];
	SPITupleTable *t;

	for (int i = 0; i < n; i++)
	{
		d[i] = CStringGetTextDatum(result_ids[i]);
		tn[i] = CStringGetTextDatum(rows[i].tenant_id);
		ap[i] = CStringGetTextDatum(rows[i].application_id);
		found[i] = false;
	}
	args[0] = PointerGetDatum(wl_array_of(d, NULL, n, TEXTOID));
	args[1] = PointerGetDatum(wl_array_of(tn, NULL, n, TEXTOID));
	args[2] = PointerGetDatum(wl_array_of(ap, NULL, n, TEXTOID));
	t = wl_store_run(P_RESULT_GET_MANY, args, NULL, 0, SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	   *id = wl_store_text(t, r, 6);
		char	   *tenant = wl_store_text(t, r, 7);
		char	   *app = wl_store_text(t, r, 8);

		for (int i = 0; i < n; i++)
		{
			if (!found[i] && strcmp(result_ids[i], id) == 0 &&
				strcmp(rows[i].tenant_id, tenant) == 0 &&
				strcmp(rows[i].application_id, app) == 0)
			{
				found[i] = true;
				result_read(t, r, &out[i]);
			}
		}
	}
	SPI_freetuptable(t);
}

/*
 * wl_store_result_doc: the document of a result stored now (at) from r, the
 * one RESULT_DOC (store_sql.c) reads back from its row, built from the
 * values just written: jsonb_build_object over the row cost about as much
 * as the rest of the completion (it looks up each value's type per call).
 */
Jsonb *
wl_store_result_doc(const WlNewResult *r, const char *output_hash, TimestampTz at)
{
	/*
	 * Written in jsonb's binary form directly, its keys in jsonb's order
	 * (shorter first, then by their bytes), without the builder's tree of
	 * values built first.
	 */
	const WlJv	provenance[4] = {
		{.key = "attempt", .kind = WL_JV_INT, .i = r->row->attempt_count},
		{.key = "claim_id", .kind = WL_JV_STR, .str = r->fence->claim_id},
		{.key = "worker_id", .kind = WL_JV_STR, .str = r->fence->worker_id},
		{.key = "fencing_token", .kind = WL_JV_INT, .i = r->fence->fencing_token},
	};
	const WlJv	doc[9] = {
		{.key = "output", .kind = WL_JV_JSONB, .jsonb = r->output},
		{.key = "outcome", .kind = WL_JV_STR, .str = "succeeded"},
		{.key = "artifacts", .kind = WL_JV_STRS, .strs = r->artifacts},
		{.key = "result_id", .kind = WL_JV_STR, .str = r->result_id},
		{.key = "created_at", .kind = WL_JV_STR,
		.str = JsonEncodeDateTime(NULL, TimestampTzGetDatum(at), TIMESTAMPTZOID, NULL)},
		{.key = "provenance", .kind = WL_JV_OBJECT, .obj = provenance, .nobj = 4},
		{.key = "output_hash", .kind = WL_JV_STR, .str = output_hash},
		{.key = "workload_id", .kind = WL_JV_STR, .str = r->row->workload_id},
		{.key = "schema_version", .kind = WL_JV_INT, .i = r->schema_version},
	};

	return wl_jw_object(doc, 9);
}

/* processed_of: how many rows t, the statement just run, returned (t freed) */
static uint64
processed_of(SPITupleTable *t)
{
	uint64		n = SPI_processed;

	SPI_freetuptable(t);
	return n;
}

/*
 * wl_store_result_put stores the result of the current attempt on the run
 * row of r->row, just saved as SUCCEEDED, and returns its document; when
 * the completion's own update stored it (store_fenced.c: r->row->result_hash),
 * only the document.  A result id taken meanwhile by another workload is
 * WORKLOAD_RESULT_DUPLICATE (wl_store_run_results).
 */
Jsonb *
wl_store_result_put(const WlNewResult *r)
{
	Datum		a[8];
	char	   *hash = r->row->result_hash;
	TimestampTz now = wl_now();

	if (hash == NULL)
	{
		hash = wl_jsonb_hash(r->output);
		a[0] = CStringGetTextDatum(r->row->tenant_id);
		a[1] = Int64GetDatum(r->row->seq);
		a[2] = CStringGetTextDatum(r->row->application_id);
		a[3] = JsonbPGetDatum(r->output);
		a[4] = CStringGetTextDatum(hash);
		a[5] = PointerGetDatum(r->artifacts);
		a[6] = Int32GetDatum(r->schema_version);
		a[7] = CStringGetTextDatum(r->fence->worker_id);
		if (processed_of(wl_store_run_results(P_RESULT_PUT, a, NULL, SPI_OK_UPDATE_RETURNING,
												  r->result_id)) != 1)
			elog(ERROR, "workload \"%s\" vanished while locked", r->row->workload_id);
	}
	return wl_store_result_doc(r, hash, now);
}

/*
 * wl_store_result_put_many is wl_store_result_put for n results of one
 * worker in one statement: docs[i] is the document of r[i].
 */
void
wl_store_result_put_many(const WlNewResult *r, int n, Jsonb **docs)
{
	Datum	   *d[7];
	Datum		a[8];
	static const Oid types[7] = {TEXTOID, INT8OID, TEXTOID, JSONBOID, TEXTOID, JSONOID, INT4OID};
	char	  **hash = palloc(sizeof(char *) * (n + 1));
	TimestampTz now = wl_now();

	for (int c = 0; c < 7; c++)
		d[c] = palloc(sizeof(Datum) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		d[0][i] = CStringGetTextDatum(r[i].row->tenant_id);
		d[1][i] = Int64GetDatum(r[i].row->seq);
		d[2][i] = CStringGetTextDatum(r[i].row->application_id);
		d[3][i] = JsonbPGetDatum(r[i].output);
		hash[i] = wl_jsonb_hash(r[i].output);
		d[4][i] = CStringGetTextDatum(hash[i]);
		d[5][i] = DirectFunctionCall1(array_to_json, PointerGetDatum(r[i].artifacts));
		d[6][i] = Int32GetDatum(r[i].schema_version);
	}
	for (int c = 0; c < 7; c++)
		a[c] = PointerGetDatum(wl_array_of(d[c], NULL, n, types[c]));
	a[7] = CStringGetTextDatum(r[0].fence->worker_id);
	if (processed_of(wl_store_run_results(P_RESULT_PUT_MANY, a, NULL, SPI_OK_UPDATE_RETURNING,
											  NULL)) != (uint64) n)
		elog(ERROR, "workloads vanished while locked");
	for (int i = 0; i < n; i++)
		docs[i] = wl_store_result_doc(&r[i], hash[i], now);
}

/*
 * wl_store_checkpoint_put appends checkpoint row->checkpoint_sequence with
 * its state hash and its authentication tag under key key_id; returns its
 * document (without the state).
 */
Jsonb *
wl_store_checkpoint_put(const WlRow *row, const char *checkpoint_id, Jsonb *state,
						const char *state_hash, const char *key_id, const char *tag)
{
	Datum		a[12];
	SPITupleTable *t;
	Jsonb	   *doc;

	a[0] = CStringGetTextDatum(row->workload_id);
	a[1] = Int32GetDatum(row->checkpoint_sequence);
	a[10] = CStringGetTextDatum(row->tenant_id);
	a[11] = Int64GetDatum(row->seq);
	a[2] = CStringGetTextDatum(checkpoint_id);
	a[3] = Int32GetDatum(row->attempt_count);
	a[4] = Int64GetDatum(row->fencing_token);
	a[5] = JsonbPGetDatum(state);
	a[6] = CStringGetTextDatum(state_hash);
	a[7] = TimestampTzGetDatum(wl_now());
	a[8] = CStringGetTextDatum(key_id);
	a[9] = CStringGetTextDatum(tag);
	t = wl_store_run(P_CHECKPOINT_PUT, a, NULL, 0, SPI_OK_INSERT_RETURNING);
	doc = wl_store_jsonb(t, 0, 1);
	SPI_freetuptable(t);
	return doc;
}

/* wl_store_checkpoint_last: the latest checkpoint of a workload, or false. */
bool
wl_store_checkpoint_last(const WlRow *row, WlCheckpointRow *out)
{
	Datum		args[2];
	SPITupleTable *t;
	bool		found;

	args[0] = CStringGetTextDatum(row->tenant_id);
	args[1] = Int64GetDatum(row->seq);
	t = wl_store_run(P_CHECKPOINT_LAST, args, NULL, 1, SPI_OK_SELECT);
	found = SPI_processed > 0;
	if (found)
	{
		out->sequence = (int) wl_store_int(t, 0, 1);
		out->checkpoint_id = wl_store_text(t, 0, 2);
		out->state = wl_store_jsonb(t, 0, 3);
		out->state_hash = wl_store_text(t, 0, 4);
		out->key_id = wl_store_text(t, 0, 5);
		out->tag = wl_store_text(t, 0, 6);
		out->doc = wl_store_jsonb(t, 0, 7);
	}
	SPI_freetuptable(t);
	return found;
}

/* wl_store_wait_put opens wait number row->wait_count of a locked row. */
void
wl_store_wait_put(const WlRow *row, const char *kind, const char *wake_key, TimestampTz deadline)
{
	Datum		a[10];
	char		nulls[10];

	memset(nulls, ' ', sizeof(nulls));
	a[0] = CStringGetTextDatum(row->workload_id);
	a[1] = Int32GetDatum(row->wait_count);
	a[2] = CStringGetTextDatum(row->tenant_id);
	a[3] = CStringGetTextDatum(row->application_id);
	a[4] = CStringGetTextDatum(kind);
	a[5] = wake_key ? CStringGetTextDatum(wake_key) : (Datum) 0;
	nulls[5] = wake_key ? ' ' : 'n';
	a[6] = TimestampTzGetDatum(deadline);
	a[7] = Int32GetDatum(row->attempt_count);
	a[8] = Int64GetDatum(row->fencing_token);
	a[9] = TimestampTzGetDatum(wl_now());
	wl_store_run(P_WAIT_PUT, a, nulls, 0, SPI_OK_INSERT);
}

/* wl_store_wait_open: the open wait of a workload, or false. */
bool
wl_store_wait_open(const WlRow *row, WlWait *w)
{
	Datum		args[2];
	SPITupleTable *t;
	bool		isnull;
	bool		found;

	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = CStringGetTextDatum(row->tenant_id);
	t = wl_store_run(P_WAIT_OPEN, args, NULL, 1, SPI_OK_SELECT);
	found = SPI_processed > 0;
	if (found)
	{
		w->number = (int) wl_store_int(t, 0, 1);
		w->kind = wl_store_text(t, 0, 2);
		w->wake_key = wl_store_text(t, 0, 3);
		w->deadline = wl_store_ts(t, 0, 4, &isnull);
	}
	SPI_freetuptable(t);
	return found;
}

/* wl_store_wait_resolve records how wait `number` ended. */
void
wl_store_wait_resolve(const WlRow *row, int number, const WlWaitAnswer *k)
{
	Datum		a[10];
	char		nulls[10] = {' ', ' ', ' ', ' ', 'n', 'n', 'n', 'n', 'n', ' '};

	a[0] = CStringGetTextDatum(row->workload_id);
	a[9] = CStringGetTextDatum(row->tenant_id);
	a[1] = Int32GetDatum(number);
	a[2] = TimestampTzGetDatum(wl_now());
	a[3] = CStringGetTextDatum(k->outcome);
	if (k->payload)
		a[4] = JsonbPGetDatum(k->payload), nulls[4] = ' ';
	if (k->has_decision)
		a[5] = BoolGetDatum(k->approved), nulls[5] = ' ';
	if (k->approver)
		a[6] = CStringGetTextDatum(k->approver), nulls[6] = ' ';
	if (k->note)
		a[7] = CStringGetTextDatum(k->note), nulls[7] = ' ';
	if (k->approver_role)
		a[8] = DirectFunctionCall1(namein, CStringGetDatum(k->approver_role)), nulls[8] = ' ';
	wl_store_run(P_WAIT_RESOLVE, a, nulls, 0, SPI_OK_UPDATE);
}

/*
 * wl_store_wait_close resolves a wait the workload leaves without a wake
 * (cancelled, timed out) with that outcome; a wait already answered is left
 * as it is.
 */
void
wl_store_wait_close(const WlRow *row, const char *outcome)
{
	Datum		a[4];

	a[0] = CStringGetTextDatum(row->workload_id);
	a[3] = CStringGetTextDatum(row->tenant_id);
	a[1] = TimestampTzGetDatum(wl_now());
	a[2] = CStringGetTextDatum(outcome);
	wl_store_run(P_WAIT_CLOSE, a, NULL, 0, SPI_OK_UPDATE);
}

/* wl_store_wait_last: the latest ended wait of a workload, as a document, or NULL. */
Jsonb *
wl_store_wait_last(const WlRow *row)
{
	Datum		args[2];
	SPITupleTable *t;
	Jsonb	   *doc = NULL;

	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = CStringGetTextDatum(row->tenant_id);
	t = wl_store_run(P_WAIT_LAST, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed > 0)
		doc = wl_store_jsonb(t, 0, 1);
	SPI_freetuptable(t);
	return doc;
}

/* wl_store_waits_keyed: workloads with an open, unexpired event wait on wake_key, by id. */
char **
wl_store_waits_keyed(const char *tenant_id, const char *application_id, const char *wake_key,
					 TimestampTz now, int *n)
{
	Datum		args[4];
	SPITupleTable *t;
	char	  **ids;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = CStringGetTextDatum(wake_key);
	args[3] = TimestampTzGetDatum(now);
	t = wl_store_run(P_WAIT_KEYED, args, NULL, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	ids = palloc(sizeof(char *) * (*n + 1));
	for (int i = 0; i < *n; i++)
		ids[i] = wl_store_text(t, i, 1);
	SPI_freetuptable(t);
	return ids;
}

/* wl_store_steps: a workload's compensation steps in registration order. */
WlStep *
wl_store_steps(const WlRow *row, int *n)
{
	Datum		a[2];
	SPITupleTable *t;
	WlStep	   *steps;

	a[0] = CStringGetTextDatum(row->workload_id);
	a[1] = CStringGetTextDatum(row->tenant_id);
	t = wl_store_run(P_COMP_LIST, a, NULL, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	steps = palloc0(sizeof(WlStep) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		steps[i].step = (int) wl_store_int(t, i, 1);
		steps[i].capability = wl_store_text(t, i, 2);
		steps[i].input = wl_store_jsonb(t, i, 3);
		steps[i].digest = wl_store_text(t, i, 4);
		steps[i].compensation_id = wl_store_text(t, i, 5);
	}
	SPI_freetuptable(t);
	return steps;
}

/* wl_store_step_put records compensation step `step` of a locked row; returns its document. */
Jsonb *
wl_store_step_put(const WlRow *row, int step, const char *capability, Jsonb *input,
				  const char *input_hash, const char *digest)
{
	Datum		a[10];
	SPITupleTable *t;
	Jsonb	   *doc;

	a[0] = CStringGetTextDatum(row->workload_id);
	a[1] = Int32GetDatum(step);
	a[9] = CStringGetTextDatum(row->tenant_id);
	a[2] = CStringGetTextDatum(capability);
	a[3] = JsonbPGetDatum(input);
	a[4] = CStringGetTextDatum(input_hash);
	a[5] = CStringGetTextDatum(digest);
	a[6] = Int32GetDatum(row->attempt_count);
	a[7] = Int64GetDatum(row->fencing_token);
	a[8] = TimestampTzGetDatum(wl_now());
	t = wl_store_run(P_COMP_PUT, a, NULL, 0, SPI_OK_INSERT_RETURNING);
	doc = wl_store_jsonb(t, 0, 1);
	SPI_freetuptable(t);
	return doc;
}

/* wl_store_step_bind records the workload that undoes a step. */
void
wl_store_step_bind(const WlRow *row, int step, const char *compensation_id,
				   const char *actor)
{
	Datum		a[6];

	a[0] = CStringGetTextDatum(row->workload_id);
	a[5] = CStringGetTextDatum(row->tenant_id);
	a[1] = Int32GetDatum(step);
	a[2] = CStringGetTextDatum(compensation_id);
	a[3] = TimestampTzGetDatum(wl_now());
	a[4] = CStringGetTextDatum(actor);
	wl_store_run(P_COMP_BIND, a, NULL, 0, SPI_OK_UPDATE);
}
