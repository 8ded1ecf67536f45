/*
 * waits.c: durable waits (SPEC section 7): workload_wait, workload_signal,
 * workload_approve, and what the tick does when a wait's deadline comes.
 * A wait releases the claim; a wake resolves the wait (keeping its payload
 * or decision for workload_resume) and puts the workload back to READY.
 * Every state change goes through wl_store_transition.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "clock.h"
#include "errors.h"
#include "fence.h"
#include "payload.h"
#include "retry.h"
#include "store.h"
#include "waits.h"

/* The open wait of a workload, as P_WAIT_OPEN reads it. */
typedef struct WlWait
{
	int			number;
	char	   *kind;
	char	   *wake_key;
	TimestampTz deadline;
} WlWait;

/* A wake: how a wait is answered. */
typedef struct WlWake
{
	const char *kind;			/* the kind of wait it answers */
	const char *wake_key;		/* NULL: any key */
	const char *outcome;		/* signalled, approved, rejected, scheduled */
	Jsonb	   *payload;
	bool		has_decision;
	bool		approved;
	const char *approver;
	const char *note;
	const char *actor;
} WlWake;

static bool
open_wait(const char *workload_id, WlWait *w)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;

	args[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_WAIT_OPEN, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	w->number = (int) wl_store_int(t, 0, 1);
	w->kind = wl_store_text(t, 0, 2);
	w->wake_key = wl_store_text(t, 0, 3);
	w->deadline = wl_store_ts(t, 0, 4, &isnull);
	return true;
}

/* resolve records how wait number of the locked row ended. */
static void
resolve(const WlRow *row, int number, const WlWake *k)
{
	Datum		a[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', 'n', 'n', 'n', 'n'};

	a[0] = CStringGetTextDatum(row->workload_id);
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
	wl_store_run(P_WAIT_RESOLVE, a, nulls, 0, SPI_OK_UPDATE);
}

/*
 * wake answers the open wait of a locked row and moves it to READY, due
 * now.  It does nothing and returns false unless the row is WAITING on a
 * wait of k's kind (and key) whose deadline has not passed: a cancelled
 * workload, a late wake or a wake of the wrong kind changes nothing.  A
 * schedule wait is the opposite: it wakes only once its deadline has come.
 */
static bool
wake(WlRow *row, const WlWake *k)
{
	WlWait		w;
	bool		schedule = strcmp(k->kind, "schedule") == 0;
	WlJson		b;

	if (row->state != WL_WAITING || !open_wait(row->workload_id, &w))
		return false;
	if (strcmp(w.kind, k->kind) != 0)
		return false;
	if (k->wake_key && (w.wake_key == NULL || strcmp(w.wake_key, k->wake_key) != 0))
		return false;
	if (schedule != (w.deadline <= wl_now()))
		return false;
	resolve(row, w.number, k);
	wl_json_begin(&b);
	wl_json_str(&b, "cause", k->outcome);
	wl_json_str(&b, "kind", w.kind);
	wl_json_int(&b, "wait_number", w.number);
	if (w.wake_key)
		wl_json_str(&b, "wake_key", w.wake_key);
	if (k->approver)
		wl_json_str(&b, "approver", k->approver);
	row->next_attempt_at = wl_now();
	wl_store_transition(row, WL_READY, k->actor, wl_json_end(&b));
	return true;
}

/*
 * wl_wait_due acts on a locked WAITING row whose wait deadline has come: a
 * schedule wait wakes (READY); an event or approval wait expires: TIMED_OUT,
 * then READY if "timeout" is retried and attempts remain, else DEAD_LETTER.
 */
WlWaitDue
wl_wait_due(WlRow *row)
{
	WlWait		w;
	WlWake		k = {0};

	if (row->state != WL_WAITING || !open_wait(row->workload_id, &w) ||
		w.deadline > wl_now())
		return WL_WAIT_NONE;
	k.actor = "workload.tick";
	if (strcmp(w.kind, "schedule") == 0)
	{
		k.kind = "schedule";
		k.outcome = "scheduled";
		return wake(row, &k) ? WL_WAIT_WOKEN : WL_WAIT_NONE;
	}
	k.outcome = "expired";
	resolve(row, w.number, &k);
	wl_retry_timeout(row, "workload.tick", "wait_expired", false);
	return WL_WAIT_EXPIRED;
}

/* wl_wait_last: the latest wait of a workload that has ended, as a document, or NULL. */
Jsonb *
wl_wait_last(const char *workload_id)
{
	return wl_store_one_jsonb(P_WAIT_LAST, workload_id, 1);
}

static const char *const wait_kinds[] = {"event", "schedule", "human_approval", NULL};

/*
 * workload_wait(workload_id, claim_id, worker_id, fencing_token, kind,
 * wake_key, deadline) -> WAITING.  Releases the claim and ends the attempt
 * (outcome WAITING; it does not count against max_attempts).  kind is
 * event (wake_key required), schedule (wakes at deadline) or
 * human_approval; deadline must be in the future.  Refuses with
 * WORKLOAD_INVALID, WORKLOAD_NOT_FOUND, the fence codes, and
 * WORKLOAD_TRANSITION_DENIED outside RUNNING and CHECKPOINTED.
 */
PG_FUNCTION_INFO_V1(workload_wait);
Datum
workload_wait(PG_FUNCTION_ARGS)
{
	WlFence		fence;
	WlRow		row;
	char	   *kind;
	char	   *key = NULL;
	TimestampTz deadline;
	bool		known = false;
	Datum		a[10];
	char		nulls[10];
	WlJson		b;
	Jsonb	   *evidence;

	wl_fence_from_args(fcinfo, 0, &fence);
	if (PG_ARGISNULL(4) || PG_ARGISNULL(6))
		wl_refuse(WL_E_INVALID, errdetail("kind and deadline must not be NULL."));
	kind = wl_payload_id_arg(PG_GETARG_TEXT_PP(4), "kind");
	for (int i = 0; wait_kinds[i]; i++)
		known = known || strcmp(kind, wait_kinds[i]) == 0;
	if (!known)
		wl_refuse(WL_E_INVALID, errdetail("kind must be \"event\", \"schedule\" or \"human_approval\"."));
	if (!PG_ARGISNULL(5))
		key = wl_payload_id_arg(PG_GETARG_TEXT_PP(5), "wake_key");
	if (key == NULL && strcmp(kind, "event") == 0)
		wl_refuse(WL_E_INVALID, errdetail("An event wait needs a wake_key."));
	deadline = PG_GETARG_TIMESTAMPTZ(6);
	if (TIMESTAMP_NOT_FINITE(deadline) || deadline <= wl_now())
		wl_refuse(WL_E_INVALID, errdetail("deadline must be a time in the future."));

	SPI_connect();
	wl_fence_lock(&fence, &row);
	wl_state_require(row.workload_id, row.state, WL_WAITING);
	row.wait_count++;
	memset(nulls, ' ', sizeof(nulls));
	a[0] = CStringGetTextDatum(row.workload_id);
	a[1] = Int32GetDatum(row.wait_count);
	a[2] = CStringGetTextDatum(row.tenant_id);
	a[3] = CStringGetTextDatum(row.application_id);
	a[4] = CStringGetTextDatum(kind);
	a[5] = key ? CStringGetTextDatum(key) : (Datum) 0;
	nulls[5] = key ? ' ' : 'n';
	a[6] = TimestampTzGetDatum(deadline);
	a[7] = Int32GetDatum(row.attempt_count);
	a[8] = Int64GetDatum(row.fencing_token);
	a[9] = TimestampTzGetDatum(wl_now());
	wl_store_run(P_WAIT_PUT, a, nulls, 0, SPI_OK_INSERT);

	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_int(&b, "wait_number", row.wait_count);
	wl_json_str(&b, "kind", kind);
	wl_json_str(&b, "wake_key", key);
	wl_json_ts(&b, "deadline", deadline);
	evidence = wl_json_end(&b);
	wl_store_attempt_close(&row, "WAITING", NULL, NULL);
	wl_fence_release(&row);
	row.wait_until = deadline;
	wl_store_transition(&row, WL_WAITING, fence.worker_id, evidence);
	SPI_finish();
	PG_RETURN_DATUM(wl_store_state_datum(row.state));
}

/*
 * workload_signal(tenant_id, application_id, wake_key, payload) -> how many
 * event waits on wake_key it woke.  Each goes to READY with the payload kept
 * for workload_resume.  Waits whose deadline has passed, and workloads no
 * longer WAITING (cancelled), are left alone.  Rows are locked in
 * workload_id order, so two signals never wait on each other in a cycle.
 */
PG_FUNCTION_INFO_V1(workload_signal);
Datum
workload_signal(PG_FUNCTION_ARGS)
{
	char	   *tenant;
	char	   *app;
	WlWake		k = {0};
	Datum		args[4];
	SPITupleTable *t;
	uint64		n;
	char	  **ids;
	int32		woken = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		wl_refuse(WL_E_INVALID,
				  errdetail("tenant_id, application_id, wake_key and payload must not be NULL."));
	tenant = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "tenant_id");
	app = wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "application_id");
	k.kind = "event";
	k.wake_key = wl_payload_id_arg(PG_GETARG_TEXT_PP(2), "wake_key");
	k.payload = PG_GETARG_JSONB_P(3);
	wl_payload_check(k.payload, "payload", WL_MAX_PAYLOAD_BYTES);
	k.outcome = "signalled";
	k.actor = "workload.signal";

	SPI_connect();
	wl_authz_require_member(tenant, app);
	args[0] = CStringGetTextDatum(tenant);
	args[1] = CStringGetTextDatum(app);
	args[2] = CStringGetTextDatum(k.wake_key);
	args[3] = TimestampTzGetDatum(wl_now());
	t = wl_store_run(P_WAIT_KEYED, args, NULL, 0, SPI_OK_SELECT);
	n = SPI_processed;
	ids = palloc(sizeof(char *) * (n + 1));
	for (uint64 i = 0; i < n; i++)
		ids[i] = wl_store_text(t, (int) i, 1);
	for (uint64 i = 0; i < n; i++)
	{
		WlRow		row;

		if (wl_store_lock(ids[i], &row) && wake(&row, &k))
			woken++;
	}
	SPI_finish();
	PG_RETURN_INT32(woken);
}

/*
 * workload_approve(workload_id, approver, approved, note) -> whether it
 * answered a human_approval wait.  Either decision wakes the workload
 * (READY); the decision, approver and note reach the run through
 * workload_resume.  false, changing nothing, when the workload is not
 * waiting for an approval (cancelled, expired, never asked).  note may be
 * NULL.
 */
PG_FUNCTION_INFO_V1(workload_approve);
Datum
workload_approve(PG_FUNCTION_ARGS)
{
	char	   *id;
	WlWake		k = {0};
	WlRow		row;
	bool		done;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		wl_refuse(WL_E_INVALID, errdetail("workload_id, approver and approved must not be NULL."));
	id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "workload_id");
	k.kind = "human_approval";
	k.approver = wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "approver");
	k.has_decision = true;
	k.approved = PG_GETARG_BOOL(2);
	k.outcome = k.approved ? "approved" : "rejected";
	k.actor = k.approver;
	if (!PG_ARGISNULL(3))
	{
		k.note = text_to_cstring(PG_GETARG_TEXT_PP(3));
		wl_payload_check_text(k.note, "note", WL_MAX_ERROR_LEN);
	}

	SPI_connect();
	if (!wl_store_lock(id, &row))
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	done = wake(&row, &k);
	SPI_finish();
	PG_RETURN_BOOL(done);
}
