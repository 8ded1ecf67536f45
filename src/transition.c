/*
 * transition.c: the one path every state change takes.  It asks the
 * transition table, sets the deadline the tick keeps for the new state,
 * saves the row, appends the event, closes a wait the workload leaves
 * unanswered, sends NOTIFY on READY, and on a final state cancels the
 * dependents that waited for another outcome: through an explicit stack,
 * depth first, whatever the chain's length or fan-out.  Layer 3.
 *
 * The one exception is the claim statement (store_claim.c), which picks its
 * READY rows in SQL and moves them to CLAIMED (and RUNNING) itself; claim.c
 * asks the table first, and claim_statement_moves_only_along_the_table
 * checks the events it writes.  Two other statements write a move in the
 * statement that tests its condition, but only one this file was asked
 * for: a fenced start or complete (wl_fence_try asks the table, then
 * wl_transition_applied appends the event and does what follows), and
 * create_many's bulk insert of new READY rows (create_many.c asks the
 * table, and sends their NOTIFY through wl_transition_ready_notify).
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/async.h"
#include "utils/memutils.h"

#include "authz.h"
#include "clock.h"
#include "crypto.h"
#include "deadline.h"
#include "jsonb_util.h"
#include "keys.h"
#include "store_ops.h"
#include "transition.h"

/* A workload that reached a final state, and its dependents still to look at. */
typedef struct WlFrame
{
	char	   *workload_id;
	WlState		final;
	char	  **dependents;
	int			n;
	int			next;
} WlFrame;

typedef struct WlStack
{
	WlFrame    *frames;
	int			depth;
	int			size;
	MemoryContext cxt;			/* where frames live, for the whole cascade */
} WlStack;

/* push_final pushes a workload that has just reached a final state, with its dependents. */
static void
push_final(WlStack *s, const char *workload_id, WlState final, char **dependents, int n)
{
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	WlFrame    *f;

	if (s->depth == s->size)
	{
		s->size = s->size == 0 ? 16 : s->size * 2;
		s->frames = s->frames ? repalloc(s->frames, sizeof(WlFrame) * s->size) :
			palloc(sizeof(WlFrame) * s->size);
	}
	f = &s->frames[s->depth++];
	f->workload_id = pstrdup(workload_id);
	f->final = final;
	f->n = n;
	f->next = 0;
	f->dependents = palloc(sizeof(char *) * (n + 1));
	for (int i = 0; i < n; i++)
		f->dependents[i] = pstrdup(dependents[i]);
	MemoryContextSwitchTo(old);
}

/*
 * The wakes of this transaction: a move to READY is announced when the
 * transaction commits, not while its statement runs.  On one node that is
 * what NOTIFY does anyway.  On Citus a call runs on the node that holds its
 * tenant and commits there, so its wakes reach the listeners of that node;
 * a transaction that Citus commits in two phases (it wrote on two nodes)
 * may not NOTIFY at all, and commits without its wakes (workers find the
 * work by polling) instead of failing.  Each wake remembers the
 * subtransaction it was made in, and goes if that one rolls back.
 */
typedef struct WlWake
{
	char	   *channel;
	char	   *workload_id;
	int			level;			/* GetCurrentTransactionNestLevel() when made */
} WlWake;

static List *wakes = NIL;		/* of WlWake *, in TopTransactionContext */

static void
wakes_xact(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			foreach(lc, wakes)
			{
				WlWake	   *w = (WlWake *) lfirst(lc);

				Async_Notify(w->channel, w->workload_id);
			}
			wakes = NIL;
			break;
		case XACT_EVENT_PRE_PREPARE:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			wakes = NIL;		/* their memory goes with the transaction */
			break;
		default:
			break;
	}
}

static void
wakes_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid,
			  void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		foreach(lc, wakes)
		{
			if (((WlWake *) lfirst(lc))->level >= level)
				wakes = foreach_delete_current(wakes, lc);
		}
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		/* what a committed subtransaction made now belongs to its parent */
		foreach(lc, wakes)
		{
			WlWake	   *w = (WlWake *) lfirst(lc);

			if (w->level >= level)
				w->level = level - 1;
		}
	}
}

/* wl_transition_init registers the callbacks that send the wakes (_PG_init). */
void
wl_transition_init(void)
{
	RegisterXactCallback(wakes_xact, NULL);
	RegisterSubXactCallback(wakes_subxact, NULL);
}

/*
 * wl_transition_ready_notify: what a move to READY sends: the workload id on
 * the channel of its tenant and application, at commit.  For each row a
 * transition moves (after), and for the rows create_many.c's bulk insert
 * wrote as READY, with their channel looked up once per tenant and
 * application.
 */
void
wl_transition_ready_notify(const char *channel, const char *workload_id)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	WlWake	   *w = palloc(sizeof(WlWake));

	w->channel = pstrdup(channel);
	w->workload_id = pstrdup(workload_id);
	w->level = GetCurrentTransactionNestLevel();
	wakes = lappend(wakes, w);
	MemoryContextSwitchTo(old);
}

/* after: what follows a saved transition besides its event. */
static void
after(const WlRow *row, WlState from, WlState to)
{
	if (from == WL_WAITING)
		wl_store_wait_close(row, to == WL_CANCELLED ? "cancelled" :
							to == WL_TIMED_OUT ? "timed_out" : "woken");
	if (to == WL_READY)
		wl_transition_ready_notify(wl_keys_channel(row->tenant_id, row->application_id),
								   row->workload_id);
}

/*
 * step moves a locked row to `to`: WORKLOAD_TRANSITION_DENIED unless the
 * table allows it; then the deadline, the save (with whatever else the
 * caller changed), the event, and what follows.  Returns whether `to` is
 * final (the caller then looks at the dependents).
 */
static bool
step(WlRow *row, WlState to, const char *actor, Jsonb *evidence)
{
	WlState		from = row->state;

	wl_state_require(row->workload_id, from, to);
	row->state = to;
	row->state_entered_at = wl_now();
	wl_deadline_set(row, from);
	wl_store_save(row);
	row->failure_changed = false;
	row->progress_changed = false;
	wl_store_event(row, &from, to, actor, wl_authz_caller()->role, evidence);
	after(row, from, to);
	return wl_state_is_final(to);
}

/*
 * dependents_of: the dependents of row, which has just reached the final
 * state `to`, that required another state (for the cascade); those that
 * required this one get their queue rows unblocked first.
 */
static char **
dependents_of(const char *workload_id, const char *tenant_id, WlState to, int *n)
{
	char	  **met;
	int			nmet;
	char	  **ids = wl_store_dependents(workload_id, tenant_id, to, n, &met, &nmet);

	wl_store_unblock_dependents(tenant_id, met, nmet);
	return ids;
}

/*
 * cascade cancels, depth first, every dependent that can no longer run: one
 * whose required state differs from the final state its dependency reached
 * (dependencies form a DAG, since each must exist before its dependent).
 * The stack holds the workloads still to look at; each pass's own memory is
 * reset, so a chain of any length runs in bounded memory and stack.
 */
static void
cascade(WlStack *s, const char *actor)
{
	MemoryContext pass = AllocSetContextCreate(CurrentMemoryContext, "workload cascade pass",
											   ALLOCSET_DEFAULT_SIZES);

	while (s->depth > 0)
	{
		WlFrame    *f = &s->frames[s->depth - 1];
		MemoryContext old;
		WlRow		dep;

		if (f->next == f->n)
		{
			s->depth--;
			continue;
		}
		old = MemoryContextSwitchTo(pass);
		/* a dependent is locked for the system: it is in the same tenant and application */
		if (wl_store_lock(f->dependents[f->next++], NULL, &dep) &&
			wl_state_allowed(dep.state, WL_CANCELLED))
		{
			WlJson		b;

			wl_json_begin(&b);
			wl_json_str(&b, "cause", "dependency_unreachable");
			wl_json_str(&b, "dependency", f->workload_id);
			wl_json_str(&b, "dependency_state", wl_state_name(f->final));
			if (step(&dep, WL_CANCELLED, actor, wl_json_end(&b)))
			{
				int			n;
				char	  **ids = dependents_of(dep.workload_id, dep.tenant_id, WL_CANCELLED, &n);

				push_final(s, dep.workload_id, WL_CANCELLED, ids, n);
			}
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(pass);
	}
	MemoryContextDelete(pass);
}

static void
stack_init(WlStack *s)
{
	memset(s, 0, sizeof(*s));
	s->cxt = CurrentMemoryContext;
}

/*
 * wl_transition moves a locked row to `to` (see step), then cancels the
 * dependents a final state leaves unreachable.  Raises
 * WORKLOAD_TRANSITION_DENIED, changing nothing, when the table forbids it.
 */
void
wl_transition(WlRow *row, WlState to, const char *actor, Jsonb *evidence)
{
	WlStack		s;

	if (step(row, to, actor, evidence))
	{
		int			n;
		char	  **ids = dependents_of(row->workload_id, row->tenant_id, to, &n);

		if (n == 0)
			return;
		stack_init(&s);
		push_final(&s, row->workload_id, to, ids, n);
		cascade(&s, actor);
	}
}

/*
 * cascade_many: for n rows that have just reached the final state `to`, the
 * dependents of those that have any (asked for once for the batch), each
 * cascade as wl_transition runs it.
 */
static void
cascade_many(WlRow **rows, int n, WlState to, const char *actor)
{
	bool	   *held = palloc(sizeof(bool) * (n + 1));

	wl_store_depended_on(rows, n, held);
	for (int i = 0; i < n; i++)
	{
		if (held[i])
		{
			WlStack		s;
			int			k;
			char	  **deps = dependents_of(rows[i]->workload_id, rows[i]->tenant_id, to, &k);

			stack_init(&s);
			push_final(&s, rows[i]->workload_id, to, deps, k);
			cascade(&s, actor);
		}
	}
}

/*
 * wl_transition_many is wl_transition for n locked rows moving to one state,
 * with the row writes and the events in one statement (events in the order
 * of rows), and the dependents of a final state asked for once for the batch.
 */
void
wl_transition_many(WlRow **rows, int n, WlState to, const char *actor, Jsonb **evidence)
{
	WlState    *from = palloc(sizeof(WlState) * (n + 1));
	TimestampTz now = wl_now();

	if (n == 0)
		return;
	for (int i = 0; i < n; i++)
	{
		WlRow	   *row = rows[i];

		from[i] = row->state;
		wl_state_require(row->workload_id, from[i], to);
		row->state = to;
		row->state_entered_at = now;
		wl_deadline_set(row, from[i]);
	}
	wl_store_save_many(rows, n, from, to, actor, wl_authz_caller()->role, evidence);
	for (int i = 0; i < n; i++)
	{
		rows[i]->failure_changed = false;
		rows[i]->progress_changed = false;
		after(rows[i], from[i], to);
	}
	if (wl_state_is_final(to))
		cascade_many(rows, n, to, actor);
}

/*
 * wl_transition_written_many finishes n transitions from `from` into one
 * state whose rows and events a batched conditional statement has already
 * written (complete.c's completions, which ask the table first): what
 * follows, and on a final state the dependents' cascade, as
 * wl_transition_many does after its save.
 */
void
wl_transition_written_many(WlRow **rows, int n, WlState from, const char *actor)
{
	if (n == 0)
		return;
	for (int i = 0; i < n; i++)
	{
		wl_state_require(rows[i]->workload_id, from, rows[i]->state);
		after(rows[i], from, rows[i]->state);
	}
	if (wl_state_is_final(rows[0]->state))
		cascade_many(rows, n, rows[0]->state, actor);
}

/*
 * wl_transition_applied finishes a transition from `from` that a fenced
 * call's conditional statement has already written to the row (see
 * wl_fence_try): the event, what follows, and on a final state the
 * dependents' cascade, exactly as wl_transition does after its save.
 */
void
wl_transition_applied(WlRow *row, WlState from, const char *actor, Jsonb *evidence)
{
	WlState		to = row->state;

	wl_state_require(row->workload_id, from, to);
	wl_store_event(row, &from, to, actor, wl_authz_caller()->role, evidence);
	after(row, from, to);
	if (wl_state_is_final(to))
	{
		int			n;
		char	  **ids = dependents_of(row->workload_id, row->tenant_id, to, &n);

		if (n > 0)
		{
			WlStack		s;

			stack_init(&s);
			push_final(&s, row->workload_id, to, ids, n);
			cascade(&s, actor);
		}
	}
}

/* wl_transition_created records a new row's first event (CREATED, from nothing). */
void
wl_transition_created(const WlRow *row, const char *actor)
{
	wl_store_event(row, NULL, WL_CREATED, actor, wl_authz_caller()->role, NULL);
}
