/*
 * pass.c: a maintenance pass (the tick) in this backend, whoever called
 * it: it waits for no lock a tenant's session may hold (the rows it works
 * on are taken SKIP LOCKED, and every other lock it meets gives way after
 * WL_PASS_LOCK_TIMEOUT_MS, its own lock_timeout however it was called),
 * reads the clock at each step rather than once (wl_clock_steps), and has
 * a budget of time after which its steps stop and leave the rest for the
 * next pass.  It knows nothing of workloads.  Layer 0.
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/lock.h"
#include "utils/errcodes.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "pass.h"

static bool in_pass = false;
static int	pass_nest = -1;
static TimestampTz pass_until = 0;
static bool callback_registered = false;

/* an error that ends the transaction ends the pass with it (its settings go with the abort) */
static void
on_xact(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
	{
		in_pass = false;
		pass_nest = -1;
		wl_clock_steps(false);
	}
}

/*
 * wl_pass_begin starts a pass with a budget of budget_ms (0: none): its
 * lock_timeout until wl_pass_end, steps read the clock.  A pass inside a
 * pass is the outer one.
 */
void
wl_pass_begin(int budget_ms)
{
	char		timeout[16];

	if (in_pass)
		return;
	if (!callback_registered)
	{
		RegisterXactCallback(on_xact, NULL);
		callback_registered = true;
	}
	pass_nest = NewGUCNestLevel();
	snprintf(timeout, sizeof(timeout), "%dms", WL_PASS_LOCK_TIMEOUT_MS);
	(void) set_config_option("lock_timeout", timeout, PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	in_pass = true;
	wl_clock_steps(true);
	pass_until = budget_ms > 0 ? GetCurrentTimestamp() + (int64) budget_ms * 1000 : 0;
}

/* wl_pass_end ends it: the caller's lock_timeout and clock again. */
void
wl_pass_end(void)
{
	if (!in_pass)
		return;
	AtEOXact_GUC(true, pass_nest);
	in_pass = false;
	pass_nest = -1;
	wl_clock_steps(false);
}

/* wl_pass_active: whether a pass runs (the store then takes rows without waiting). */
bool
wl_pass_active(void)
{
	return in_pass;
}

/* wl_pass_step: a step of the pass begins: it reads the clock anew. */
void
wl_pass_step(void)
{
	if (in_pass)
		wl_clock_step();
}

/* wl_pass_budget: the pass's budget of time is budget_ms from now (0: none). */
void
wl_pass_budget(int budget_ms)
{
	pass_until = budget_ms > 0 ? GetCurrentTimestamp() + (int64) budget_ms * 1000 : 0;
}

/* wl_pass_spent: whether the pass has used its budget of time (its steps stop). */
bool
wl_pass_spent(void)
{
	return in_pass && pass_until != 0 && GetCurrentTimestamp() >= pass_until;
}

/*
 * wl_pass_gave_way: whether an error a step of the pass raised is its
 * giving way to a lock another session holds (lock_timeout, NOWAIT): the
 * step is left for a later pass, not counted as failed.
 */
bool
wl_pass_gave_way(int sqlerrcode)
{
	return sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
}
