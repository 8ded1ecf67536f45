/*
 * store_ops.c: the row-level helpers every state change goes through.
 * wl_store_transition is the one function that changes a workload's state:
 * it asks the transition table, writes the row, appends the event, sends
 * NOTIFY on READY and, on a final state, cancels dependents that can no
 * longer run.  SQL text stays in store.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/async.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "store.h"
#include "tick.h"

/*
 * wl_store_lock locks the workload row (FOR NO KEY UPDATE, waiting) and
 * reads it into row.  Returns false when there is no such workload, or when
 * it belongs to a tenant and application the caller may not act in: its
 * existence is not revealed.
 */
/* row_read fills row from row i of a P_LOCK / P_LOCK_MANY result. */
static void
row_read(SPITupleTable *t, int i, const char *workload_id, WlRow *row)
{
	bool		isnull;

	memset(row, 0, sizeof(*row));
	row->workload_id = pstrdup(workload_id);
	row->tenant_id = wl_store_text(t, i, 1);
	row->application_id = wl_store_text(t, i, 2);
	row->state = wl_state_from_name(wl_store_text(t, i, 3));
	row->attempt_count = (int) wl_store_int(t, i, 4);
	row->retry_count = (int) wl_store_int(t, i, 5);
	row->fencing_token = wl_store_int(t, i, 6);
	row->checkpoint_sequence = (int) wl_store_int(t, i, 7);
	row->claim_id = wl_store_text(t, i, 8);
	row->worker_id = wl_store_text(t, i, 9);
	row->lease_expires_at = wl_store_ts(t, i, 10, &isnull);
	row->next_attempt_at = wl_store_ts(t, i, 11, &isnull);
	row->state_entered_at = wl_store_ts(t, i, 12, &isnull);
	row->created_at = wl_store_ts(t, i, 13, &isnull);
	row->last_heartbeat_at = wl_store_ts(t, i, 14, &isnull);
	row->has_heartbeat = !isnull;
	row->capability_snapshot = DatumGetArrayTypeP(wl_store_datum(t, i, 15, &isnull));
	row->timeouts.queue_ms = wl_store_int(t, i, 16);
	row->timeouts.claim_ms = wl_store_int(t, i, 17);
	row->timeouts.execution_ms = wl_store_int(t, i, 18);
	row->timeouts.heartbeat_ms = wl_store_int(t, i, 19);
	row->timeouts.overall_ms = wl_store_int(t, i, 20);
	row->deadline_at = wl_store_ts(t, i, 21, &isnull);
	row->has_deadline = !isnull;
	row->wait_count = (int) wl_store_int(t, i, 22);
	row->has_criteria = wl_store_bool(t, i, 23);
}

bool
wl_store_lock(const char *workload_id, WlRow *row)
{
	Datum		args[1];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_LOCK, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	row_read(t, 0, workload_id, row);
	return wl_authz_member(row->tenant_id, row->application_id);
}

/* array_of: a one-dimensional array of n values of type (nulls may be NULL). */
static ArrayType *
array_of(Datum *d, bool *nulls, int n, Oid type)
{
	int16		len;
	bool		byval;
	char		align;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	get_typlenbyvalalign(type, &len, &byval, &align);
	return construct_md_array(d, nulls, 1, dims, lbs, type, len, byval, align);
}

/*
 * wl_store_lock_many locks the n workloads named in ids, which must be
 * sorted by strcmp and distinct, in that order, and reads them into rows;
 * found[i] is false where wl_store_lock would have returned false.  One
 * statement for the batch.
 */
void
wl_store_lock_many(char **ids, int n, WlRow *rows, bool *found)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	Datum		args[1];
	SPITupleTable *t;
	int			got;
	int			k = 0;
	const char *m_tenant = NULL;
	const char *m_app = NULL;
	bool		m_member = false;

	for (int i = 0; i < n; i++)
		d[i] = CStringGetTextDatum(ids[i]);
	args[0] = PointerGetDatum(array_of(d, NULL, n, TEXTOID));
	t = wl_store_run(P_LOCK_MANY, args, NULL, 0, SPI_OK_SELECT);
	got = (int) SPI_processed;
	for (int i = 0; i < n; i++)
		found[i] = false;
	/* rows come back in the same byte order as ids: one merge pass */
	for (int r = 0; r < got; r++)
	{
		char	   *id = wl_store_text(t, r, 24);

		while (k < n && strcmp(ids[k], id) < 0)
			k++;
		if (k == n || strcmp(ids[k], id) != 0)
			elog(ERROR, "workload batch lock returned an unasked row \"%s\"", id);
		row_read(t, r, id, &rows[k]);
		/* a batch is almost always one tenant and application: ask once */
		if (m_tenant == NULL || strcmp(m_tenant, rows[k].tenant_id) != 0 ||
			strcmp(m_app, rows[k].application_id) != 0)
		{
			m_tenant = rows[k].tenant_id;
			m_app = rows[k].application_id;
			m_member = wl_authz_member(m_tenant, m_app);
		}
		found[k] = m_member;
	}
}

/* wl_store_save writes the row's mutable columns; the caller holds its lock. */
void
wl_store_save(WlRow *row)
{
	Datum		args[19];
	char		nulls[19];
	TimestampTz now = wl_now();

	memset(nulls, ' ', sizeof(nulls));
	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = wl_store_state_datum(row->state);
	args[2] = TimestampTzGetDatum(now);
	args[3] = TimestampTzGetDatum(row->state_entered_at);
	args[4] = TimestampTzGetDatum(row->next_attempt_at);
	args[5] = Int32GetDatum(row->attempt_count);
	args[6] = Int32GetDatum(row->retry_count);
	args[7] = Int64GetDatum(row->fencing_token);
	args[8] = Int32GetDatum(row->checkpoint_sequence);
	if (row->claim_id)
	{
		args[9] = CStringGetTextDatum(row->claim_id);
		args[10] = CStringGetTextDatum(row->worker_id);
		args[11] = TimestampTzGetDatum(row->lease_expires_at);
	}
	else
		nulls[9] = nulls[10] = nulls[11] = 'n';
	args[12] = TimestampTzGetDatum(row->last_heartbeat_at);
	if (!row->has_heartbeat)
		nulls[12] = 'n';
	args[13] = BoolGetDatum(row->failure_changed);
	args[14] = PointerGetDatum(row->last_failure);
	if (row->last_failure == NULL)
		nulls[14] = 'n';
	args[15] = BoolGetDatum(row->progress_changed);
	args[16] = PointerGetDatum(row->progress);
	if (row->progress == NULL)
		nulls[16] = 'n';
	args[17] = TimestampTzGetDatum(row->deadline_at);
	if (!row->has_deadline)
		nulls[17] = 'n';
	args[18] = Int32GetDatum(row->wait_count);
	wl_store_run(P_SAVE, args, nulls, 0, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		elog(ERROR, "workload \"%s\" vanished while locked", row->workload_id);
	row->failure_changed = false;
	row->progress_changed = false;
}

/* evidence_or_empty: an event's evidence, {} when there is none. */
static Jsonb *
evidence_or_empty(Jsonb *evidence)
{
	WlJson		b;

	if (evidence)
		return evidence;
	wl_json_begin(&b);
	return wl_json_end(&b);
}

/*
 * wl_store_event appends one event: the event type follows from the target
 * state, the database role is the caller's.
 */
void
wl_store_event(WlRow *row, WlState from, bool has_from, WlState to,
			   const char *actor, Jsonb *evidence)
{
	Datum		args[10];
	char		nulls[10];

	memset(nulls, ' ', sizeof(nulls));
	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = CStringGetTextDatum(row->tenant_id);
	args[2] = CStringGetTextDatum(row->application_id);
	args[3] = CStringGetTextDatum(wl_state_event_type(to));
	args[4] = wl_store_state_datum(from);
	if (!has_from)
		nulls[4] = 'n';
	args[5] = wl_store_state_datum(to);
	args[6] = CStringGetTextDatum(actor);
	args[7] = TimestampTzGetDatum(wl_now());
	args[8] = wl_authz_caller_name();
	args[9] = PointerGetDatum(evidence_or_empty(evidence));
	wl_store_run(P_EVENT, args, nulls, 0, SPI_OK_INSERT);
}

static void cancel_unreachable_dependents(WlRow *row, const char *actor);

/*
 * wl_store_transition moves a locked row to `to`: raises
 * WORKLOAD_TRANSITION_DENIED unless the table allows it, then saves the row
 * (with whatever else the caller changed) with the deadline the tick keeps
 * for the new state, closes a wait it leaves unanswered, appends the event,
 * notifies the tenant's channel on READY, and on a final state cancels
 * dependents that waited for another outcome.
 */
void
wl_store_transition(WlRow *row, WlState to, const char *actor, Jsonb *evidence)
{
	WlState		from = row->state;

	wl_state_require(row->workload_id, from, to);
	row->state = to;
	row->state_entered_at = wl_now();
	wl_tick_deadline(row, from);
	wl_store_save(row);
	if (from == WL_WAITING)
		wl_store_wait_close(row, to == WL_CANCELLED ? "cancelled" :
							to == WL_TIMED_OUT ? "timed_out" : "woken");
	wl_store_event(row, from, true, to, actor, evidence);
	if (to == WL_READY)
		Async_Notify(wl_channel(row->tenant_id, row->application_id), row->workload_id);
	if (wl_state_is_final(to))
		cancel_unreachable_dependents(row, actor);
}

/*
 * wl_store_transition_many is wl_store_transition for n locked rows moving
 * to one state, with the row writes and the events in one statement (events
 * in the order of rows).  What the single transition does per row besides
 * (close a wait, NOTIFY on READY, cancel dependents on a final state) it
 * does here too, asking for dependents once for the batch.
 */
void
wl_store_transition_many(WlRow **rows, int n, WlState to, const char *actor,
						 Jsonb **evidence)
{
#define SM_COLS 20			/* the per-row arrays of P_SAVE_MANY */
	Datum	   *d[SM_COLS];
	bool	   *nl[SM_COLS];
	static const Oid types[SM_COLS] = {TEXTOID, InvalidOid, TIMESTAMPTZOID, TIMESTAMPTZOID,
		INT4OID, INT4OID, INT8OID, INT4OID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
	BOOLOID, JSONBOID, BOOLOID, JSONBOID, TIMESTAMPTZOID, INT4OID, InvalidOid, JSONBOID};
	Datum		args[25];
	WlState    *from = palloc(sizeof(WlState) * (n + 1));
	TimestampTz now = wl_now();
	Oid			state_type;
	SPITupleTable *t;

	if (n == 0)
		return;
	for (int c = 0; c < SM_COLS; c++)
	{
		d[c] = palloc0(sizeof(Datum) * n);
		nl[c] = palloc0(sizeof(bool) * n);
	}
	for (int i = 0; i < n; i++)
	{
		WlRow	   *row = rows[i];

		from[i] = row->state;
		wl_state_require(row->workload_id, from[i], to);
		row->state = to;
		row->state_entered_at = now;
		wl_tick_deadline(row, from[i]);
		d[0][i] = CStringGetTextDatum(row->workload_id);
		d[1][i] = wl_store_state_datum(to);
		d[2][i] = TimestampTzGetDatum(row->state_entered_at);
		d[3][i] = TimestampTzGetDatum(row->next_attempt_at);
		d[4][i] = Int32GetDatum(row->attempt_count);
		d[5][i] = Int32GetDatum(row->retry_count);
		d[6][i] = Int64GetDatum(row->fencing_token);
		d[7][i] = Int32GetDatum(row->checkpoint_sequence);
		if (row->claim_id)
		{
			d[8][i] = CStringGetTextDatum(row->claim_id);
			d[9][i] = CStringGetTextDatum(row->worker_id);
			d[10][i] = TimestampTzGetDatum(row->lease_expires_at);
		}
		else
			nl[8][i] = nl[9][i] = nl[10][i] = true;
		d[11][i] = TimestampTzGetDatum(row->last_heartbeat_at);
		nl[11][i] = !row->has_heartbeat;
		d[12][i] = BoolGetDatum(row->failure_changed);
		d[13][i] = PointerGetDatum(row->last_failure);
		nl[13][i] = row->last_failure == NULL;
		d[14][i] = BoolGetDatum(row->progress_changed);
		d[15][i] = PointerGetDatum(row->progress);
		nl[15][i] = row->progress == NULL;
		d[16][i] = TimestampTzGetDatum(row->deadline_at);
		nl[16][i] = !row->has_deadline;
		d[17][i] = Int32GetDatum(row->wait_count);
		d[18][i] = wl_store_state_datum(from[i]);
		d[19][i] = PointerGetDatum(evidence_or_empty(evidence[i]));
	}
	state_type = wl_store_state_type();
	/* $1, $2, $4..$20, $25: the per-row arrays; $3, $21..$24: one value each */
	for (int c = 0; c < SM_COLS; c++)
	{
		int			a = c <= 1 ? c : c == SM_COLS - 1 ? 24 : c + 1;

		args[a] = PointerGetDatum(array_of(d[c], nl[c], n,
										   OidIsValid(types[c]) ? types[c] : state_type));
	}
	args[2] = TimestampTzGetDatum(now);
	args[20] = wl_store_state_datum(to);
	args[21] = CStringGetTextDatum(wl_state_event_type(to));
	args[22] = CStringGetTextDatum(actor);
	args[23] = wl_authz_caller_name();
	t = wl_store_run(P_SAVE_MANY, args, NULL, 1, SPI_OK_SELECT);
	if (wl_store_int(t, 0, 1) != n)
		elog(ERROR, "workloads vanished while locked");
	for (int i = 0; i < n; i++)
	{
		rows[i]->failure_changed = false;
		rows[i]->progress_changed = false;
		if (from[i] == WL_WAITING)
			wl_store_wait_close(rows[i], to == WL_CANCELLED ? "cancelled" :
								to == WL_TIMED_OUT ? "timed_out" : "woken");
		if (to == WL_READY)
			Async_Notify(wl_channel(rows[i]->tenant_id, rows[i]->application_id),
						 rows[i]->workload_id);
	}
	if (wl_state_is_final(to))
	{
		Datum		a[2];
		int			m;
		char	  **ids;

		a[0] = args[0];
		a[1] = wl_store_state_datum(to);
		t = wl_store_run(P_DEPENDED_ON, a, NULL, 0, SPI_OK_SELECT);
		m = (int) SPI_processed;
		ids = palloc(sizeof(char *) * (m + 1));
		for (int j = 0; j < m; j++)
			ids[j] = wl_store_text(t, j, 1);
		for (int j = 0; j < m; j++)
		{
			for (int i = 0; i < n; i++)
			{
				if (strcmp(rows[i]->workload_id, ids[j]) == 0)
					cancel_unreachable_dependents(rows[i], actor);
			}
		}
	}
}

/*
 * A dependent whose required state differs from this final state can never
 * run: cancel it (and, through it, its own dependents).  Dependencies form
 * a DAG, since each must exist before its dependent.
 */
static void
cancel_unreachable_dependents(WlRow *row, const char *actor)
{
	Datum		args[2];
	SPITupleTable *t;
	int			n;
	char	  **ids;

	check_stack_depth();
	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = wl_store_state_datum(row->state);
	t = wl_store_run(P_DEPENDENTS, args, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	ids = palloc(sizeof(char *) * (n + 1));
	for (int i = 0; i < n; i++)
		ids[i] = wl_store_text(t, i, 1);
	for (int i = 0; i < n; i++)
	{
		WlRow		dep;
		WlJson		b;

		if (!wl_store_lock(ids[i], &dep) || !wl_state_allowed(dep.state, WL_CANCELLED))
			continue;
		wl_json_begin(&b);
		wl_json_str(&b, "cause", "dependency_unreachable");
		wl_json_str(&b, "dependency", row->workload_id);
		wl_json_str(&b, "dependency_state", wl_state_name(row->state));
		wl_store_transition(&dep, WL_CANCELLED, actor, wl_json_end(&b));
	}
}

/* ---- typed helpers over single statements ---- */

/* wl_store_policy reads the retry policy of a workload. */
void
wl_store_policy(const char *workload_id, WlPolicy *p)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;

	args[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_POLICY, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "workload \"%s\" has no spec", workload_id);
	p->max_attempts = (int) wl_store_int(t, 0, 1);
	p->initial_delay_ms = wl_store_int(t, 0, 2);
	p->max_delay_ms = wl_store_int(t, 0, 3);
	p->exponential = strcmp(wl_store_text(t, 0, 4), "exponential") == 0;
	p->retry_on = DatumGetArrayTypeP(wl_store_datum(t, 0, 5, &isnull));
}

void
wl_store_attempt_start(const WlRow *row)
{
	Datum		args[3];

	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = Int32GetDatum(row->attempt_count);
	args[2] = TimestampTzGetDatum(wl_now());
	wl_store_run(P_ATTEMPT_START, args, NULL, 0, SPI_OK_UPDATE);
}

/* wl_store_attempt_close ends the current attempt with an outcome (once). */
void
wl_store_attempt_close(const WlRow *row, const char *outcome, const char *kind,
					   const char *error)
{
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

	if (row->attempt_count == 0)
		return;
	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = Int32GetDatum(row->attempt_count);
	args[2] = TimestampTzGetDatum(wl_now());
	args[3] = CStringGetTextDatum(outcome);
	args[4] = kind ? CStringGetTextDatum(kind) : (Datum) 0;
	nulls[4] = kind ? ' ' : 'n';
	args[5] = error ? CStringGetTextDatum(error) : (Datum) 0;
	nulls[5] = error ? ' ' : 'n';
	wl_store_run(P_ATTEMPT_CLOSE, args, nulls, 0, SPI_OK_UPDATE);
}

/* wl_store_one_jsonb runs a one-text-argument plan and returns column col of its row, or NULL. */
Jsonb *
wl_store_one_jsonb(WlPlanId id, const char *arg, int col)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;
	Datum		d;

	args[0] = CStringGetTextDatum(arg);
	t = wl_store_run(id, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return NULL;
	d = wl_store_datum(t, 0, col, &isnull);
	return isnull ? NULL : DatumGetJsonbP(d);
}

/*
 * wl_store_document: the workload document (full adds attempts,
 * checkpoints, result, events); NULL when there is none the caller may see.
 */
Jsonb *
wl_store_document(const char *workload_id, bool full)
{
	Jsonb	   *doc = wl_store_one_jsonb(full ? P_DOC_FULL : P_DOC, workload_id, 1);

	if (doc && !wl_authz_member(wl_json_get_text(&doc->root, "tenant_id"),
								wl_json_get_text(&doc->root, "application_id")))
		return NULL;
	return doc;
}

/* wl_store_transfer copies a jsonb value out of SPI memory into the caller's context. */
Jsonb *
wl_store_transfer(Jsonb *j)
{
	return (Jsonb *) DatumGetPointer(SPI_datumTransfer(JsonbPGetDatum(j), false, -1));
}

/*
 * wl_store_result_find looks up a result by id: false when there is none;
 * else fills the workload it belongs to, its provenance and its document.
 */
bool
wl_store_result_find(const char *result_id, char **workload_id, WlFence *prov, Jsonb **doc)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;

	args[0] = CStringGetTextDatum(result_id);
	t = wl_store_run(P_RESULT_GET, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	*workload_id = wl_store_text(t, 0, 1);
	prov->workload_id = *workload_id;
	prov->claim_id = wl_store_text(t, 0, 2);
	prov->worker_id = wl_store_text(t, 0, 3);
	prov->fencing_token = wl_store_int(t, 0, 4);
	*doc = DatumGetJsonbP(wl_store_datum(t, 0, 5, &isnull));
	return true;
}

/*
 * wl_store_result_find_many is wl_store_result_find for n result ids in one
 * statement: found[i] false where there is none.
 */
void
wl_store_result_find_many(char **result_ids, int n, bool *found, char **workload_ids,
						  WlFence *provs, Jsonb **docs)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;

	for (int i = 0; i < n; i++)
	{
		d[i] = CStringGetTextDatum(result_ids[i]);
		found[i] = false;
	}
	args[0] = PointerGetDatum(array_of(d, NULL, n, TEXTOID));
	t = wl_store_run(P_RESULT_GET_MANY, args, NULL, 0, SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	   *id = wl_store_text(t, r, 6);

		for (int i = 0; i < n; i++)
		{
			if (found[i] || strcmp(result_ids[i], id) != 0)
				continue;
			found[i] = true;
			workload_ids[i] = wl_store_text(t, r, 1);
			provs[i].workload_id = workload_ids[i];
			provs[i].claim_id = wl_store_text(t, r, 2);
			provs[i].worker_id = wl_store_text(t, r, 3);
			provs[i].fencing_token = wl_store_int(t, r, 4);
			docs[i] = DatumGetJsonbP(wl_store_datum(t, r, 5, &isnull));
		}
	}
}

/*
 * wl_store_result_put_many is wl_store_result_put for the current attempts
 * of n rows, one worker, in one statement: docs[i] is NULL where the result
 * id was taken meanwhile.  Returns how many were stored.
 */
int
wl_store_result_put_many(WlRow **rows, int n, const char *worker_id, char **claim_ids,
						 int64 *tokens, char **result_ids, Jsonb **outputs,
						 ArrayType **artifacts, int *schema_versions, Jsonb **docs)
{
	Datum	   *d[9];
	Datum		a[11];
	SPITupleTable *t;
	static const Oid types[9] = {TEXTOID, TEXTOID, JSONBOID, TEXTOID, JSONOID, INT4OID,
	TEXTOID, INT8OID, INT4OID};
	bool		isnull;
	int			got;

	for (int c = 0; c < 9; c++)
		d[c] = palloc(sizeof(Datum) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		d[0][i] = CStringGetTextDatum(result_ids[i]);
		d[1][i] = CStringGetTextDatum(rows[i]->workload_id);
		d[2][i] = JsonbPGetDatum(outputs[i]);
		d[3][i] = CStringGetTextDatum(wl_jsonb_hash(outputs[i]));
		d[4][i] = DirectFunctionCall1(array_to_json, PointerGetDatum(artifacts[i]));
		d[5][i] = Int32GetDatum(schema_versions[i]);
		d[6][i] = CStringGetTextDatum(claim_ids[i]);
		d[7][i] = Int64GetDatum(tokens[i]);
		d[8][i] = Int32GetDatum(rows[i]->attempt_count);
		docs[i] = NULL;
	}
	for (int c = 0; c < 9; c++)
		a[c] = PointerGetDatum(array_of(d[c], NULL, n, types[c]));
	a[9] = CStringGetTextDatum(worker_id);
	a[10] = TimestampTzGetDatum(wl_now());
	t = wl_store_run(P_RESULT_PUT_MANY, a, NULL, 0, SPI_OK_INSERT_RETURNING);
	got = (int) SPI_processed;
	for (int r = 0; r < got; r++)
	{
		char	   *id = wl_store_text(t, r, 1);

		for (int i = 0; i < n; i++)
		{
			if (docs[i] == NULL && strcmp(rows[i]->workload_id, id) == 0)
				docs[i] = DatumGetJsonbP(wl_store_datum(t, r, 2, &isnull));
		}
	}
	return got;
}

/* wl_store_attempt_close_many closes the current attempts of n rows with one outcome. */
void
wl_store_attempt_close_many(WlRow **rows, int n, const char *outcome)
{
	Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
	Datum	   *nums = palloc(sizeof(Datum) * (n + 1));
	Datum		a[4];
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		if (rows[i]->attempt_count == 0)
			continue;
		ids[k] = CStringGetTextDatum(rows[i]->workload_id);
		nums[k] = Int32GetDatum(rows[i]->attempt_count);
		k++;
	}
	if (k == 0)
		return;
	a[0] = PointerGetDatum(array_of(ids, NULL, k, TEXTOID));
	a[1] = PointerGetDatum(array_of(nums, NULL, k, INT4OID));
	a[2] = TimestampTzGetDatum(wl_now());
	a[3] = CStringGetTextDatum(outcome);
	wl_store_run(P_ATTEMPT_CLOSE_MANY, a, NULL, 0, SPI_OK_UPDATE);
}

/*
 * wl_store_result_put stores the result of the current attempt with its
 * provenance; NULL when the result id was taken meanwhile by another
 * workload.
 */
Jsonb *
wl_store_result_put(const WlRow *row, const WlFence *fence, const char *result_id,
					Jsonb *output, ArrayType *artifacts, int schema_version)
{
	Datum		a[11];
	SPITupleTable *t;
	bool		isnull;

	a[0] = CStringGetTextDatum(result_id);
	a[1] = CStringGetTextDatum(row->workload_id);
	a[2] = JsonbPGetDatum(output);
	a[3] = CStringGetTextDatum(wl_jsonb_hash(output));
	a[4] = PointerGetDatum(artifacts);
	a[5] = Int32GetDatum(schema_version);
	a[6] = CStringGetTextDatum(fence->claim_id);
	a[7] = CStringGetTextDatum(fence->worker_id);
	a[8] = Int64GetDatum(fence->fencing_token);
	a[9] = Int32GetDatum(row->attempt_count);
	a[10] = TimestampTzGetDatum(wl_now());
	t = wl_store_run(P_RESULT_PUT, a, NULL, 0, SPI_OK_INSERT_RETURNING);
	if (SPI_processed == 0)
		return NULL;
	return DatumGetJsonbP(wl_store_datum(t, 0, 1, &isnull));
}

/*
 * wl_store_wait_close resolves a wait the workload leaves without a wake
 * (cancelled, timed out) with that outcome; a wait already answered is
 * left as it is.
 */
void
wl_store_wait_close(const WlRow *row, const char *outcome)
{
	Datum		a[3];

	a[0] = CStringGetTextDatum(row->workload_id);
	a[1] = TimestampTzGetDatum(wl_now());
	a[2] = CStringGetTextDatum(outcome);
	wl_store_run(P_WAIT_CLOSE, a, NULL, 0, SPI_OK_UPDATE);
}

/*
 * wl_store_checkpoint_put appends checkpoint row->checkpoint_sequence with
 * its state hash and its authentication tag under key key_id.
 */
Jsonb *
wl_store_checkpoint_put(const WlRow *row, Jsonb *state, const char *state_hash,
						const char *key_id, const char *tag)
{
	Datum		a[10];
	SPITupleTable *t;
	bool		isnull;

	a[0] = CStringGetTextDatum(row->workload_id);
	a[1] = Int32GetDatum(row->checkpoint_sequence);
	a[2] = CStringGetTextDatum(wl_checkpoint_id(row->workload_id, row->checkpoint_sequence));
	a[3] = Int32GetDatum(row->attempt_count);
	a[4] = Int64GetDatum(row->fencing_token);
	a[5] = JsonbPGetDatum(state);
	a[6] = CStringGetTextDatum(state_hash);
	a[7] = TimestampTzGetDatum(wl_now());
	a[8] = CStringGetTextDatum(key_id);
	a[9] = CStringGetTextDatum(tag);
	t = wl_store_run(P_CHECKPOINT_PUT, a, NULL, 0, SPI_OK_INSERT_RETURNING);
	return DatumGetJsonbP(wl_store_datum(t, 0, 1, &isnull));
}

/* wl_store_one_row_jsonb runs plan id and returns the jsonb in column 1 of its one row. */
Jsonb *
wl_store_one_row_jsonb(WlPlanId id, Datum *args, const char *nulls)
{
	SPITupleTable *t = wl_store_run(id, args, nulls, 1, SPI_OK_SELECT);
	bool		isnull;
	Datum		d;

	if (SPI_processed != 1)
		elog(ERROR, "workload statement %d returned no row", (int) id);
	d = wl_store_datum(t, 0, 1, &isnull);
	if (isnull)
		elog(ERROR, "workload statement %d returned NULL", (int) id);
	return DatumGetJsonbP(d);
}
