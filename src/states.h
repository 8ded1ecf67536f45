/*
 * states.h: workload states and the one transition table (states.c; layer 1).
 */
#ifndef WL_STATES_H
#define WL_STATES_H

typedef enum WlState
{
	WL_CREATED,
	WL_READY,
	WL_CLAIMED,
	WL_RUNNING,
	WL_CHECKPOINTED,
	WL_RECOVERING,
	WL_CANCELLATION_REQUESTED,
	WL_WAITING,
	WL_SUCCEEDED,
	WL_FAILED,
	WL_CANCELLED,
	WL_TIMED_OUT,
	WL_DEAD_LETTER,
	WL_STATE_COUNT
} WlState;

typedef struct WlEdge
{
	WlState		from;
	WlState		to;
} WlEdge;

extern const char *wl_state_name(WlState s);
extern WlState wl_state_from_name(const char *name);
extern bool wl_state_lookup(const char *name, WlState *out);
extern bool wl_state_allowed(WlState from, WlState to);
extern void wl_state_require(const char *workload_id, WlState from, WlState to);
extern bool wl_state_is_final(WlState s);
extern const char *wl_state_event_type(WlState s);
extern bool wl_state_holds_claim(WlState s);
extern bool wl_state_can_time_out(WlState s);
extern bool wl_state_is_retryable(WlState s);
extern bool wl_state_is_compensable(WlState s);
extern const WlEdge *wl_state_edges(int *n);

#endif
