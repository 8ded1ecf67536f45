/*
 * store_complete.c: a batch of completions as one conditional statement
 * (P_FENCED_COMPLETE_MANY): the rows whose fence holds move, with their
 * events and results, and the rest are left for the caller to
 * decide under the row lock.  Layer 2: it writes what it is told; which
 * move is asked for, and whether the table allows it, is complete.c's.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_ops.h"

#define FC_COLS 9				/* the per-item arrays of P_FENCED_COMPLETE_MANY */
/*
 * the smallest batch that runs without result-id probes first
 * (complete_many_first): its subtransaction costs about as much as one probe
 */
#define WL_COMPLETE_FIRST_MIN 2

/*
 * complete_many_direct is wl_store_fenced_complete_many on a single node,
 * without a plan, item by item: the row moved (store_fenced.c, which also
 * stores the result; its run row leaves runs_held_idx), its event appended
 * (store_direct.c).  probe: an item whose result id a result of its tenant
 * and application has is not done (left to the caller, which refuses that
 * item); without it, such an item is WORKLOAD_RESULT_DUPLICATE for the whole
 * call (runs_result_key's unique check).  -1 where it cannot run (nothing
 * done: the statement runs, at a higher cost).
 */
static int
complete_many_direct(WlFencedResult *items, int n, const char *worker_id,
					 const WlCaller *who, WlState from, WlState to, const char *tenant,
					 bool probe)
{
	int			got = 0;
	TimestampTz now = wl_now();
	WlAppender	events = {0};
	WlFencedRels *f = wl_store_fenced_open();

	if (f == NULL)
		return -1;
	for (int i = 0; i < n; i++)
	{
		WlFencedResult *it = &items[i];
		WlFencedCall call = {.kind = WL_FENCED_COMPLETE, .fence = it->fence, .who = who,
			.from = from, .to = to, .result_id = it->result_id, .result_free = probe,
		.output = it->output, .artifacts = it->artifacts, .schema_version = it->schema_version};
		WlNewResult r = {.row = &it->row, .fence = it->fence, .result_id = it->result_id,
		.output = it->output, .artifacts = it->artifacts, .schema_version = it->schema_version};
		WlJson		ev;

		it->done = false;
		if (wl_store_fenced_held(f, &call, tenant, &it->row) == 0)
			continue;
		it->row.state_entered_at = now;
		if (events.rel == NULL)
		{
			if (!wl_store_events_open(&events))
				elog(ERROR, "a batch's completions could not be appended");
			/* the events, written when the batch ends */
			if (n > 1)
				wl_store_appender_hold(&events);
		}
		/* the completion's event, unless its run row carries it (store_fenced.c) */
		if (!wl_store_event_carried(&it->row, &from, to))
		{
			wl_json_begin(&ev);
			wl_json_str(&ev, "result_id", it->result_id);
			wl_store_event_put_held(&events, it->row.tenant_id, it->row.seq, from, to, worker_id,
									who->role, now, wl_json_end(&ev), it->row.fencing_token,
									it->row.attempt_count);
		}
		it->doc = wl_store_result_put(&r);
		it->done = true;
		got++;
	}
	wl_store_fenced_close(f);
	wl_store_appender_close(&events);
	return got;
}

/* complete_many_first's arguments and answer, for wl_isolated */
typedef struct FirstRun
{
	WlFencedResult *items;
	int			n;
	const char *worker_id;
	const WlCaller *who;
	WlState		from;
	WlState		to;
	const char *tenant;
	int			got;
} FirstRun;

static void
first_run(void *arg)
{
	FirstRun   *r = arg;

	r->got = complete_many_direct(r->items, r->n, r->worker_id, r->who, r->from, r->to,
								  r->tenant, false);
}

/*
 * complete_many_first is complete_many_direct that asks no index whether an
 * item's result id is taken (a descent of runs_result_key before the insert
 * that makes the same descent and checks the same), in a subtransaction
 * (wl_isolated).
 * When one is taken, the insert's check refuses the whole batch: the
 * subtransaction is rolled back (nothing of the batch is left) and the batch
 * runs again with the probe, which leaves that item to the caller.  A batch
 * pays the subtransaction; a batch with a taken result id runs twice.
 */
static int
complete_many_first(WlFencedResult *items, int n, const char *worker_id,
					const WlCaller *who, WlState from, WlState to, const char *tenant)
{
	FirstRun	r = {items, n, worker_id, who, from, to, tenant, 0};
	ErrorData  *e = wl_isolated(first_run, &r);

	if (e == NULL)
		return r.got;
	if (e->sqlerrcode != wl_errors[WL_E_RESULT_DUPLICATE].sqlerrcode)
		ReThrowError(e);
	FreeErrorData(e);
	return complete_many_direct(items, n, worker_id, who, from, to, tenant, true);
}

/* the statement of wl_store_fenced_complete_many, in a subtransaction (wl_isolated) */
typedef struct StatementRun
{
	Datum	   *a;
	char	   *nulls;
	SPITupleTable *t;
	int			got;
} StatementRun;

static void
statement_run(void *arg)
{
	StatementRun *r = arg;

	r->t = wl_store_run_results(P_FENCED_COMPLETE_MANY, r->a, r->nulls, SPI_OK_SELECT, NULL);
	r->got = (int) SPI_processed;
}

/*
 * wl_store_fenced_complete_many moves each of the n items' workloads from
 * `from` to `to` when its fence holds for worker_id and the caller (the
 * claim's role, its lease, membership, the tenant the call named), it has
 * no completion criteria and its result id is free: in one statement, with
 * the events and the results (on a single node item by
 * item, complete_many_direct).  Sets items[i].done, and for those the row
 * and the result's document; returns how many.  A result id taken by another
 * workload between the check and the insert, where the check asked before
 * it was taken (a batch of one) or cannot see it (under REPEATABLE READ), is
 * WORKLOAD_RESULT_DUPLICATE (wl_store_run_results); the statement of a batch
 * of more, refused so, runs once more, and then sees it taken (READ
 * COMMITTED), as complete_many_first does.
 * Nothing is locked or written for an item that is not done.
 */
int
wl_store_fenced_complete_many(WlFencedResult *items, int n, const char *worker_id,
							  const WlCaller *who, WlState from, WlState to)
{
	static const Oid types[FC_COLS] = {TEXTOID, TEXTOID, INT8OID, TEXTOID, JSONBOID, TEXTOID,
	JSONOID, INT4OID, JSONBOID};
	Datum	   *d[FC_COLS];
	bool	   *no_artifacts = palloc(sizeof(bool) * (n + 1));
	char	  **hash = palloc(sizeof(char *) * (n + 1));
	Datum		a[17];
	char		nulls[17];
	const char *tenant = wl_store_call_tenant();
	TimestampTz now = wl_now();
	SPITupleTable *t;
	int			got;
	WlJson		ev;
	StatementRun run = {0};
	ErrorData  *e;

	got = n >= WL_COMPLETE_FIRST_MIN && wl_store_direct() ?
		complete_many_first(items, n, worker_id, who, from, to, tenant) :
		complete_many_direct(items, n, worker_id, who, from, to, tenant, true);
	if (got >= 0)
		return got;
	for (int c = 0; c < FC_COLS; c++)
		d[c] = palloc(sizeof(Datum) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		WlFencedResult *it = &items[i];

		it->done = false;
		hash[i] = wl_jsonb_hash(it->output);
		d[0][i] = CStringGetTextDatum(it->fence->workload_id);
		d[1][i] = CStringGetTextDatum(it->fence->claim_id);
		d[2][i] = Int64GetDatum(it->fence->fencing_token);
		d[3][i] = CStringGetTextDatum(it->result_id);
		d[4][i] = JsonbPGetDatum(it->output);
		d[5][i] = CStringGetTextDatum(hash[i]);
		no_artifacts[i] = ArrayGetNItems(ARR_NDIM(it->artifacts), ARR_DIMS(it->artifacts)) == 0;
		d[6][i] = no_artifacts[i] ? (Datum) 0 :
			DirectFunctionCall1(array_to_json, PointerGetDatum(it->artifacts));
		d[7][i] = Int32GetDatum(it->schema_version);
		wl_json_begin(&ev);
		wl_json_str(&ev, "result_id", it->result_id);
		d[8][i] = JsonbPGetDatum(wl_json_end(&ev));
	}
	for (int c = 0; c < FC_COLS; c++)
		a[c < 8 ? c : 16] = PointerGetDatum(wl_array_of(d[c], c == 6 ? no_artifacts : NULL, n,
														types[c]));
	a[8] = TimestampTzGetDatum(now);
	a[9] = wl_catalog_state_datum(to);
	a[10] = CStringGetTextDatum(worker_id);
	a[11] = wl_catalog_state_datum(from);
	a[12] = DirectFunctionCall1(namein, CStringGetDatum(who->role ? who->role : ""));
	a[13] = BoolGetDatum(who->superuser);
	a[14] = BoolGetDatum(who->admin);
	memset(nulls, ' ', sizeof(nulls));
	a[15] = tenant ? CStringGetTextDatum(tenant) : (Datum) 0;
	nulls[15] = tenant ? ' ' : 'n';
	nulls[16] = ' ';
	run.a = a;
	run.nulls = nulls;
	if (n < WL_COMPLETE_FIRST_MIN)
		statement_run(&run);
	else if ((e = wl_isolated(statement_run, &run)) != NULL)
	{
		if (e->sqlerrcode != wl_errors[WL_E_RESULT_DUPLICATE].sqlerrcode)
			ReThrowError(e);
		FreeErrorData(e);
		/*
		 * A result id another transaction took while the statement waited
		 * for it: asked again, that item's result id is seen taken and the
		 * item is left to the caller, which refuses it alone, as
		 * complete_many_first does (under REPEATABLE READ it cannot be
		 * seen: the batch is refused again, as there; a batch of one is
		 * refused whole, as workload_complete is)
		 */
		statement_run(&run);
	}
	t = run.t;
	got = run.got;
	for (int k = 0; k < got; k++)
	{
		int			i = (int) wl_store_int(t, k, 1) - 1;
		WlFencedResult *it = &items[i];
		WlNewResult r;

		memset(&it->row, 0, sizeof(WlRow));
		it->row.workload_id = (char *) it->fence->workload_id;
		it->row.tenant_id = wl_store_text(t, k, 2);
		it->row.application_id = wl_store_text(t, k, 3);
		it->row.seq = wl_store_int(t, k, 4);
		it->row.attempt_count = (int) wl_store_int(t, k, 5);
		it->row.fencing_token = it->fence->fencing_token;
		it->row.state = to;
		it->row.state_entered_at = now;
		it->row.result_id = (char *) it->result_id;
		r.row = &it->row;
		r.fence = it->fence;
		r.result_id = it->result_id;
		r.output = it->output;
		r.artifacts = it->artifacts;
		r.schema_version = it->schema_version;
		it->doc = wl_store_result_doc(&r, hash[i], now);
		it->done = true;
	}
	SPI_freetuptable(t);
	return got;
}
