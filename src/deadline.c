/*
 * deadline.c: the deadline rule.  After every state change a row carries
 * the next moment the tick must look at it (deadline_at); this file decides
 * that moment from the row's timeouts and its new state.  Layer 1: no SPI.
 */
#include "postgres.h"

#include "deadline.h"

static void
sooner(bool *has, TimestampTz *d, TimestampTz candidate)
{
	if (!*has || candidate < *d)
		*d = candidate;
	*has = true;
}

/*
 * wl_deadline_set sets row->deadline_at to the next moment the tick must
 * look at a row that has just moved from `from` to row->state: the sooner
 * of the overall timeout (since creation, in every state that can time out)
 * and the new state's own limit: READY queue_ms (from when it became due),
 * CLAIMED claim_ms, RUNNING execution_ms (a checkpoint keeps the running
 * attempt's deadline), WAITING the wait's deadline (row->wait_until).
 * Heartbeat silence is not a deadline: a heartbeat must not move an indexed
 * column.
 */
void
wl_deadline_set(WlRow *row, WlState from)
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
				sooner(&has, &d, Max(row->state_entered_at, row->next_attempt_at) + WL_MS(t->queue_ms));
			break;
		case WL_CLAIMED:
			if (t->claim_ms > 0)
				sooner(&has, &d, row->state_entered_at + WL_MS(t->claim_ms));
			break;
		case WL_RUNNING:
		case WL_CHECKPOINTED:
			if (t->execution_ms > 0)
				sooner(&has, &d, row->state_entered_at + WL_MS(t->execution_ms));
			break;
		case WL_WAITING:
			sooner(&has, &d, row->wait_until);
			break;
		default:
			break;
	}
	if (t->overall_ms > 0 && wl_state_can_time_out(row->state))
		sooner(&has, &d, row->created_at + WL_MS(t->overall_ms));
	row->has_deadline = has;
	row->deadline_at = d;
}

/* wl_deadline_lapsed: the row's authority has lapsed at now. */
bool
wl_deadline_lapsed(const WlRow *row, TimestampTz now)
{
	return row->authority_expires_at != 0 && row->authority_expires_at <= now;
}

/* wl_deadline_overall_due: the row's whole budget (overall_ms) is spent at now. */
bool
wl_deadline_overall_due(const WlRow *row, TimestampTz now)
{
	return row->timeouts.overall_ms > 0 && wl_state_can_time_out(row->state) &&
		row->created_at + WL_MS(row->timeouts.overall_ms) <= now;
}
