/*
 * api_claim.c: the worker taking work: workload_claim, workload_claim_id,
 * workload_start, workload_heartbeat, workload_heartbeat_many.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "clock.h"
#include "compat.h"
#include "errors.h"
#include "fence.h"
#include "payload.h"
#include "store.h"

/* Result columns of P_CLAIM_*: 1..9 are the SQL result, then tenant, application. */
#define CLAIM_OUT_COLS 9

/*
 * emit_claims copies the claim statement's rows (columns 1..9 are the SQL
 * result) into the set the function returns.  The statement itself has
 * already opened the attempts and appended the events.
 */
static void
emit_claims(ReturnSetInfo *rsinfo, SPITupleTable *t, uint64 n)
{
	Datum		values[CLAIM_OUT_COLS];
	bool		nulls[CLAIM_OUT_COLS];

	for (uint64 r = 0; r < n; r++)
	{
		for (int c = 0; c < CLAIM_OUT_COLS; c++)
			values[c] = wl_store_datum(t, (int) r, c + 1, &nulls[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

static void
claim_args(Datum *args, const char *tenant, const char *app, ArrayType *caps,
		   int max_items, const char *worker, Interval *lease, const char *id, bool start)
{
	args[0] = CStringGetTextDatum(tenant ? tenant : "");
	args[1] = CStringGetTextDatum(app ? app : "");
	args[2] = TimestampTzGetDatum(wl_now());
	args[3] = PointerGetDatum(caps);
	args[4] = Int32GetDatum(max_items);
	args[5] = CStringGetTextDatum(worker);
	args[6] = IntervalPGetDatum(lease);
	args[7] = CStringGetTextDatum(id ? id : "");
	args[8] = wl_store_state_datum(start ? WL_RUNNING : WL_CLAIMED);
	args[9] = BoolGetDatum(start);
	args[10] = wl_authz_caller_name();
	args[11] = CStringGetTextDatum(wl_state_event_type(WL_CLAIMED));
	args[12] = wl_store_state_datum(WL_READY);
	args[13] = wl_store_state_datum(WL_CLAIMED);
	args[14] = CStringGetTextDatum(wl_state_event_type(WL_RUNNING));
}

/*
 * workload_claim(worker_id, capabilities, tenant_id, application_id, lease,
 * max_items, start): claims up to max_items due READY workloads of one
 * tenant and application whose capabilities the worker holds and whose
 * dependencies are met, best first, skipping rows other claimers hold.
 */
PG_FUNCTION_INFO_V1(workload_claim);
Datum
workload_claim(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const names[] = {"worker_id", "capabilities", "tenant_id",
	"application_id", "lease", "max_items", "start"};
	char	   *worker;
	ArrayType  *caps;
	char	   *tenant;
	char	   *app;
	Interval   *lease;
	int			max_items;
	bool		start;
	Datum		args[15];
	SPITupleTable *t;

	for (int i = 0; i < lengthof(names); i++)
	{
		if (PG_ARGISNULL(i))
			wl_refuse(WL_E_INVALID, errdetail("%s must not be NULL.", names[i]));
	}
	worker = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "worker_id");
	caps = wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(1), "capabilities");
	tenant = wl_payload_id_arg(PG_GETARG_TEXT_PP(2), "tenant_id");
	app = wl_payload_id_arg(PG_GETARG_TEXT_PP(3), "application_id");
	lease = PG_GETARG_INTERVAL_P(4);
	(void) wl_fence_lease_until(lease, "lease");
	max_items = PG_GETARG_INT32(5);
	if (max_items < 1 || max_items > WL_MAX_BATCH)
		wl_refuse(WL_E_INVALID, errdetail("max_items must be from 1 to %d.", WL_MAX_BATCH));
	start = PG_GETARG_BOOL(6);

	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	wl_authz_require_member(tenant, app);
	/* The claim statement moves READY rows to CLAIMED (and on to RUNNING): the table must allow it. */
	wl_state_require("(claim)", WL_READY, WL_CLAIMED);
	if (start)
		wl_state_require("(claim)", WL_CLAIMED, WL_RUNNING);
	claim_args(args, tenant, app, caps, max_items, worker, lease, NULL, start);
	t = wl_store_run(P_CLAIM_MANY, args, NULL, 0, SPI_OK_SELECT);
	emit_claims(rsinfo, t, SPI_processed);
	SPI_finish();
	return (Datum) 0;
}

/* deps_unmet counts the dependencies of a workload not in their required state. */
static int64
deps_unmet(const char *workload_id)
{
	Datum		args[1];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_DEPS_UNMET, args, NULL, 1, SPI_OK_SELECT);
	return wl_store_int(t, 0, 1);
}

/*
 * workload_claim_id(id, worker_id, capabilities, lease): claims one named
 * workload, waiting for its row lock.  WORKLOAD_NOT_FOUND, WORKLOAD_NOT_READY
 * (not READY, not yet due, dependencies unmet), WORKLOAD_CAPABILITY_DENIED.
 */
PG_FUNCTION_INFO_V1(workload_claim_id);
Datum
workload_claim_id(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const names[] = {"id", "worker_id", "capabilities", "lease"};
	char	   *id;
	char	   *worker;
	ArrayType  *caps;
	Interval   *lease;
	WlRow		row;
	Datum		args[15];
	SPITupleTable *t;
	int			n;
	char	  **needed;

	for (int i = 0; i < lengthof(names); i++)
	{
		if (PG_ARGISNULL(i))
			wl_refuse(WL_E_INVALID, errdetail("%s must not be NULL.", names[i]));
	}
	id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "id");
	worker = wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "worker_id");
	caps = wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(2), "capabilities");
	lease = PG_GETARG_INTERVAL_P(3);
	(void) wl_fence_lease_until(lease, "lease");

	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	if (!wl_store_lock(id, &row))
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	if (row.state != WL_READY)
		wl_refuse(WL_E_NOT_READY, errdetail("Workload \"%s\" is %s.", id, wl_state_name(row.state)));
	if (row.next_attempt_at > wl_now())
		wl_refuse(WL_E_NOT_READY, errdetail("Workload \"%s\" is not due until %s.", id,
											timestamptz_to_str(row.next_attempt_at)));
	if (deps_unmet(id) > 0)
		wl_refuse(WL_E_NOT_READY, errdetail("Workload \"%s\" has unmet dependencies.", id));
	needed = wl_payload_array_items(row.capability_snapshot, &n);
	for (int i = 0; i < n; i++)
	{
		if (!wl_payload_array_contains(caps, needed[i]))
			wl_refuse(WL_E_CAPABILITY_DENIED,
					  errdetail("Workload \"%s\" requires capability \"%s\".", id, needed[i]));
	}
	wl_state_require(id, row.state, WL_CLAIMED);
	claim_args(args, NULL, NULL, caps, 1, worker, lease, id, false);
	t = wl_store_run(P_CLAIM_ONE, args, NULL, 0, SPI_OK_SELECT);
	emit_claims(rsinfo, t, SPI_processed);
	SPI_finish();
	return (Datum) 0;
}

/* workload_start(workload_id, claim_id, worker_id, fencing_token): CLAIMED -> RUNNING. */
PG_FUNCTION_INFO_V1(workload_start);
Datum
workload_start(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;

	wl_fence_from_args(fcinfo, 0, &fence);
	SPI_connect();
	wl_fence_lock(&fence, &row);
	wl_store_transition(&row, WL_RUNNING, fence.worker_id, wl_fence_evidence(&row, NULL));
	wl_store_attempt_start(&row);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * heartbeat_apply extends the lease of a locked row whose fence holds, keeps
 * progress when given, saves it and returns the heartbeat's answer.
 */
static Jsonb *
heartbeat_apply(WlRow *row, TimestampTz until, Jsonb *progress)
{
	WlJson		b;

	row->lease_expires_at = until;
	row->has_heartbeat = true;
	row->last_heartbeat_at = wl_now();
	if (progress)
	{
		row->progress = progress;
		row->progress_changed = true;
	}
	wl_store_save(row);

	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row->workload_id);
	wl_json_str(&b, "state", wl_state_name(row->state));
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_ts(&b, "lease_expires_at", until);
	wl_json_bool(&b, "cancellation_requested", row->state == WL_CANCELLATION_REQUESTED);
	return wl_json_end(&b);
}

/*
 * workload_heartbeat(workload_id, claim_id, worker_id, fencing_token, extend,
 * progress): the lease now runs until now + extend; progress, when given,
 * is kept as the workload's latest.  The answer says whether cancellation
 * was requested.
 */
PG_FUNCTION_INFO_V1(workload_heartbeat);
Datum
workload_heartbeat(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	TimestampTz until;
	Jsonb	   *progress = NULL;
	Jsonb	   *answer;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4))
		wl_refuse(WL_E_INVALID, errdetail("extend must not be NULL."));
	until = wl_fence_lease_until(PG_GETARG_INTERVAL_P(4), "extend");
	if (!PG_ARGISNULL(5))
	{
		progress = PG_GETARG_JSONB_P(5);
		wl_payload_check(progress, "progress", WL_MAX_PROGRESS_BYTES);
	}

	SPI_connect();
	wl_fence_lock(&fence, &row);
	answer = wl_store_transfer(heartbeat_apply(&row, until, progress));
	SPI_finish();
	PG_RETURN_JSONB_P(answer);
}

/* One workload_heartbeat_many item, and what became of it. */
typedef struct WlBeat
{
	WlFence		fence;
	Jsonb	   *progress;
	WlErr		err;
	char	   *detail;
	int			row;			/* index into the locked rows */
} WlBeat;

static const char *const beat_fields[] = {
	"workload_id", "claim_id", "fencing_token", "progress", NULL
};

/* parse_beat reads one item; a malformed one is WL_E_INVALID with b->detail. */
static WlErr
parse_beat(JsonbValue *item, const char *worker_id, WlBeat *b)
{
	JsonbContainer *o;
	JsonbValue *v;

	b->fence.worker_id = (char *) worker_id;
	if (item->type != jbvBinary || !JsonContainerIsObject(item->val.binary.data))
		return (b->detail = "Each item must be an object.", WL_E_INVALID);
	o = item->val.binary.data;
	b->fence.workload_id = wl_json_get_text(o, "workload_id");
	if (!wl_json_keys_within(o, beat_fields, &b->detail))
		return WL_E_INVALID;
	b->fence.claim_id = wl_json_get_text(o, "claim_id");
	if (!b->fence.workload_id || !b->fence.claim_id ||
		!b->fence.workload_id[0] || !b->fence.claim_id[0])
		return (b->detail = "workload_id and claim_id must be non-blank strings.", WL_E_INVALID);
	if (!wl_json_get_int(o, "fencing_token", &b->fence.fencing_token))
		return (b->detail = "fencing_token must be an integer.", WL_E_INVALID);
	if ((v = wl_json_get(o, "progress")) != NULL && v->type != jbvNull)
	{
		b->progress = JsonbValueToJsonb(v);
		return wl_payload_verdict(b->progress, "progress", WL_MAX_PROGRESS_BYTES, &b->detail);
	}
	return WL_E_COUNT;
}

static int
beat_cmp(const void *a, const void *b)
{
	const WlBeat *x = a;
	const WlBeat *y = b;

	/* items without an id first; then by id, so rows are locked in one order */
	if (x->fence.workload_id == NULL || y->fence.workload_id == NULL)
		return (x->fence.workload_id != NULL) - (y->fence.workload_id != NULL);
	return strcmp(x->fence.workload_id, y->fence.workload_id);
}

/*
 * workload_heartbeat_many(worker_id, items jsonb, extend) -> TABLE(workload_id,
 * outcome, code, answer): workload_heartbeat for every item (workload_id,
 * claim_id, fencing_token, optional progress) of one worker, in this one
 * transaction.  Each is decided on its own: a refused item ("refused", its
 * code) changes nothing and the others are still extended ("extended", the
 * answer workload_heartbeat gives).  The rows are locked with one statement,
 * in workload_id order.
 */
PG_FUNCTION_INFO_V1(workload_heartbeat_many);
Datum
workload_heartbeat_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *worker_id;
	Jsonb	   *items;
	TimestampTz until;
	int			n;
	int			k = 0;
	int			m = 0;
	WlBeat	   *beats;
	char	  **ids;
	WlRow	   *rows;
	bool	   *found;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		wl_refuse(WL_E_INVALID, errdetail("worker_id, items and extend must not be NULL."));
	worker_id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "worker_id");
	items = PG_GETARG_JSONB_P(1);
	until = wl_fence_lease_until(PG_GETARG_INTERVAL_P(2), "extend");
	n = wl_payload_batch_count(items);

	beats = palloc0(sizeof(WlBeat) * (n + 1));
	it = JsonbIteratorInit(&items->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
		{
			beats[k].err = parse_beat(&v, worker_id, &beats[k]);
			k++;
		}
	}
	qsort(beats, n, sizeof(WlBeat), beat_cmp);
	/* the distinct workloads, in the order the items now have */
	ids = palloc(sizeof(char *) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		if (beats[i].err != WL_E_COUNT)
			continue;
		if (m == 0 || strcmp(ids[m - 1], beats[i].fence.workload_id) != 0)
			ids[m++] = beats[i].fence.workload_id;
		beats[i].row = m - 1;
	}

	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	rows = palloc0(sizeof(WlRow) * (m + 1));
	found = palloc0(sizeof(bool) * (m + 1));
	if (m > 0)
		wl_store_lock_many(ids, m, rows, found);
	for (int i = 0; i < n; i++)
	{
		WlBeat	   *b = &beats[i];
		Jsonb	   *answer = NULL;

		if (b->err == WL_E_COUNT && !found[b->row])
		{
			b->err = WL_E_NOT_FOUND;
			b->detail = psprintf("No workload \"%s\".", b->fence.workload_id);
		}
		if (b->err == WL_E_COUNT)
			b->err = wl_fence_verdict(&rows[b->row], &b->fence, &b->detail);
		if (b->err == WL_E_COUNT)
			answer = heartbeat_apply(&rows[b->row], until, b->progress);
		wl_report_item(rsinfo, b->fence.workload_id, "extended", b->err, JsonbPGetDatum(answer));
	}
	SPI_finish();
	return (Datum) 0;
}
