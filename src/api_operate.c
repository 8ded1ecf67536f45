/*
 * api_operate.c: the client's and operator's side: workload_cancel,
 * workload_retry, workload_timeout, workload_recover_expired.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "compat.h"
#include "errors.h"
#include "fence.h"
#include "payload.h"
#include "retry.h"
#include "store.h"
#include "tick.h"

#define WL_RECOVER_BATCH 100

/* locked_for_actor reads (workload_id, actor) and locks the workload. */
static void
locked_for_actor(FunctionCallInfo fcinfo, WlRow *row, char **actor)
{
	char	   *id;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		wl_refuse(WL_E_INVALID, errdetail("workload_id and actor must not be NULL."));
	id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "workload_id");
	*actor = wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "actor");
	if (!wl_store_lock(id, row))
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
}

static Jsonb *
actor_evidence(const char *cause, const char *actor)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_str(&b, "cause", cause);
	wl_json_str(&b, "requested_by", actor);
	return wl_json_end(&b);
}

/*
 * workload_cancel(workload_id, actor) -> the state it ends in.  A workload a
 * worker holds moves to CANCELLATION_REQUESTED (the worker confirms); one
 * already there is left as it is; any other moves to CANCELLED if the table
 * allows it (final states: WORKLOAD_TRANSITION_DENIED).
 */
PG_FUNCTION_INFO_V1(workload_cancel);
Datum
workload_cancel(PG_FUNCTION_ARGS)
{
	WlRow		row;
	char	   *actor;

	SPI_connect();
	locked_for_actor(fcinfo, &row, &actor);
	if (row.state == WL_CLAIMED || row.state == WL_RUNNING || row.state == WL_CHECKPOINTED)
		wl_store_transition(&row, WL_CANCELLATION_REQUESTED, actor,
							actor_evidence("cancel_requested", actor));
	else if (row.state != WL_CANCELLATION_REQUESTED)
		wl_store_transition(&row, WL_CANCELLED, actor, actor_evidence("cancelled", actor));
	SPI_finish();
	PG_RETURN_DATUM(wl_store_state_datum(row.state));
}

/*
 * workload_retry(workload_id, actor): FAILED, TIMED_OUT or DEAD_LETTER ->
 * READY, due now.  Any other state is WORKLOAD_TRANSITION_DENIED.
 */
PG_FUNCTION_INFO_V1(workload_retry);
Datum
workload_retry(PG_FUNCTION_ARGS)
{
	WlRow		row;
	char	   *actor;

	SPI_connect();
	locked_for_actor(fcinfo, &row, &actor);
	if (row.state != WL_FAILED && row.state != WL_TIMED_OUT && row.state != WL_DEAD_LETTER)
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" is %s; only FAILED, TIMED_OUT and DEAD_LETTER workloads are retried.",
							row.workload_id, wl_state_name(row.state)));
	row.next_attempt_at = wl_now();
	wl_store_transition(&row, WL_READY, actor, actor_evidence("manual_retry", actor));
	SPI_finish();
	PG_RETURN_DATUM(wl_store_state_datum(row.state));
}

/*
 * workload_timeout(workload_id, actor) -> the state it ends in: TIMED_OUT,
 * then READY if "timeout" is in retry_on and attempts remain, else DEAD_LETTER.
 */
PG_FUNCTION_INFO_V1(workload_timeout);
Datum
workload_timeout(PG_FUNCTION_ARGS)
{
	WlRow		row;
	char	   *actor;
	WlState		end;

	SPI_connect();
	locked_for_actor(fcinfo, &row, &actor);
	end = wl_retry_timeout(&row, actor, "timeout", false);
	SPI_finish();
	PG_RETURN_DATUM(wl_store_state_datum(end));
}

/*
 * recover_one: the attempt of a workload whose lease expired is
 * WORKER_LOST; a requested cancellation completes; anything else goes
 * through RECOVERING back to READY (with backoff) while attempts remain,
 * else to DEAD_LETTER.  The caller holds the row lock.
 */
static void
recover_one(WlRow *row)
{
	Jsonb	   *evidence = wl_fence_evidence(row, "lease_expired");

	wl_store_attempt_close(row, "WORKER_LOST", "worker_lost", NULL);
	wl_fence_release(row);
	if (row->state == WL_CANCELLATION_REQUESTED)
	{
		wl_store_transition(row, WL_CANCELLED, "workload.recovery", evidence);
		return;
	}
	wl_store_transition(row, WL_RECOVERING, "workload.recovery", evidence);
	wl_retry_or_dead_letter(row, NULL, "workload.recovery");
}

/*
 * wl_recover_expired recovers every workload whose lease expired before now,
 * in batches; rows another transaction holds are skipped (they are being
 * written right now, and the next pass sees them).  Calls emit for each id.
 * Stops after limit workloads (0: no limit); *more says whether it stopped
 * with some left.
 */
uint64
wl_recover_expired(void (*emit) (const char *id, void *arg), void *arg,
				   uint64 limit, bool *more)
{
	uint64		total = 0;

	if (more)
		*more = false;
	for (;;)
	{
		Datum		args[2];
		SPITupleTable *t;
		uint64		n;
		char	  **ids;

		if (limit > 0 && total >= limit)
		{
			if (more)
				*more = true;
			break;
		}
		args[0] = TimestampTzGetDatum(wl_now());
		args[1] = Int32GetDatum(limit > 0 ? (int) Min(WL_RECOVER_BATCH, limit - total) : WL_RECOVER_BATCH);
		t = wl_store_run(P_EXPIRED, args, NULL, 0, SPI_OK_SELECT);
		n = SPI_processed;
		if (n == 0)
			break;
		ids = palloc(sizeof(char *) * n);
		for (uint64 i = 0; i < n; i++)
			ids[i] = wl_store_text(t, (int) i, 1);
		for (uint64 i = 0; i < n; i++)
		{
			WlRow		row;

			if (!wl_store_lock(ids[i], &row) || row.claim_id == NULL ||
				row.lease_expires_at > wl_now())
				continue;
			recover_one(&row);
			if (emit)
				emit(ids[i], arg);
			total++;
		}
	}
	return total;
}

static void
emit_id(const char *id, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[1];
	bool		nulls[1] = {false};

	values[0] = CStringGetTextDatum(id);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* workload_recover_expired() -> the ids of the workloads it recovered. */
PG_FUNCTION_INFO_V1(workload_recover_expired);
Datum
workload_recover_expired(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	SPI_connect();
	wl_recover_expired(emit_id, rsinfo, 0, NULL);
	SPI_finish();
	return (Datum) 0;
}

#define WL_MAX_PURGE_BATCH 100000

/*
 * workload_purge(older_than, batch_size, include_dead_letter) -> how many it
 * deleted: one bounded batch of SUCCEEDED and CANCELLED (and, when asked,
 * DEAD_LETTER) workloads last changed before now - older_than, with their
 * attempts, checkpoints, results, events and dependency rows.  Rows a
 * worker or client holds are skipped, so it is safe beside them; call it
 * until it returns 0.
 */
PG_FUNCTION_INFO_V1(workload_purge);
Datum
workload_purge(PG_FUNCTION_ARGS)
{
	Interval   *older;
	int			batch;
	Datum		args[3];
	uint64		n;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		wl_refuse(WL_E_INVALID,
				  errdetail("older_than, batch_size and include_dead_letter must not be NULL."));
	older = PG_GETARG_INTERVAL_P(0);
	batch = PG_GETARG_INT32(1);
	if (batch < 1 || batch > WL_MAX_PURGE_BATCH)
		wl_refuse(WL_E_INVALID, errdetail("batch_size must be from 1 to %d.", WL_MAX_PURGE_BATCH));
	if (older->month < 0 || older->day < 0 || older->time < 0)
		wl_refuse(WL_E_INVALID, errdetail("older_than must not be negative."));
	args[0] = DirectFunctionCall2(timestamptz_mi_interval, TimestampTzGetDatum(wl_now()),
								  IntervalPGetDatum(older));
	args[1] = Int32GetDatum(batch);
	args[2] = BoolGetDatum(PG_GETARG_BOOL(2));
	SPI_connect();
	wl_store_run(P_PURGE, args, NULL, 0, SPI_OK_DELETE);
	n = SPI_processed;
	SPI_finish();
	PG_RETURN_INT64((int64) n);
}
