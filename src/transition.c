/*
 * transition.c: the one path every state change takes.  It asks the
 * transition table, sets the deadline the tick keeps for the new state,
 * saves the row, appends the event, closes a wait the workload leaves
 * unanswered, sends NOTIFY on READY, and on a final state cancels the
 * dependents that waited for another outcome: through an explicit stack,
 * depth first, whatever the chain's length or fan-out.  In a maintenance
 * pass a cascade has a budget of steps and takes no row another session
 * holds: what is left (frames, held dependents) goes to workload.cascades,
 * and a later pass goes on with it (wl_transition_cascades_left).  Layer 3.
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
#include "errors.h"
#include "jsonb_util.h"
#include "keys.h"
#include "pass.h"
#include "store_ops.h"
#include "transition.h"
#include "quota.h"

/* A workload that reached a final state, and its dependents still to look at. */
typedef struct WlFrame
{
	char	   *workload_id;
	WlState		final;
	char	  **dependents;
	int			n;
	int			next;
	/* a frame a pass took up from workload.cascades: where it went on from */
	char	   *after;			/* its dependents after this one, or NULL */
	char	   *only;			/* or this one dependent alone (held before), or NULL */
} WlFrame;

typedef struct WlStack
{
	WlFrame    *frames;
	int			depth;
	int			size;
	MemoryContext cxt;			/* where frames live, for the whole cascade */
	const char *tenant_id;		/* every workload of a cascade is of one tenant */
} WlStack;

/*
 * The steps a cascade may still take in this maintenance pass (-1: not in
 * a pass, no bound): wl_transition_cascade_budget sets it for each pass.
 */
static int	cascade_left = -1;
static uint64 cascade_steps = 0;	/* steps taken since the budget was set */
static uint64 cascade_left_over = 0;	/* frames and dependents left for a later pass */

/* wl_transition_cascade_budget: the steps cascades may take from now (-1: no bound). */
void
wl_transition_cascade_budget(int steps)
{
	cascade_left = steps;
	cascade_steps = 0;
	cascade_left_over = 0;
}

/* wl_transition_cascade_spent: steps taken and pieces left since the budget was set. */
void
wl_transition_cascade_spent(uint64 *steps, uint64 *left_over)
{
	*steps = cascade_steps;
	*left_over = cascade_left_over;
}

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
	f->after = NULL;
	f->only = NULL;
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
	if (wl_state_is_final(to) && !wl_state_is_final(from))
		wl_quota_finished(row->tenant_id);
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
dependents_after(const char *workload_id, const char *tenant_id, WlState to, const char *after,
				 const char *only, int *n)
{
	char	  **met;
	int			nmet;
	char	  **ids = wl_store_dependents(workload_id, tenant_id, to, after, only, n, &met, &nmet);

	wl_store_unblock_dependents(tenant_id, met, nmet);
	return ids;
}

static char **
dependents_of(const char *workload_id, const char *tenant_id, WlState to, int *n)
{
	return dependents_after(workload_id, tenant_id, to, NULL, NULL, n);
}

/*
 * leave_frames records what is left of the stack's frames (each frame's
 * dependents after the last one looked at, or the one dependent a frame
 * stood for) for a later maintenance pass, and empties the stack.  What is
 * recorded never goes back past what was looked at (a frame taken up from
 * workload.cascades and not yet looked at is recorded as it was).
 */
static void
leave_frames(WlStack *s)
{
	for (int d = 0; d < s->depth; d++)
	{
		WlFrame    *f = &s->frames[d];

		if (f->next == f->n)
			continue;
		if (f->only != NULL)
			wl_store_cascade_put(s->tenant_id, f->workload_id, f->final, NULL, f->only);
		else
			wl_store_cascade_put(s->tenant_id, f->workload_id, f->final,
								 f->next > 0 ? f->dependents[f->next - 1] : f->after, NULL);
		cascade_left_over++;
	}
	s->depth = 0;
}

/*
 * cascade cancels, depth first, every dependent that can no longer run: one
 * whose required state differs from the final state its dependency reached
 * (dependencies form a DAG, since each must exist before its dependent).
 * The stack holds the workloads still to look at; each pass's own memory is
 * reset, so a chain of any length runs in bounded memory and stack.  In a
 * maintenance pass it stops when its budget (or the pass's time) is spent,
 * leaving the rest (leave_frames), and a dependent another session holds
 * is left too, on its own, instead of waited for.
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
		char	   *dep_id;
		bool		locked;

		if (f->next == f->n)
		{
			s->depth--;
			continue;
		}
		if (wl_pass_active() && (cascade_left == 0 || (cascade_left > 0 && wl_pass_spent())))
		{
			leave_frames(s);
			break;
		}
		if (cascade_left > 0 && wl_pass_active())
			cascade_left--;
		cascade_steps++;
		old = MemoryContextSwitchTo(pass);
		dep_id = f->dependents[f->next++];
		/*
		 * a dependent is locked for the system: it is in the same tenant and
		 * application (in a pass, only if no other session holds it)
		 */
		locked = wl_store_lock(dep_id, NULL, &dep);
		if (!locked && wl_pass_active() &&
			wl_store_workload_state(dep_id, s->tenant_id, &(WlState) {WL_CREATED}))
		{
			wl_store_cascade_put(s->tenant_id, f->workload_id, f->final, NULL, dep_id);
			cascade_left_over++;
		}
		if (locked && wl_state_allowed(dep.state, WL_CANCELLED))
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
stack_init(WlStack *s, const char *tenant_id)
{
	memset(s, 0, sizeof(*s));
	s->cxt = CurrentMemoryContext;
	s->tenant_id = tenant_id;
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
		stack_init(&s, row->tenant_id);
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

			stack_init(&s, rows[i]->tenant_id);
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

			stack_init(&s, row->tenant_id);
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

/* The cascade left from one workload, for the subtransaction that goes on with it. */
typedef struct WlLeft
{
	const char *tenant_id;
	const char *workload_id;
	const char *actor;
} WlLeft;

static void
left_one(void *arg)
{
	WlLeft	   *l = arg;
	WlCascadeLeft *left;
	int			n = wl_store_cascade_take(l->tenant_id, l->workload_id, &left);
	WlStack		s;

	stack_init(&s, l->tenant_id);
	for (int i = 0; i < n; i++)
	{
		int			k;
		char	  **ids = dependents_after(l->workload_id, l->tenant_id, left[i].final,
										   left[i].dependent_id ? NULL : left[i].after_id,
										   left[i].dependent_id, &k);

		push_final(&s, l->workload_id, left[i].final, ids, k);
		s.frames[s.depth - 1].after = left[i].dependent_id || !left[i].after_id ? NULL :
			MemoryContextStrdup(s.cxt, left[i].after_id);
		s.frames[s.depth - 1].only = left[i].dependent_id ?
			MemoryContextStrdup(s.cxt, left[i].dependent_id) : NULL;
		cascade(&s, l->actor);
	}
}

/*
 * wl_transition_cascades_left goes on with the cascades earlier maintenance
 * passes left (workload.cascades): up to limit workloads whose dependents
 * are still to be looked at, in fair order between tenants, each in a
 * subtransaction of its own (one that fails is reported and left for a
 * later pass), while the cascade budget lasts.  Returns how many were taken
 * up; *more when some were left.
 */
int
wl_transition_cascades_left(int limit, const char *actor, bool *more, uint64 *failed)
{
	WlDue	   *due;
	int			n = wl_store_cascades_due(limit, &due);
	int			done = 0;

	*more = n == limit;
	for (int i = 0; i < n; i++)
	{
		WlLeft		l = {due[i].tenant_id, due[i].workload_id, actor};
		ErrorData  *e;

		if (cascade_left == 0 || wl_pass_spent())
		{
			*more = true;
			break;
		}
		wl_pass_step();
		e = wl_isolated(left_one, &l);
		if (e == NULL)
		{
			done++;
			continue;
		}
		if (!wl_pass_gave_way(e->sqlerrcode))
		{
			(*failed)++;
			ereport(WARNING,
					(errmsg("workload maintenance left the cascade from workload \"%s\" for a later pass: %s",
							due[i].workload_id, e->message ? e->message : "(no message)")));
		}
		FreeErrorData(e);
	}
	return done;
}
