/*
 * states.c: the transition table, state names and event types, and every
 * question about states, answered from the table (layer 1: no SPI).
 *
 * This is the only list of legal moves.  No other file decides legality; a
 * caller may choose which target to ask for, and this table says yes or no.
 */
#include "postgres.h"

#include "errors.h"
#include "states.h"

static const char *const wl_state_names[WL_STATE_COUNT] = {
	[WL_CREATED] = "CREATED",
	[WL_READY] = "READY",
	[WL_CLAIMED] = "CLAIMED",
	[WL_RUNNING] = "RUNNING",
	[WL_CHECKPOINTED] = "CHECKPOINTED",
	[WL_RECOVERING] = "RECOVERING",
	[WL_CANCELLATION_REQUESTED] = "CANCELLATION_REQUESTED",
	[WL_WAITING] = "WAITING",
	[WL_SUCCEEDED] = "SUCCEEDED",
	[WL_FAILED] = "FAILED",
	[WL_CANCELLED] = "CANCELLED",
	[WL_TIMED_OUT] = "TIMED_OUT",
	[WL_DEAD_LETTER] = "DEAD_LETTER",
};

/* Mirrors SPEC section 3 line by line. */
static const WlEdge wl_edges[] = {
	{WL_CREATED, WL_READY}, {WL_CREATED, WL_CANCELLED},

	{WL_READY, WL_CLAIMED}, {WL_READY, WL_CANCELLED}, {WL_READY, WL_TIMED_OUT},

	{WL_CLAIMED, WL_RUNNING}, {WL_CLAIMED, WL_CANCELLATION_REQUESTED},
	{WL_CLAIMED, WL_RECOVERING}, {WL_CLAIMED, WL_TIMED_OUT},

	{WL_RUNNING, WL_CHECKPOINTED}, {WL_RUNNING, WL_SUCCEEDED},
	{WL_RUNNING, WL_FAILED}, {WL_RUNNING, WL_CANCELLATION_REQUESTED},
	{WL_RUNNING, WL_RECOVERING}, {WL_RUNNING, WL_TIMED_OUT},
	{WL_RUNNING, WL_WAITING},

	{WL_CHECKPOINTED, WL_CHECKPOINTED}, {WL_CHECKPOINTED, WL_SUCCEEDED},
	{WL_CHECKPOINTED, WL_FAILED}, {WL_CHECKPOINTED, WL_CANCELLATION_REQUESTED},
	{WL_CHECKPOINTED, WL_RECOVERING}, {WL_CHECKPOINTED, WL_TIMED_OUT},
	{WL_CHECKPOINTED, WL_WAITING},

	{WL_CANCELLATION_REQUESTED, WL_CANCELLED},

	{WL_RECOVERING, WL_READY}, {WL_RECOVERING, WL_DEAD_LETTER},

	{WL_WAITING, WL_READY}, {WL_WAITING, WL_TIMED_OUT}, {WL_WAITING, WL_CANCELLED},

	{WL_FAILED, WL_READY}, {WL_FAILED, WL_DEAD_LETTER}, {WL_FAILED, WL_CANCELLED},

	{WL_TIMED_OUT, WL_READY}, {WL_TIMED_OUT, WL_DEAD_LETTER},

	{WL_DEAD_LETTER, WL_READY}, {WL_DEAD_LETTER, WL_CANCELLED},
};

/* wl_state_name returns the enum label of s. */
const char *
wl_state_name(WlState s)
{
	if (s < 0 || s >= WL_STATE_COUNT)
		elog(ERROR, "unknown workload state %d", (int) s);
	return wl_state_names[s];
}

/* wl_state_lookup maps a label to its state; false when there is none. */
bool
wl_state_lookup(const char *name, WlState *out)
{
	for (int i = 0; i < WL_STATE_COUNT; i++)
	{
		if (strcmp(wl_state_names[i], name) == 0)
		{
			*out = (WlState) i;
			return true;
		}
	}
	return false;
}

/* wl_state_from_name maps a label read from our own tables; unknown is a bug. */
WlState
wl_state_from_name(const char *name)
{
	WlState		s;

	if (!wl_state_lookup(name, &s))
		elog(ERROR, "unknown workload state \"%s\"", name);
	return s;
}

/* wl_state_allowed answers from the table whether from -> to is legal. */
bool
wl_state_allowed(WlState from, WlState to)
{
	for (int i = 0; i < lengthof(wl_edges); i++)
	{
		if (wl_edges[i].from == from && wl_edges[i].to == to)
			return true;
	}
	return false;
}

/*
 * wl_state_require raises WORKLOAD_TRANSITION_DENIED unless from -> to is in
 * the table.
 */
void
wl_state_require(const char *workload_id, WlState from, WlState to)
{
	if (!wl_state_allowed(from, to))
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" cannot move from %s to %s.",
							workload_id, wl_state_name(from), wl_state_name(to)));
}

/* wl_state_event_type: the event a transition into s appends (SPEC section 6). */
const char *
wl_state_event_type(WlState s)
{
	static const char *const types[WL_STATE_COUNT] = {
		[WL_CREATED] = "workload.created",
		[WL_READY] = "workload.ready",
		[WL_CLAIMED] = "workload.claimed",
		[WL_RUNNING] = "workload.started",
		[WL_CHECKPOINTED] = "workload.checkpointed",
		[WL_RECOVERING] = "workload.recovered",
		[WL_CANCELLATION_REQUESTED] = "workload.cancellation_requested",
		[WL_WAITING] = "workload.waiting",
		[WL_SUCCEEDED] = "workload.completed",
		[WL_FAILED] = "workload.failed",
		[WL_CANCELLED] = "workload.cancelled",
		[WL_TIMED_OUT] = "workload.timed_out",
		[WL_DEAD_LETTER] = "workload.dead_lettered",
	};

	(void) wl_state_name(s);	/* range check */
	return types[s];
}

/* wl_state_is_final: no edge leaves s. */
bool
wl_state_is_final(WlState s)
{
	for (int i = 0; i < lengthof(wl_edges); i++)
	{
		if (wl_edges[i].from == s)
			return false;
	}
	return true;
}

/*
 * wl_state_holds_claim: states in which a worker holds the workload: those
 * a cancel turns into a request to the worker (an edge to
 * CANCELLATION_REQUESTED), and that request itself.
 */
bool
wl_state_holds_claim(WlState s)
{
	return s == WL_CANCELLATION_REQUESTED || wl_state_allowed(s, WL_CANCELLATION_REQUESTED);
}

/* wl_state_can_time_out: states with an edge to TIMED_OUT (where timeouts apply). */
bool
wl_state_can_time_out(WlState s)
{
	return wl_state_allowed(s, WL_TIMED_OUT);
}

/* wl_state_is_retryable: what workload_retry puts back to READY (SPEC section 4). */
bool
wl_state_is_retryable(WlState s)
{
	return s == WL_FAILED || s == WL_TIMED_OUT || s == WL_DEAD_LETTER;
}

/* wl_state_is_compensable: what workload_compensate accepts (SPEC section 7). */
bool
wl_state_is_compensable(WlState s)
{
	return s == WL_FAILED || s == WL_DEAD_LETTER || s == WL_CANCELLED;
}

/* wl_state_edges: the table itself, for workload_transitions(). */
const WlEdge *
wl_state_edges(int *n)
{
	*n = lengthof(wl_edges);
	return wl_edges;
}
