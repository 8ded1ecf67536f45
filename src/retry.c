/*
 * retry.c: the retry policy.  After FAILED, TIMED_OUT or RECOVERING a
 * workload goes back to READY with backoff while its kind is retryable and
 * attempts remain, else to DEAD_LETTER.  The transition table still decides
 * whether each move is legal; this file only chooses which one to ask for.
 * Layer 3.
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "clock.h"
#include "fence.h"
#include "jsonb_util.h"
#include "retry.h"
#include "store_ops.h"
#include "transition.h"

/*
 * wl_retry_delay_ms: fixed is initial_delay_ms; exponential is
 * initial_delay_ms * 2^(retry_count-1); both capped at max_delay_ms.
 */
int64
wl_retry_delay_ms(const WlPolicy *p, int retry_count)
{
	int64		delay = p->initial_delay_ms;

	if (p->exponential)
	{
		for (int i = 1; i < retry_count && delay < p->max_delay_ms; i++)
			delay *= 2;
	}
	return Min(delay, p->max_delay_ms);
}

/*
 * wl_retry_or_dead_letter moves a locked row that has just failed, timed
 * out or been recovered on to READY (due after the backoff) or DEAD_LETTER.
 * It is retryable when kind is NULL (a lost worker) or in retry_on.
 * Attempts that ended in a durable wait (workload_wait) are not failures:
 * attempts remain while attempt_count - wait_count < max_attempts, so a
 * workload that waits N times still gets max_attempts runs that can fail.
 * Returns the state it ends in.
 */
WlState
wl_retry_or_dead_letter(WlRow *row, const char *kind, const char *actor)
{
	WlPolicy	p;
	WlJson		b;
	bool		retryable;

	wl_store_policy(row, &p);
	retryable = kind == NULL || wl_array_contains(p.retry_on, kind);
	wl_json_begin(&b);
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_int(&b, "max_attempts", p.max_attempts);
	if (row->wait_count > 0)
		wl_json_int(&b, "waits", row->wait_count);
	if (retryable && row->attempt_count - row->wait_count < p.max_attempts)
	{
		int64		delay;

		row->retry_count++;
		delay = wl_retry_delay_ms(&p, row->retry_count);
		row->next_attempt_at = wl_now() + delay * INT64CONST(1000);
		wl_json_str(&b, "cause", "retry");
		wl_json_int(&b, "retry_count", row->retry_count);
		wl_json_int(&b, "delay_ms", delay);
		wl_transition(row, WL_READY, actor, wl_json_end(&b));
	}
	else
	{
		wl_json_str(&b, "cause", retryable ? "attempts_exhausted" : "not_retryable");
		wl_transition(row, WL_DEAD_LETTER, actor, wl_json_end(&b));
	}
	return row->state;
}

/*
 * wl_retry_timeout moves a locked row to TIMED_OUT, ending its attempt and
 * claim, then on under the retry policy (kind "timeout") or, when final, to
 * DEAD_LETTER.  cause goes into the event's evidence.  Raises
 * WORKLOAD_TRANSITION_DENIED when the state cannot time out.  Returns the
 * state it ends in.
 */
WlState
wl_retry_timeout(WlRow *row, const char *actor, const char *cause, bool final)
{
	Jsonb	   *evidence = wl_fence_evidence(row, cause);

	wl_state_require(row->workload_id, row->state, WL_TIMED_OUT);
	if (row->claim_id)
		wl_store_attempt_close(row, "TIMED_OUT", "timeout", NULL);
	wl_fence_release(row);
	wl_transition(row, WL_TIMED_OUT, actor, evidence);
	if (final)
	{
		wl_transition(row, WL_DEAD_LETTER, "workload.timeout",
							wl_fence_evidence(row, "timeout_final"));
		return row->state;
	}
	return wl_retry_or_dead_letter(row, "timeout", "workload.timeout");
}
