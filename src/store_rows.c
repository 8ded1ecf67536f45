/*
 * store_rows.c: typed wrappers over the statements on workload rows: lock
 * (one or a batch, membership decided in the statement), save (one or a
 * batch, with the row's queue entry), the fenced calls' conditional
 * statement, events.  Creation and the dependency graph are in
 * store_create.c, the claim in store_claim.c.  Layer 2: it writes what it
 * is told.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "crypto.h"
#include "jsonb_util.h"
#include "pass.h"
#include "store.h"
#include "store_ops.h"

/* The caller's part of a MAY_TOUCH statement: $2 (acts everywhere) and $3 (the role). */
static void
caller_args(const WlCaller *who, Datum *args)
{
	args[0] = BoolGetDatum(who == NULL || who->admin);
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(who && who->role ? who->role : ""));
}

/* WlLockRead: where lock_moved reads a LOCKED_SEEN row of one workload */
typedef struct WlLockRead
{
	const char *workload_id;
	WlRow	   *row;
} WlLockRead;

/* lock_moved reads the row into the WlRow and answers wl_store_lock_moved of it */
static bool
lock_moved(SPITupleTable *t, void *into)
{
	WlLockRead *r = into;

	wl_store_row_read(t, 0, r->workload_id, r->row);
	return wl_store_lock_moved(t, 0, r->row->state, r->row->in_run);
}

/*
 * lock_read runs plan (P_LOCK, or P_LOCK_SKIP with skip) for one workload
 * (wl_store_read_locked): true found and locked (row read), false none the
 * caller may touch or, with skip, a part of it held by another transaction.
 */
static bool
lock_read(WlPlanId plan, bool skip, const char *workload_id, const WlCaller *who, WlRow *row)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', 'n', 'n'};
	const char *tenant = wl_store_tenant_of(workload_id);

	args[0] = CStringGetTextDatum(workload_id);
	caller_args(who, &args[1]);
	if (tenant)
	{
		args[3] = CStringGetTextDatum(tenant);
		nulls[3] = ' ';
	}
	args[4] = wl_store_touch_arg(who, tenant, &nulls[4]);
	return wl_store_read_locked(plan, args, nulls, skip, lock_moved,
								&(WlLockRead) {workload_id, row}, workload_id) == 1;
}

/*
 * wl_store_lock locks the workload (its queue row, its run row, its
 * workload row: FOR NO KEY UPDATE, waiting) and reads it into row.  false
 * when there is no such workload or who may not touch it; such a row is not
 * locked.  In a maintenance pass, which waits for no row a session holds,
 * it is wl_store_lock_unheld.
 */
bool
wl_store_lock(const char *workload_id, const WlCaller *who, WlRow *row)
{
	if (wl_pass_active())
		return wl_store_lock_unheld(workload_id, who, row);
	return lock_read(P_LOCK, false, workload_id, who, row);
}

/*
 * wl_store_lock_unheld is wl_store_lock for the tick: false also when
 * another transaction holds any part of the workload (never waited for).
 */
bool
wl_store_lock_unheld(const char *workload_id, const WlCaller *who, WlRow *row)
{
	return lock_read(P_LOCK_SKIP, true, workload_id, who, row);
}

/*
 * wl_store_lock_many locks the n workloads named in ids, which must be
 * sorted by strcmp and distinct, in that order, and reads them into rows;
 * found[i] is false where wl_store_lock would have returned false.  One
 * statement for the batch.
 */
void
wl_store_lock_many(char **ids, int n, const WlCaller *who, WlRow *rows, bool *found)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', 'n', 'n'};
	SPITupleTable *t;
	int			got;
	int			id_col;
	int			k = 0;
	const char *tenant = NULL;

	/* on Citus, a batch of one tenant is locked on its node; else one by one */
	if (wl_store_call_tenant())
	{
		tenant = wl_store_call_tenant();
		args[3] = CStringGetTextDatum(tenant);
		nulls[3] = ' ';
	}
	else if (wl_store_citus())
	{
		tenant = wl_store_tenant_of_many(ids, n);
		if (tenant == NULL)
		{
			for (int i = 0; i < n; i++)
				found[i] = wl_store_lock(ids[i], who, &rows[i]);
			return;
		}
		args[3] = CStringGetTextDatum(tenant);
		nulls[3] = ' ';
	}

	for (int i = 0; i < n; i++)
	{
		d[i] = CStringGetTextDatum(ids[i]);
		found[i] = false;
	}
	args[0] = PointerGetDatum(wl_array_of(d, NULL, n, TEXTOID));
	caller_args(who, &args[1]);
	args[4] = wl_store_touch_arg(who, tenant, &nulls[4]);
	t = wl_store_run(P_LOCK_MANY, args, nulls, 0, SPI_OK_SELECT);
	got = (int) SPI_processed;
	id_col = SPI_fnumber(t->tupdesc, "workload_id");
	/* rows come back in the same byte order as ids: one merge pass */
	for (int r = 0; r < got; r++)
	{
		char	   *id = wl_store_text(t, r, id_col);

		while (k < n && strcmp(ids[k], id) < 0)
			k++;
		if (k == n || strcmp(ids[k], id) != 0)
			elog(ERROR, "workload batch lock returned an unasked row \"%s\"", id);
		wl_store_row_read(t, r, id, &rows[k]);
		found[k] = true;
		/* changed by another transaction while the lock waited: read again */
		if (wl_store_lock_moved(t, r, rows[k].state, rows[k].in_run))
			found[k] = wl_store_lock(ids[k], who, &rows[k]);
	}
	SPI_freetuptable(t);
}

/* where a row must stand in the queue, as it is now (only READY has a row of its own) */
static WlQueued
queue_wanted(const WlRow *row)
{
	return row->state == WL_READY ? WL_QUEUED_READY :
		row->claim_id ? WL_QUEUED_HELD : WL_QUEUED_NONE;
}

/* tenant_seq: the two arguments that name a workload's queue row */
static void
tenant_seq(const WlRow *row, Datum *a)
{
	a[0] = CStringGetTextDatum(row->tenant_id);
	a[1] = Int64GetDatum(row->seq);
}

/* the queue rows, written without a plan where they can be (store_direct.c) */
static const char *const queue_cols[12] = {"tenant_id", "seq", "application_id", "priority",
	"created_at", "available_at", "capability_snapshot", "checks_dependencies", "blocked", "has_run",
"row_at", "spec_at"};
static WlAppendTarget queue_put = {"queue", 12, queue_cols};
static WlKeyedTarget queue_rows = {"queue", "queue_pkey"};

/*
 * queue_sync brings the row's queue row in step with the row (see WlQueued):
 * a READY row has a queue row, any other none.  A row holding a claim is
 * found by its run row's entry in runs_held_idx, which its run row's own
 * update keeps (nothing to write here).  Storage mechanics: the domain never
 * sees the queue.
 */
static void
queue_sync(WlRow *row)
{
	WlQueued	want = queue_wanted(row);
	Datum		a[12];
	bool		n[12] = {false};
	bool		checks = false;
	bool		blocked = false;

	if (want == row->queued)
		return;
	tenant_seq(row, a);
	if (row->queued == WL_QUEUED_READY && !wl_store_remove(&queue_rows, a[0], a[1]))
		wl_store_run(P_QUEUE_DEL, a, NULL, 0, SPI_OK_DELETE);
	if (want == WL_QUEUED_READY)
	{
		a[2] = CStringGetTextDatum(row->application_id);
		a[3] = Int32GetDatum(row->priority);
		a[4] = TimestampTzGetDatum(row->created_at);
		a[5] = TimestampTzGetDatum(row->next_attempt_at);
		a[6] = PointerGetDatum(row->capability_snapshot);
		if (row->has_dependencies)
			wl_store_deps_queue(row, &checks, &blocked);
		a[7] = BoolGetDatum(checks);
		a[8] = BoolGetDatum(blocked);
		a[9] = BoolGetDatum(row->in_run);
		/* where the row and its spec were just written, if they were (a hint for the claim) */
		a[10] = PointerGetDatum(&row->row_at);
		n[10] = !ItemPointerIsValid(&row->row_at);
		a[11] = PointerGetDatum(&row->spec_at);
		n[11] = !ItemPointerIsValid(&row->spec_at);
		if (!wl_store_append(&queue_put, a, n))
			wl_store_run(P_QUEUE_PUT, a, NULL, 0, SPI_OK_INSERT);
		if (!blocked)
		{
			WlQueueKey	key = {row->priority, row->created_at, row->seq};

			wl_store_ready_claimable(row->tenant_id, row->application_id, &key,
									 row->next_attempt_at > wl_now() ? row->next_attempt_at : 0);
		}
	}
	row->queued = want;
}


/*
 * wl_store_save writes the row's mutable columns, and keeps its queue row in
 * step; the caller holds its lock.
 */
void
wl_store_save(WlRow *row)
{
	Datum		args[25];
	char		nulls[25];

	memset(nulls, ' ', sizeof(nulls));
	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = wl_catalog_state_datum(row->state);
	args[2] = TimestampTzGetDatum(wl_now());
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
	}
	else
		nulls[9] = nulls[10] = 'n';
	args[11] = wl_store_ts_arg(row->lease_expires_at, &nulls[11]);
	args[12] = TimestampTzGetDatum(row->last_heartbeat_at);
	nulls[12] = row->has_heartbeat ? ' ' : 'n';
	args[13] = BoolGetDatum(row->failure_changed);
	args[14] = PointerGetDatum(row->last_failure);
	nulls[14] = row->last_failure ? ' ' : 'n';
	args[15] = BoolGetDatum(row->progress_changed);
	args[16] = PointerGetDatum(row->progress);
	nulls[16] = row->progress ? ' ' : 'n';
	args[17] = TimestampTzGetDatum(row->deadline_at);
	nulls[17] = row->has_deadline ? ' ' : 'n';
	args[18] = Int32GetDatum(row->wait_count);
	/* a claim belongs to its role while held; released, to nobody */
	args[19] = CStringGetTextDatum(row->claimed_by ? row->claimed_by : "");
	nulls[19] = row->claim_id && row->claimed_by ? ' ' : 'n';
	args[20] = wl_store_ts_arg(row->claimed_at, &nulls[20]);
	args[21] = wl_store_ts_arg(row->started_at, &nulls[21]);
	args[22] = CStringGetTextDatum(row->result_id ? row->result_id : "");
	nulls[22] = row->result_id ? ' ' : 'n';
	args[23] = CStringGetTextDatum(row->tenant_id);
	args[24] = Int64GetDatum(row->seq);
	wl_store_run(row->in_run ? P_SAVE_RUN : P_SAVE, args, nulls, 0, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		elog(ERROR, "workload \"%s\" vanished while locked", row->workload_id);
	queue_sync(row);
}

/* a fenced call matched: its row (as it is now) keeps its queue row in step */
static void
fenced_found(const WlFencedCall *c, WlRow *row)
{
	/* the claim the call acted on: held before, released by a completion */
	row->queued = WL_QUEUED_HELD;
	row->attempt_claim_id = pstrdup(c->fence->claim_id);
	row->attempt_worker_id = pstrdup(c->fence->worker_id);
	row->attempt_lease = row->lease_expires_at;
	queue_sync(row);
}

/*
 * wl_store_fenced_held is wl_store_fenced without its statement, through f
 * (NULL: the call opens its own): 1 when the row matched (row: as it is
 * now, its queue row in step), 0 when nothing matched, -1 where
 * it cannot run without the statement (nothing done).
 */
int
wl_store_fenced_held(WlFencedRels *f, const WlFencedCall *c, const char *tenant, WlRow *row)
{
	int			direct = f ? wl_store_fenced_in(f, c, tenant, row) :
		wl_store_fenced_direct(c, tenant, row);

	if (direct == 1)
		fenced_found(c, row);
	return direct;
}

/*
 * wl_store_fenced runs a fenced call's conditional statement (see
 * WlFencedCall); true when the row matched, and then row is the row as it is
 * now, its queue row kept in step, and the claim it held recorded for the
 * attempt a release closes.  false: nothing was written or locked.
 */
bool
wl_store_fenced(const WlFencedCall *c, WlRow *row)
{
	static const WlPlanId plan[] = {P_FENCED_START, P_FENCED_BEAT, P_FENCED_COMPLETE};
	Datum		a[17];
	char		nulls[17];
	SPITupleTable *t;
	bool		found;
	int			tenant_arg = c->kind == WL_FENCED_COMPLETE ? 11 : 10;
	char	   *hash = NULL;
	const char *tenant = NULL;
	int			direct;

	memset(nulls, ' ', sizeof(nulls));
	tenant = wl_store_tenant_of(c->fence->workload_id);
	direct = wl_store_fenced_held(NULL, c, tenant, row);
	if (direct >= 0)
		return direct == 1;

	a[0] = CStringGetTextDatum(c->fence->workload_id);
	a[1] = CStringGetTextDatum(c->fence->claim_id);
	a[2] = CStringGetTextDatum(c->fence->worker_id);
	a[3] = Int64GetDatum(c->fence->fencing_token);
	a[4] = TimestampTzGetDatum(wl_now());
	caller_args(c->who, &a[5]);
	a[7] = BoolGetDatum(c->who->superuser);
	if (c->kind == WL_FENCED_BEAT)
	{
		a[8] = TimestampTzGetDatum(c->until);
		a[9] = PointerGetDatum(c->progress);
		nulls[9] = c->progress ? ' ' : 'n';
	}
	else
	{
		a[8] = wl_catalog_state_datum(c->from);
		a[9] = wl_catalog_state_datum(c->to);
		a[10] = CStringGetTextDatum(c->result_id ? c->result_id : "");
	}
	a[tenant_arg] = tenant ? CStringGetTextDatum(tenant) : (Datum) 0;
	nulls[tenant_arg] = tenant ? ' ' : 'n';
	a[tenant_arg + 1] = wl_store_touch_arg(c->who, tenant, &nulls[tenant_arg + 1]);
	if (c->kind != WL_FENCED_COMPLETE)
		t = wl_store_run(plan[c->kind], a, nulls, 1, SPI_OK_UPDATE_RETURNING);
	else
	{
		/* the result with the row, as store_fenced.c stores it */
		hash = wl_jsonb_hash(c->output);
		a[13] = JsonbPGetDatum(c->output);
		a[14] = CStringGetTextDatum(hash);
		a[15] = PointerGetDatum(c->artifacts);
		a[16] = Int32GetDatum(c->schema_version);
		t = wl_store_run_results(plan[c->kind], a, nulls, SPI_OK_UPDATE_RETURNING, c->result_id);
	}
	found = SPI_processed > 0;
	if (found)
		wl_store_row_read(t, 0, c->fence->workload_id, row);
	SPI_freetuptable(t);
	if (found)
	{
		fenced_found(c, row);
		row->result_hash = hash;
	}
	return found;
}

/* empty evidence is {} */
static Jsonb *
evidence_or_empty(Jsonb *evidence)
{
	return evidence ? evidence : wl_json_parse("{}");
}

/*
 * The evidence of most events is a fencing token and an attempt number and
 * little else: they are columns of workload.events, the rest of the
 * evidence is jsonb (a job's three events: about 130 WAL bytes fewer).
 * workload.event_evidence puts them back (wl_store_event_evidence).
 */
static const char *const evidence_columns[2] = {"fencing_token", "attempt"};

/* evidence_args: the event's evidence (NULL: {}) as its three columns */
static void
evidence_args(Jsonb *evidence, Datum *rest, Datum *token, bool *no_token, Datum *attempt,
			  bool *no_attempt)
{
	int64		v[2] = {0, 0};
	bool		found[2];

	*rest = PointerGetDatum(wl_json_take_ints(evidence_or_empty(evidence), evidence_columns, 2,
											  v, found));
	/* an attempt number out of int4's range stays in the jsonb */
	if (found[1] && (v[1] < PG_INT32_MIN || v[1] > PG_INT32_MAX))
	{
		found[1] = false;
		*rest = PointerGetDatum(wl_json_put_ints(DatumGetJsonbP(*rest), evidence_columns + 1, 1,
												 &v[1], (bool[1]) {true}));
	}
	*token = Int64GetDatum(v[0]);
	*no_token = !found[0];
	*attempt = Int32GetDatum((int32) v[1]);
	*no_attempt = !found[1];
}

/* wl_store_event_evidence: an event's evidence as it was given, from its three columns. */
Jsonb *
wl_store_event_evidence(Jsonb *rest, bool has_token, int64 token, bool has_attempt,
						int32 attempt)
{
	int64		v[2] = {token, attempt};
	bool		found[2] = {has_token, has_attempt};

	return wl_json_put_ints(rest, evidence_columns, 2, v, found);
}

/* P_EVENT's columns, and the sequence its default draws */
static const char *const event_cols[11] = {"tenant_id", "workload_seq", "from_state", "to_state",
	"actor", "at", "db_role", "evidence", "fencing_token", "attempt", "sequence"};
static WlAppendTarget events = {"event_rows", 11, event_cols};

/* wl_store_events_open: an appender of events (false on Citus: run P_EVENT) */
bool
wl_store_events_open(WlAppender *a)
{
	return wl_store_appender_open(a, &events);
}

/* wl_store_event_put: P_EVENT's row (args and nulls in its order) through a, its sequence drawn here */
void
wl_store_event_put(WlAppender *a, const Datum *args, const char *nulls)
{
	Datum		v[11];
	bool		n[11];

	for (int i = 0; i < 10; i++)
	{
		v[i] = args[i];
		n[i] = nulls[i] == 'n';
	}
	v[10] = Int64GetDatum(nextval_internal(wl_catalog_event_seq(), false));
	n[10] = false;
	wl_store_appender_put(a, v, n);
}

/*
 * wl_store_event_put_held: through a, the event of a worker's transition
 * from -> to of the tenant's workload seq (actor, role, at), its fencing
 * token and attempt in their columns and the rest of its evidence in rest:
 * what a claim and a batch's completion append.
 */
void
wl_store_event_put_held(WlAppender *a, const char *tenant, int64 seq, WlState from, WlState to,
						const char *actor, const char *role, TimestampTz at, Jsonb *rest,
						int64 token, int32 attempt)
{
	Datum		args[10] = {CStringGetTextDatum(tenant), Int64GetDatum(seq),
		wl_catalog_state_datum(from), wl_catalog_state_datum(to), CStringGetTextDatum(actor),
		TimestampTzGetDatum(at), CStringGetTextDatum(role ? role : ""), JsonbPGetDatum(rest),
	Int64GetDatum(token), Int32GetDatum(attempt)};

	wl_store_event_put(a, args, "          ");
}

/*
 * wl_store_event_append: P_EVENT's row appended without its plan
 * (store_direct.c); false where it cannot be (Citus: run P_EVENT).
 */
bool
wl_store_event_append(const Datum *args, const char *nulls)
{
	WlAppender	a;

	if (!wl_store_events_open(&a))
		return false;
	wl_store_event_put(&a, args, nulls);
	wl_store_appender_close(&a);
	return true;
}

/*
 * wl_store_event_carried: whether row's run row carries the event of its
 * move from `from` into `to` (store_fenced.c set it: row->carried_event),
 * so that no event row is appended for it
 */
bool
wl_store_event_carried(const WlRow *row, const WlState *from, WlState to)
{
	return row->carried_event != 0 && from != NULL && to == row->state &&
		((*from == WL_CLAIMED && to == WL_RUNNING) || (*from == WL_RUNNING && to == WL_SUCCEEDED));
}

/*
 * wl_store_event appends the event of a transition into `to` (from NULL:
 * the workload's first event) with the actor, the database role and the
 * evidence.
 */
void
wl_store_event(const WlRow *row, const WlState *from, WlState to, const char *actor,
			   const char *role, Jsonb *evidence)
{
	Datum		args[10];
	char		nulls[10];
	bool		no_token;
	bool		no_attempt;

	/* a fenced start or completion wrote its event on the run row (store_fenced.c) */
	if (wl_store_event_carried(row, from, to))
		return;
	memset(nulls, ' ', sizeof(nulls));
	args[0] = CStringGetTextDatum(row->tenant_id);
	args[1] = Int64GetDatum(row->seq);
	if (from)
		args[2] = wl_catalog_state_datum(*from);
	else
		nulls[2] = 'n';
	args[3] = wl_catalog_state_datum(to);
	args[4] = CStringGetTextDatum(actor);
	args[5] = TimestampTzGetDatum(wl_now());
	args[6] = CStringGetTextDatum(role);
	evidence_args(evidence, &args[7], &args[8], &no_token, &args[9], &no_attempt);
	nulls[8] = no_token ? 'n' : ' ';
	nulls[9] = no_attempt ? 'n' : ' ';
	if (!wl_store_event_append(args, nulls))
		wl_store_run(P_EVENT, args, nulls, 0, SPI_OK_INSERT);
}

#define SM_COLS 28				/* the per-row arrays of P_SAVE_MANY */

/* save_many_columns fills the per-row arrays of P_SAVE_MANY (d: values, nl: nulls). */
static void
save_many_columns(WlRow **rows, int n, const WlState *from, Jsonb **evidence,
				  Datum **d, bool **nl)
{
	for (int c = 0; c < SM_COLS; c++)
	{
		d[c] = palloc0(sizeof(Datum) * n);
		nl[c] = palloc0(sizeof(bool) * n);
	}
	for (int i = 0; i < n; i++)
	{
		WlRow	   *row = rows[i];

		d[0][i] = CStringGetTextDatum(row->workload_id);
		d[1][i] = wl_catalog_state_datum(row->state);
		d[2][i] = TimestampTzGetDatum(row->state_entered_at);
		d[3][i] = TimestampTzGetDatum(row->next_attempt_at);
		d[4][i] = Int32GetDatum(row->attempt_count);
		d[5][i] = Int32GetDatum(row->retry_count);
		d[6][i] = Int64GetDatum(row->fencing_token);
		d[7][i] = Int32GetDatum(row->checkpoint_sequence);
		d[8][i] = row->claim_id ? CStringGetTextDatum(row->claim_id) : (Datum) 0;
		d[9][i] = row->claim_id ? CStringGetTextDatum(row->worker_id) : (Datum) 0;
		d[10][i] = TimestampTzGetDatum(row->lease_expires_at);
		nl[8][i] = nl[9][i] = row->claim_id == NULL;
		nl[10][i] = row->lease_expires_at == 0;
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
		d[18][i] = wl_catalog_state_datum(from[i]);
		evidence_args(evidence[i], &d[19][i], &d[25][i], &nl[25][i], &d[26][i], &nl[26][i]);
		d[20][i] = CStringGetTextDatum(row->tenant_id);
		d[21][i] = Int64GetDatum(row->seq);
		d[22][i] = TimestampTzGetDatum(row->claimed_at);
		nl[22][i] = row->claimed_at == 0;
		d[23][i] = TimestampTzGetDatum(row->started_at);
		nl[23][i] = row->started_at == 0;
		d[24][i] = row->result_id ? CStringGetTextDatum(row->result_id) : (Datum) 0;
		nl[24][i] = row->result_id == NULL;
		d[27][i] = BoolGetDatum(row->in_run);
	}
}

/*
 * wl_store_save_many saves n locked rows that have moved from from[i] to
 * `to` and appends their events (evidence[i], in array order), in one
 * statement; then keeps their queue rows in step.
 */
void
wl_store_save_many(WlRow **rows, int n, const WlState *from, WlState to, const char *actor,
				   const char *role, Jsonb **evidence)
{
	Datum	   *d[SM_COLS];
	bool	   *nl[SM_COLS];
	static const Oid types[SM_COLS] = {TEXTOID, InvalidOid, TIMESTAMPTZOID, TIMESTAMPTZOID,
		INT4OID, INT4OID, INT8OID, INT4OID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
		BOOLOID, JSONBOID, BOOLOID, JSONBOID, TIMESTAMPTZOID, INT4OID, InvalidOid, JSONBOID,
	TEXTOID, INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, INT8OID, INT4OID, BOOLOID};
	/* the parameter (0-based) each per-row array is */
	static const int param[SM_COLS] = {0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 23, 24, 25, 26, 27, 28, 29, 30, 31};
	Datum		args[32];
	Oid			state_type = wl_catalog_state_type();
	SPITupleTable *t;

	save_many_columns(rows, n, from, evidence, d, nl);
	for (int c = 0; c < SM_COLS; c++)
		args[param[c]] = PointerGetDatum(wl_array_of(d[c], nl[c], n,
													 OidIsValid(types[c]) ? types[c] : state_type));
	args[2] = TimestampTzGetDatum(wl_now());
	args[20] = wl_catalog_state_datum(to);
	args[21] = CStringGetTextDatum(actor);
	args[22] = CStringGetTextDatum(role);
	t = wl_store_run(P_SAVE_MANY, args, NULL, 1, SPI_OK_SELECT);
	if (wl_store_int(t, 0, 1) != n)
		elog(ERROR, "workloads vanished while locked");
	SPI_freetuptable(t);
	for (int i = 0; i < n; i++)
		queue_sync(rows[i]);
}

/*
 * wl_store_row_put inserts the workload row, created at now and already in
 * the state first (and the deadline) its creation leads to; row is the row
 * as inserted, its queue row in step.
 */
void
wl_store_row_put(const WlSpec *spec, const char *workload_id, int64 seq, TimestampTz now,
				 const WlRow *first, WlRow *row)
{
	Datum		a[7 + WL_TIMEOUT_COUNT + 6];
	char		nulls[7 + WL_TIMEOUT_COUNT + 6];

	int			i = 0;
	SPITupleTable *t;

	memset(nulls, ' ', sizeof(nulls));
	a[0] = CStringGetTextDatum(workload_id);
	a[1] = CStringGetTextDatum(spec->tenant_id);
	a[2] = CStringGetTextDatum(spec->application_id);
	a[3] = Int32GetDatum(spec->priority);
	a[4] = PointerGetDatum(spec->capability_snapshot);
	a[5] = BoolGetDatum(spec->ndeps > 0);
	a[6] = TimestampTzGetDatum(now);
#define WL_TIMEOUT_ARG(f) \
	a[7 + i] = Int64GetDatum(spec->timeout_ms.f); \
	nulls[7 + i] = spec->timeout_set[i] ? ' ' : 'n'; \
	i++;
	WL_TIMEOUTS(WL_TIMEOUT_ARG)
#undef WL_TIMEOUT_ARG
	a[7 + WL_TIMEOUT_COUNT] = BoolGetDatum(JsonContainerSize(&spec->completion_criteria->root) > 0);
	a[8 + WL_TIMEOUT_COUNT] = Int64GetDatum(seq);
	a[9 + WL_TIMEOUT_COUNT] = wl_catalog_state_datum(first->state);
	a[10 + WL_TIMEOUT_COUNT] = wl_store_ts_arg(first->has_deadline ? first->deadline_at : 0,
										  &nulls[10 + WL_TIMEOUT_COUNT]);
	a[11 + WL_TIMEOUT_COUNT] = TimestampTzGetDatum(first->next_attempt_at);
	a[12 + WL_TIMEOUT_COUNT] = wl_store_ts_arg(first->authority_expires_at,
											   &nulls[12 + WL_TIMEOUT_COUNT]);
	if (wl_store_citus())
	{
		t = wl_store_run(P_ROW_PUT, a, nulls, 1, SPI_OK_INSERT_RETURNING);
		wl_store_row_read(t, 0, workload_id, row);
	}
	else
	{
		bool		isnull;

		t = wl_store_run(P_ROW_PUT_AT, a, nulls, 1, SPI_OK_INSERT_RETURNING);
		wl_store_row_read(t, 0, workload_id, row);
		/* where the row and its spec were written: its queue row's hints for the claim */
		ItemPointerCopy((ItemPointer) DatumGetPointer(SPI_getbinval(t->vals[0], t->tupdesc, t->tupdesc->natts,
														  &isnull)), &row->row_at);
		wl_store_memo_spec_at(seq, &row->spec_at);
	}
	wl_store_tenant_remember(workload_id, row->tenant_id);
	SPI_freetuptable(t);
	row->queued = WL_QUEUED_NONE;	/* a new row has no queue row yet */
	queue_sync(row);
}
