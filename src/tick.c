/*
 * tick.c: workload_tick, one bounded maintenance pass (expired leases,
 * timeouts, due schedule waits, overdue waits), and the deadline rule that
 * tells it which rows to look at.  It chooses which transition to ask for;
 * wl_store_transition and the transition table decide whether it happens.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "errors.h"
#include "payload.h"
#include "retry.h"
#include "store.h"
#include "tick.h"
#include "waits.h"

#define WL_TICK_BATCH 100		/* rows locked per statement */
#define WL_TICK_LIMIT 1000		/* rows per kind of work per call */

#define MS(ms) ((int64) (ms) * INT64CONST(1000))

typedef struct WlTickCounts
{
	int64		recovered;
	int64		queue;
	int64		claim;
	int64		execution;
	int64		heartbeat;
	int64		overall;
	int64		woken;
	int64		expired;
	bool		more;
} WlTickCounts;

/* The states the overall timeout applies in: those that may move to TIMED_OUT. */
static bool
overall_applies(WlState s)
{
	return s == WL_READY || s == WL_CLAIMED || s == WL_RUNNING ||
		s == WL_CHECKPOINTED || s == WL_WAITING;
}

static void
sooner(bool *has, TimestampTz *d, TimestampTz candidate)
{
	if (!*has || candidate < *d)
		*d = candidate;
	*has = true;
}

/*
 * wl_tick_deadline sets row->deadline_at to the next moment the tick must
 * look at a row that has just moved from `from` to row->state: the sooner
 * of the overall timeout (since creation) and the new state's own limit:
 * READY queue_ms (from when it became due), CLAIMED claim_ms, RUNNING
 * execution_ms (a checkpoint keeps the running attempt's deadline), WAITING
 * the wait's deadline (row->wait_until).  Heartbeat silence is not a
 * deadline: a heartbeat must not move an indexed column.
 */
void
wl_tick_deadline(WlRow *row, WlState from)
{
	const WlTimeouts *t = &row->timeouts;
	bool		has = false;
	TimestampTz d = 0;

	if (row->state == WL_CHECKPOINTED &&
		(from == WL_RUNNING || from == WL_CHECKPOINTED))
		return;
	switch (row->state)
	{
		case WL_READY:
			if (t->queue_ms > 0)
				sooner(&has, &d, Max(row->state_entered_at, row->next_attempt_at) + MS(t->queue_ms));
			break;
		case WL_CLAIMED:
			if (t->claim_ms > 0)
				sooner(&has, &d, row->state_entered_at + MS(t->claim_ms));
			break;
		case WL_RUNNING:
		case WL_CHECKPOINTED:
			if (t->execution_ms > 0)
				sooner(&has, &d, row->state_entered_at + MS(t->execution_ms));
			break;
		case WL_WAITING:
			sooner(&has, &d, row->wait_until);
			break;
		default:
			break;
	}
	if (t->overall_ms > 0 && overall_applies(row->state))
		sooner(&has, &d, row->created_at + MS(t->overall_ms));
	row->has_deadline = has;
	row->deadline_at = d;
}

/*
 * workload.claim_deadline(created_at, claimed_at, claim_ms, execution_ms,
 * overall_ms, start): wl_tick_deadline for a row the claim statement moves
 * to CLAIMED (or, with start, on to RUNNING), so the rule keeps one home.
 * NULL when no timeout applies.
 */
PG_FUNCTION_INFO_V1(workload_claim_deadline);
Datum
workload_claim_deadline(PG_FUNCTION_ARGS)
{
	WlRow		row;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		wl_refuse(WL_E_INVALID, errdetail("created_at and claimed_at must not be NULL."));
	memset(&row, 0, sizeof(row));
	row.state = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5) ? WL_RUNNING : WL_CLAIMED;
	row.created_at = PG_GETARG_TIMESTAMPTZ(0);
	row.state_entered_at = PG_GETARG_TIMESTAMPTZ(1);
	row.timeouts.claim_ms = PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2);
	row.timeouts.execution_ms = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3);
	row.timeouts.overall_ms = PG_ARGISNULL(4) ? 0 : PG_GETARG_INT64(4);
	wl_tick_deadline(&row, row.state == WL_RUNNING ? WL_CLAIMED : WL_READY);
	if (!row.has_deadline)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(row.deadline_at);
}

/*
 * deadline_due acts on a locked row whose deadline has come: the overall
 * timeout first (final), else the state's own: queue (final), claim and
 * execution (retried under the policy), or the wait's deadline.  A row
 * whose deadline no longer means anything gets it cleared, so no row is
 * found again and again.
 */
static void
deadline_due(WlRow *row, WlTickCounts *c)
{
	TimestampTz now = wl_now();

	if (row->timeouts.overall_ms > 0 && overall_applies(row->state) &&
		row->created_at + MS(row->timeouts.overall_ms) <= now)
	{
		wl_retry_timeout(row, "workload.tick", "overall_timeout", true);
		c->overall++;
		return;
	}
	switch (row->state)
	{
		case WL_READY:
			wl_retry_timeout(row, "workload.tick", "queue_timeout", true);
			c->queue++;
			return;
		case WL_CLAIMED:
			wl_retry_timeout(row, "workload.tick", "claim_timeout", false);
			c->claim++;
			return;
		case WL_RUNNING:
		case WL_CHECKPOINTED:
			wl_retry_timeout(row, "workload.tick", "execution_timeout", false);
			c->execution++;
			return;
		case WL_WAITING:
			switch (wl_wait_due(row))
			{
				case WL_WAIT_WOKEN:
					c->woken++;
					return;
				case WL_WAIT_EXPIRED:
					c->expired++;
					return;
				default:
					break;
			}
			break;
		default:
			break;
	}
	row->has_deadline = false;
	wl_store_save(row);
}

/*
 * due_pass runs plan id (rows due at now, locked SKIP LOCKED, at most
 * $2 at a time) and hands each row, locked again, to act; stops after
 * WL_TICK_LIMIT rows and says so in c->more.  act must move every row it is
 * given out of what the plan selects.
 */
static void
due_pass(WlPlanId id, void (*act) (WlRow *row, WlTickCounts *c), WlTickCounts *c)
{
	uint64		seen = 0;

	for (;;)
	{
		Datum		args[2];
		SPITupleTable *t;
		uint64		n;
		char	  **ids;

		if (seen >= WL_TICK_LIMIT)
		{
			c->more = true;
			return;
		}
		args[0] = TimestampTzGetDatum(wl_now());
		args[1] = Int32GetDatum(WL_TICK_BATCH);
		t = wl_store_run(id, args, NULL, 0, SPI_OK_SELECT);
		n = SPI_processed;
		if (n == 0)
			return;
		ids = palloc(sizeof(char *) * n);
		for (uint64 i = 0; i < n; i++)
			ids[i] = wl_store_text(t, (int) i, 1);
		for (uint64 i = 0; i < n; i++)
		{
			WlRow		row;

			if (wl_store_lock(ids[i], &row))
				act(&row, c);
		}
		seen += n;
		if (n < WL_TICK_BATCH)
			return;
	}
}

static void
deadline_act(WlRow *row, WlTickCounts *c)
{
	if (row->has_deadline && row->deadline_at <= wl_now())
		deadline_due(row, c);
}

/* heartbeat_act: silence for heartbeat_ms times the run out like workload_timeout. */
static void
heartbeat_act(WlRow *row, WlTickCounts *c)
{
	if (row->claim_id == NULL || !wl_state_allowed(row->state, WL_TIMED_OUT))
		return;
	wl_retry_timeout(row, "workload.tick", "heartbeat_timeout", false);
	c->heartbeat++;
}

/*
 * workload_tick() -> jsonb: one maintenance pass, as a single runner (a
 * second concurrent call returns at once with "skipped": true).  Recovers
 * expired leases, times out heartbeats, then acts on every row whose
 * deadline has come (timeouts, schedule waits, overdue waits); at most
 * WL_TICK_LIMIT rows of each, with "more": true when some were left.
 */
PG_FUNCTION_INFO_V1(workload_tick);
Datum
workload_tick(PG_FUNCTION_ARGS)
{
	WlTickCounts c;
	SPITupleTable *t;
	bool		ran;
	bool		more_leases = false;
	WlJson		b;
	Jsonb	   *answer;

	memset(&c, 0, sizeof(c));
	SPI_connect();
	t = wl_store_run(P_TICK_LOCK, NULL, NULL, 1, SPI_OK_SELECT);
	ran = wl_store_bool(t, 0, 1);
	if (ran)
	{
		c.recovered = (int64) wl_recover_expired(NULL, NULL, WL_TICK_LIMIT, &more_leases);
		due_pass(P_HEARTBEAT_DUE, heartbeat_act, &c);
		due_pass(P_DEADLINE_DUE, deadline_act, &c);
		c.more = c.more || more_leases;
	}
	wl_json_begin(&b);
	wl_json_bool(&b, "skipped", !ran);
	wl_json_int(&b, "recovered", c.recovered);
	wl_json_int(&b, "queue_timed_out", c.queue);
	wl_json_int(&b, "claim_timed_out", c.claim);
	wl_json_int(&b, "execution_timed_out", c.execution);
	wl_json_int(&b, "heartbeat_timed_out", c.heartbeat);
	wl_json_int(&b, "overall_timed_out", c.overall);
	wl_json_int(&b, "schedules_woken", c.woken);
	wl_json_int(&b, "waits_expired", c.expired);
	wl_json_bool(&b, "more", c.more);
	answer = wl_store_transfer(wl_json_end(&b));
	SPI_finish();
	PG_RETURN_JSONB_P(answer);
}
