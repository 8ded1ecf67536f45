/*
 * store_claim_direct.c: the claim from a queue without a plan, on a single
 * node.  Layer 2.
 *
 * It does what the claim statement does (store_sql.c: CLAIM_MANY_SQL and
 * CLAIM_RESUME_SQL, then CLAIM_TAIL) as the executor does it, one candidate
 * at a time: queue rows by queue_ready_idx in queue order (from the start
 * of the queue or through the segments between a session's points), seen
 * by a snapshot taken after the transaction's earlier commands; the claim's
 * conditions tested on each (CLAIMABLE: the tenant and application, not
 * blocked, due, capabilities held, dependencies met); the queue row locked
 * SKIP LOCKED (table_tuple_lock with LockWaitSkip, as FOR UPDATE SKIP LOCKED
 * locks it, and with its outcomes: a row deleted or updated since the
 * snapshot is passed over under READ COMMITTED and a serialization failure
 * under REPEATABLE READ); then its workload row, by workloads_seq_key,
 * locked FOR NO KEY UPDATE SKIP LOCKED and still READY; the row moved to
 * CLAIMED (or RUNNING) with a new token, attempt, claim id, lease and
 * deadline (its run row then in runs_held_idx), the queue row deleted, the
 * events appended (store_direct.c), the spec's definition and input read by specs_pkey.
 * The lock order is the statement's: queue row, then workload row, never
 * waiting while holding a queue row.
 *
 * The statement stays where this cannot run, and wl_store_claim_direct
 * returns -1 having done nothing: on Citus, with a row trigger on the
 * tables it changes, without capabilities, and while a revocation waits
 * for the tick's sweep (the statement asks every candidate's chain then).
 * Through its saved plan most of the statement's cost is executor start-up
 * of its eight CTE and subquery plans, paid by every claim.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "crypto.h"
#include "deadline.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_runs.h"

/* the columns read or written, by name: the queue row, the workload row, the spec */
enum
{
	Q_TENANT_ID, Q_SEQ, Q_APPLICATION_ID, Q_PRIORITY, Q_CREATED_AT, Q_AVAILABLE_AT,
	Q_CAPABILITIES, Q_CHECKS_DEPENDENCIES, Q_BLOCKED, Q_HAS_RUN, Q_ROW_AT, Q_SPEC_AT, Q_COUNT
};
static const char *const q_names[Q_COUNT] = {"tenant_id", "seq", "application_id", "priority",
	"created_at", "available_at", "capability_snapshot", "checks_dependencies", "blocked", "has_run",
"row_at", "spec_at"};

enum
{
	W_WORKLOAD_ID, W_TENANT_ID, W_SEQ, W_STATE, W_FENCING_TOKEN, W_ATTEMPT_COUNT, W_WORKER_ID,
	W_CLAIMED_BY, W_CLAIM_ID, W_LEASE_EXPIRES_AT, W_UPDATED_AT, W_STATE_ENTERED_AT,
	W_CLAIMED_AT, W_STARTED_AT, W_LAST_HEARTBEAT_AT, W_DEADLINE_AT, W_UNHELD_DEADLINE_AT,
	W_CREATED_AT, W_CLAIM_MS, W_EXECUTION_MS, W_OVERALL_MS, W_CHECKPOINT_SEQUENCE, W_PRIORITY,
	W_AUTHORITY_EXPIRES_AT, W_CAPABILITY_SNAPSHOT, W_COUNT
};
static const char *const w_names[W_COUNT] = {"workload_id", "tenant_id", "seq", "state",
	"fencing_token", "attempt_count", "worker_id", "claimed_by", "claim_id", "lease_expires_at",
	"updated_at", "state_entered_at", "claimed_at", "started_at", "last_heartbeat_at",
	"deadline_at", "unheld_deadline_at", "created_at", "claim_ms", "execution_ms", "overall_ms",
"checkpoint_sequence", "priority", "authority_expires_at", "capability_snapshot"};

enum
{
	S_TENANT_ID, S_WORKLOAD_SEQ, S_DEFINITION_ID, S_DEFINITION_REVISION, S_INPUT,
	S_ENVIRONMENT, S_CONNECTION_SCOPES, S_GRANT_IDS, S_COUNT
};
static const char *const s_names[S_COUNT] = {"tenant_id", "workload_seq", "definition_id",
"definition_revision", "input", "environment", "connection_scopes", "grant_ids"};

/* spec_authority, read when the claim answers execution contexts */
enum
{
	A_TENANT_ID, A_WORKLOAD_SEQ, A_AUTHORIZATION_SNAPSHOT, A_RUN_AUTHORITY, A_COUNT
};
static const char *const a_names[A_COUNT] = {"tenant_id", "workload_seq", "authorization_snapshot",
"run_authority"};

/* the tables, indexes and function used, once per catalog generation */
static struct
{
	uint64		generation;
	Oid			queue,
				queue_idx,
				workloads,
				workloads_seq_idx,
				specs,
				specs_idx,
				authority,
				authority_idx,
				revoked_idx,
				deps_unmet;
	RegProcedure created_cmp,	/* queue_ready_idx's comparisons of created_at, seq */
				seq_cmp;
	int			q[Q_COUNT],
				w[W_COUNT],
				s[S_COUNT],
				a[A_COUNT];
}			R;


static void
claim_resolve(void)
{
	uint64		gen = wl_store_generation();
	Oid			argtypes[2] = {TEXTOID, INT8OID};
	Relation	idx;

	if (R.generation == gen)
		return;
	R.queue = wl_store_attnums("queue", q_names, Q_COUNT, R.q);
	R.workloads = wl_store_attnums("workload_rows", w_names, W_COUNT, R.w);
	R.specs = wl_store_attnums("specs", s_names, S_COUNT, R.s);
	R.authority = wl_store_attnums("spec_authority", a_names, A_COUNT, R.a);
	/* (queue_key(tenant_id, application_id) (an expression: -1), priority DESC, created_at, seq) */
	R.queue_idx = wl_store_index_of("queue_ready_idx", 4,
						   (int[4]) {-1, R.q[Q_PRIORITY], R.q[Q_CREATED_AT], R.q[Q_SEQ]});
	R.workloads_seq_idx = wl_store_index_of("workloads_seq_key", 2, (int[2]) {R.w[W_SEQ], R.w[W_TENANT_ID]});
	R.specs_idx = wl_store_index_of("specs_pkey", 2, (int[2]) {R.s[S_WORKLOAD_SEQ], R.s[S_TENANT_ID]});
	R.authority_idx = wl_store_index_of("spec_authority_pkey", 2,
										(int[2]) {R.a[A_WORKLOAD_SEQ], R.a[A_TENANT_ID]});
	R.revoked_idx = wl_store_index_of("revoked_grants_unswept_idx", 1, (int[1]) {-2});
	idx = index_open(R.queue_idx, AccessShareLock);
	R.created_cmp = get_opfamily_proc(idx->rd_opfamily[2], idx->rd_opcintype[2],
									  idx->rd_opcintype[2], BTORDER_PROC);
	R.seq_cmp = get_opfamily_proc(idx->rd_opfamily[3], idx->rd_opcintype[3],
								  idx->rd_opcintype[3], BTORDER_PROC);
	index_close(idx, AccessShareLock);
	R.deps_unmet = LookupFuncName(list_make2(makeString(get_namespace_name(wl_catalog_store_schema())),
											 makeString("dependencies_unmet")),
								  2, argtypes, false);
	R.generation = gen;
}

/* revocation_pending: REVOCATION_PENDING (a revoked grant not yet swept), by its partial index */
static bool
revocation_pending(Snapshot snap)
{
	return wl_store_index_has(R.revoked_idx, snap, NULL, NULL, 0);
}

static bool
text_equals(Datum d, const char *s)
{
	text	   *t = DatumGetTextPP(d);
	size_t		len = VARSIZE_ANY_EXHDR(t);

	return len == strlen(s) && memcmp(VARDATA_ANY(t), s, len) == 0;
}

/* capabilities_held: capability_snapshot <@ caps */
static bool
capabilities_held(Datum snapshot, ArrayType *caps)
{
	ArrayType  *a = DatumGetArrayTypeP(snapshot);
	int			n;
	char	  **items;

	if (ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) == 0)
		return true;
	items = wl_array_items(a, &n);
	for (int i = 0; i < n; i++)
	{
		if (items[i] == NULL || !wl_array_contains(caps, items[i]))
			return false;
	}
	return true;
}

/*
 * Whether a queue row is claimable (CLAIMABLE), and if not, whether it may
 * become so without a transaction that tells (store_ready.c): by time (not
 * due yet) or by a dependency moving into its state.
 */
typedef enum WlClaimable
{
	WL_CLAIMABLE,
	WL_NOT_CLAIMABLE,
	WL_NOT_DUE,					/* not due yet: claimable at its time */
	WL_NOT_MET					/* a dependency not in its state: claimable when it is */
} WlClaimable;

/* claimable: CLAIMABLE of the queue row v/n, dependencies asked last (through their function) */
static WlClaimable
claimable(const WlClaimRequest *r, TimestampTz now, const Datum *v, const bool *n)
{
	const int  *q = R.q;

	if (DatumGetBool(v[q[Q_BLOCKED]]) ||
		!text_equals(v[q[Q_TENANT_ID]], r->tenant_id) ||
		!text_equals(v[q[Q_APPLICATION_ID]], r->application_id ? r->application_id : "") ||
		!capabilities_held(v[q[Q_CAPABILITIES]], r->capabilities))
		return WL_NOT_CLAIMABLE;
	if (DatumGetTimestampTz(v[q[Q_AVAILABLE_AT]]) > now)
		return WL_NOT_DUE;
	if (DatumGetBool(v[q[Q_CHECKS_DEPENDENCIES]]) &&
		(wl_store_shard_active() ? wl_store_shard_deps_unmet(v[q[Q_TENANT_ID]], v[q[Q_SEQ]]) :
		 DatumGetBool(OidFunctionCall2(R.deps_unmet, v[q[Q_TENANT_ID]], v[q[Q_SEQ]]))))
		return WL_NOT_MET;
	return WL_CLAIMABLE;
}

/* rows in flight a claim from a point passes over before it asks how far the front moved */
#define WL_HELD_BEFORE_FRONT 8

/* The claim in progress: its request, clock, snapshot, open tables and what it took */
typedef struct Claim
{
	const WlClaimRequest *r;
	TimestampTz now;
	Snapshot	snap;
	Relation	queue,
				workloads,
				specs,
				queue_idx,
				seq_idx,		/* workloads_seq_key */
				specs_idx;
	TupleTableSlot *locked,		/* a queue row locked */
			   *row,			/* a workload row */
			   *spec;
	IndexScanDesc row_scan,		/* on seq_idx and specs_idx, begun at the first lookup */
				spec_scan;
	/* spec_authority, opened when the claim answers execution contexts */
	Relation	authority,
				authority_idx;
	TupleTableSlot *grants;
	IndexScanDesc grants_scan;
	BlockNumber rows_blocks,	/* workload_rows' and specs' lengths, asked once (wl_store_fetch_at) */
				specs_blocks;
	ItemPointerData spec_at;	/* the queue row's hint of where the taken workload's spec is */
	Datum		tenant;
	int64		queue_key;		/* workload.queue_key(tenant, application) */
	Jsonb	   *evidence;		/* {"worker_id": ...}: the events' evidence but token and attempt */
	WlAppender	events,			/* opened at the first workload taken */
				runs_app;		/* run rows of first claims */
	bool		carry;			/* the run rows carry the events (no row trigger on event_rows) */
	Relation	runs,
				runs_idx;
	TupleTableSlot *run;		/* a run row, of a workload claimed before */
	WlClaimed  *out;
	int			n;
	WlQueueKey *stops;			/* rows stepped over that may become claimable (r->stops) */
	int			nstops;
} Claim;

/* row_key: the queue row's key (priority, created_at, seq) */
static WlQueueKey
row_key(TupleTableSlot *slot)
{
	WlQueueKey	k;
	bool		isnull;

	k.priority = DatumGetInt32(slot_getattr(slot, R.q[Q_PRIORITY] + 1, &isnull));
	k.created_at = DatumGetTimestampTz(slot_getattr(slot, R.q[Q_CREATED_AT] + 1, &isnull));
	k.seq = DatumGetInt64(slot_getattr(slot, R.q[Q_SEQ] + 1, &isnull));
	return k;
}

/*
 * stop_at: a row stepped over that may become claimable: the claim's points
 * stay before it.  One whose dependency may move into its state without
 * its queue row being written is told to every claim, to be looked at again
 * a moment later (store_ready.c).
 */
#define WL_RECHECK_MS 100

static void
stop_at(Claim *c, const WlQueueKey *k, WlClaimable why)
{
	if (why == WL_NOT_MET)
		wl_store_ready_recheck(c->r->tenant_id, c->r->application_id ? c->r->application_id : "",
							   k, c->now + WL_RECHECK_MS * 1000);
	for (int i = 0; i < c->nstops; i++)
	{
		if (c->stops[i].priority == k->priority)
		{
			if (wl_queue_key_cmp(k, &c->stops[i]) < 0)
				c->stops[i] = *k;
			return;
		}
	}
	c->stops = c->stops ? repalloc(c->stops, sizeof(WlQueueKey) * (c->nstops + 1)) :
		palloc(sizeof(WlQueueKey));
	c->stops[c->nstops++] = *k;
}

/* stopped: a key as far as a point may go: before the claim's stop in its priority, if any */
static WlQueueKey
stopped(const Claim *c, const WlQueueKey *k)
{
	for (int i = 0; i < c->nstops; i++)
	{
		if (c->stops[i].priority == k->priority && wl_queue_key_cmp(&c->stops[i], k) <= 0)
		{
			WlQueueKey	b = c->stops[i];

			b.seq--;			/* just before it: (created_at, seq) > (c, s - 1) reaches it */
			return b;
		}
	}
	return *k;
}

/* event: the claim's event from -> to of the workload seq, with the moved row's (v) token and attempt */
static void
event(Claim *c, int64 seq, WlState from, WlState to, const Datum *v)
{
	wl_store_event_put_held(&c->events, c->r->tenant_id, seq, from, to, c->r->worker_id,
							c->r->role, c->now, c->evidence,
							DatumGetInt64(v[R.w[W_FENCING_TOKEN]]),
							DatumGetInt32(v[R.w[W_ATTEMPT_COUNT]]));
}

/*
 * carry: the claim's events (and the start's, with start => true) on the
 * moved run row (v/n), their sequences drawn now, as the event rows' would
 * be.  A run row claimed again carries nothing to lose here: it is READY,
 * and every writer that leads back to READY (P_SAVE_RUN, P_SAVE_MANY)
 * appended what it carried as event rows and cleared it.
 */
static void
carry(Claim *c, Datum *v, bool *n)
{
	int			claimed = wl_runs_merged_col(WL_RUN_CLAIMED_SEQ);
	int			started = wl_runs_merged_col(WL_RUN_STARTED_SEQ);
	int			worker = wl_runs_merged_col(WL_RUN_EVENT_WORKER);
	int			role = wl_runs_merged_col(WL_RUN_EVENT_ROLE);

	v[claimed] = Int64GetDatum(nextval_internal(wl_catalog_event_seq(), false));
	n[claimed] = false;
	n[started] = !c->r->start;
	if (c->r->start)
		v[started] = Int64GetDatum(nextval_internal(wl_catalog_event_seq(), false));
	v[worker] = CStringGetTextDatum(c->r->worker_id);
	n[worker] = false;
	v[role] = CStringGetTextDatum(c->r->role ? c->r->role : "");
	n[role] = false;
}

/* moved_values: the claimed row's new values (v/n, changed in place), as CLAIM_TAIL's SET list */
static void
moved_values(Claim *c, Datum *v, bool *n)
{
	const int  *w = R.w;
	const WlClaimRequest *r = c->r;
	int64		token = DatumGetInt64(v[w[W_FENCING_TOKEN]]) + 1;
	WlRow		d;

#define PUT(k, x) (v[w[k]] = (x), n[w[k]] = false)
#define PUT_NULL(k) (v[w[k]] = (Datum) 0, n[w[k]] = true)
	PUT(W_STATE, wl_catalog_state_datum(r->start ? WL_RUNNING : WL_CLAIMED));
	PUT(W_FENCING_TOKEN, Int64GetDatum(token));
	PUT(W_ATTEMPT_COUNT, Int32GetDatum(DatumGetInt32(v[w[W_ATTEMPT_COUNT]]) + 1));
	PUT(W_WORKER_ID, CStringGetTextDatum(r->worker_id));
	PUT(W_CLAIMED_BY, CStringGetTextDatum(r->role));
	PUT(W_CLAIM_ID, CStringGetTextDatum(wl_claim_id(TextDatumGetCString(v[w[W_WORKLOAD_ID]]),
													token, r->worker_id)));
	PUT(W_LEASE_EXPIRES_AT, DirectFunctionCall2(timestamptz_pl_interval,
												TimestampTzGetDatum(c->now),
												IntervalPGetDatum(r->lease)));
	PUT(W_UPDATED_AT, TimestampTzGetDatum(c->now));
	PUT(W_STATE_ENTERED_AT, TimestampTzGetDatum(c->now));
	PUT(W_CLAIMED_AT, TimestampTzGetDatum(c->now));
	if (r->start)
		PUT(W_STARTED_AT, TimestampTzGetDatum(c->now));
	else
		PUT_NULL(W_STARTED_AT);
	PUT_NULL(W_LAST_HEARTBEAT_AT);
	PUT_NULL(W_UNHELD_DEADLINE_AT);
	/* workload.claim_deadline(created_at, now, claim_ms, execution_ms, overall_ms, start) */
	memset(&d, 0, sizeof(d));
	d.state = r->start ? WL_RUNNING : WL_CLAIMED;
	d.created_at = DatumGetTimestampTz(v[w[W_CREATED_AT]]);
	d.state_entered_at = c->now;
	d.timeouts.claim_ms = n[w[W_CLAIM_MS]] ? 0 : DatumGetInt64(v[w[W_CLAIM_MS]]);
	d.timeouts.execution_ms = n[w[W_EXECUTION_MS]] ? 0 : DatumGetInt64(v[w[W_EXECUTION_MS]]);
	d.timeouts.overall_ms = n[w[W_OVERALL_MS]] ? 0 : DatumGetInt64(v[w[W_OVERALL_MS]]);
	wl_deadline_set(&d, r->start ? WL_CLAIMED : WL_READY);
	if (d.has_deadline)
		PUT(W_DEADLINE_AT, TimestampTzGetDatum(d.deadline_at));
	else
		PUT_NULL(W_DEADLINE_AT);
#undef PUT
#undef PUT_NULL
}

/* queue_hint: the queue row's hint (column q) of where a row is; invalid: none */
static void
queue_hint(Claim *c, int q, ItemPointer tid)
{
	bool		isnull;
	Datum		d = slot_getattr(c->locked, R.q[q] + 1, &isnull);

	if (isnull)
		ItemPointerSetInvalid(tid);
	else
		ItemPointerCopy((ItemPointer) DatumGetPointer(d), tid);
}

/* taken: what the claim returns of a row it moved (v/n) and its spec */
static void
taken(Claim *c, const Datum *v, const bool *n)
{
	WlClaimed  *o = &c->out[c->n++];
	const int  *w = R.w;
	const int  *s = R.s;

	o->workload_id = TextDatumGetCString(v[w[W_WORKLOAD_ID]]);
	/* where its fenced calls will find it (store_memo.c); its run row's: run_written */
	wl_store_memo_row(o->workload_id, &c->row->tts_tid);
	o->claim_id = TextDatumGetCString(v[w[W_CLAIM_ID]]);
	o->fencing_token = DatumGetInt64(v[w[W_FENCING_TOKEN]]);
	o->lease_expires_at = DatumGetTimestampTz(v[w[W_LEASE_EXPIRES_AT]]);
	o->attempt = DatumGetInt32(v[w[W_ATTEMPT_COUNT]]);
	o->checkpoint_sequence = DatumGetInt32(v[w[W_CHECKPOINT_SEQUENCE]]);
	o->key.priority = DatumGetInt32(v[w[W_PRIORITY]]);
	o->key.created_at = DatumGetTimestampTz(v[w[W_CREATED_AT]]);
	o->key.seq = DatumGetInt64(v[w[W_SEQ]]);
	o->lapses_at = n[w[W_AUTHORITY_EXPIRES_AT]] ? 0 :
		DatumGetTimestampTz(v[w[W_AUTHORITY_EXPIRES_AT]]);
	wl_store_ready_taken(c->r->tenant_id, c->r->application_id ? c->r->application_id : "",
						 &o->key, false);
	if (c->r->on_take)
	{
		/* the shared front moves no further than this claim's points may */
		WlQueueKey	front = stopped(c, &o->key);

		c->r->on_take(c->r->front_arg, &front);
	}
	if (!wl_store_fetch_keyed(c->specs, &c->specs_blocks, &c->spec_at, c->snap, c->spec,
							  s[S_WORKLOAD_SEQ] + 1, DatumGetInt64(v[w[W_SEQ]]),
							  s[S_TENANT_ID] + 1, c->tenant) &&
		!wl_store_by_key_in(&c->spec_scan, c->specs, c->specs_idx, c->snap, c->spec, F_INT8EQ,
							v[w[W_SEQ]], F_TEXTEQ, c->tenant))
		elog(ERROR, "workload \"%s\" has no spec", o->workload_id);
	slot_getallattrs(c->spec);
	o->definition_id = TextDatumGetCString(c->spec->tts_values[s[S_DEFINITION_ID]]);
	o->definition_revision = TextDatumGetCString(c->spec->tts_values[s[S_DEFINITION_REVISION]]);
	o->input = DatumGetJsonbPCopy(c->spec->tts_values[s[S_INPUT]]);
	/* what its execution context needs besides its grants (claim.c, with_contexts) */
	if (c->r->context)
	{
		o->capability_snapshot = DatumGetArrayTypePCopy(v[w[W_CAPABILITY_SNAPSHOT]]);
		o->environment = TextDatumGetCString(c->spec->tts_values[s[S_ENVIRONMENT]]);
		o->connection_scopes = DatumGetArrayTypePCopy(c->spec->tts_values[s[S_CONNECTION_SCOPES]]);
		o->grant_ids = DatumGetArrayTypePCopy(c->spec->tts_values[s[S_GRANT_IDS]]);
		if (c->authority == NULL)
		{
			c->authority = table_open(R.authority, AccessShareLock);
			c->authority_idx = index_open(R.authority_idx, AccessShareLock);
			c->grants = table_slot_create(c->authority, NULL);
		}
		if (!wl_store_by_key_in(&c->grants_scan, c->authority, c->authority_idx, c->snap, c->grants,
								F_INT8EQ, v[w[W_SEQ]], F_TEXTEQ, c->tenant))
			elog(ERROR, "workload \"%s\" has no authority", o->workload_id);
		slot_getallattrs(c->grants);
		o->authorization_snapshot =
			DatumGetJsonbPCopy(c->grants->tts_values[R.a[A_AUTHORIZATION_SNAPSHOT]]);
		o->run_authority = DatumGetJsonbPCopy(c->grants->tts_values[R.a[A_RUN_AUTHORITY]]);
	}
}

/*
 * clear_unheld: a workload claimed the first time that keeps a deadline for
 * the tick on its workload row (unheld_deadline_at) has it cleared there,
 * its row locked SKIP LOCKED (false: another transaction holds it, and the
 * workload is passed over); the run row carries the deadline from now on.
 */
static bool
clear_unheld(Claim *c, Datum *v, bool *n)
{
	TupleDesc	desc = RelationGetDescr(c->workloads);
	const int  *w = R.w;
	bool		moved;
	TupleTableSlot *next;
	bool		update_indexes;
	Datum	   *cv;
	bool	   *cn;

	if (n[w[W_UNHELD_DEADLINE_AT]])
		return true;
	if (!wl_store_lock_skip(c->workloads, &c->row->tts_tid, c->snap, c->row,
							LockTupleNoKeyExclusive, &moved))
		return false;
	slot_getallattrs(c->row);
	cv = palloc(sizeof(Datum) * desc->natts);
	cn = palloc(sizeof(bool) * desc->natts);
	memcpy(cv, c->row->tts_values, sizeof(Datum) * desc->natts);
	memcpy(cn, c->row->tts_isnull, sizeof(bool) * desc->natts);
	/* a newer version (READ COMMITTED): tested again, as EvalPlanQual would */
	if (moved && wl_catalog_state_from_oid(DatumGetObjectId(cv[w[W_STATE]])) != WL_READY)
		return false;
	cv[w[W_UNHELD_DEADLINE_AT]] = (Datum) 0;
	cn[w[W_UNHELD_DEADLINE_AT]] = true;
	next = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
	ExecStoreHeapTuple(heap_form_tuple(desc, cv, cn), next, true);
	simple_table_tuple_update(c->workloads, &c->row->tts_tid, next, c->snap, &update_indexes);
	if (update_indexes)
		wl_store_index_version(c->workloads, next);
	ExecDropSingleTupleTableSlot(next);
	return true;
}

/*
 * take: the workload of the locked queue row (c->locked), if it is READY
 * and no other transaction holds it: claimed, its queue row deleted, its
 * events appended.  The queue row is the lock of a workload never
 * claimed: its workload row is read, not locked or written (but see
 * clear_unheld), and its run row appended; one claimed before has its run
 * row locked (SKIP LOCKED) and updated.  False when it is passed over.
 */
static bool
take(Claim *c)
{
	TupleDesc	desc = RelationGetDescr(c->workloads);
	const int  *w = R.w;
	Datum		seq = slot_getattr(c->locked, R.q[Q_SEQ] + 1, &(bool) {false});
	bool		has_run = DatumGetBool(slot_getattr(c->locked, R.q[Q_HAS_RUN] + 1, &(bool) {false}));
	ItemPointerData row_at;
	bool		moved;
	Datum	   *v;
	bool	   *n;

	queue_hint(c, Q_SPEC_AT, &c->spec_at);
	queue_hint(c, Q_ROW_AT, &row_at);
	if (!wl_store_fetch_keyed(c->workloads, &c->rows_blocks, &row_at, c->snap, c->row,
							  w[W_SEQ] + 1, DatumGetInt64(seq), w[W_TENANT_ID] + 1, c->tenant) &&
		!wl_store_by_key_in(&c->row_scan, c->workloads, c->seq_idx, c->snap, c->row, F_INT8EQ,
							seq, F_TEXTEQ, c->tenant))
		return false;
	slot_getallattrs(c->row);
	v = palloc(sizeof(Datum) * wl_runs_merged_natts());
	n = palloc(sizeof(bool) * wl_runs_merged_natts());
	memcpy(v, c->row->tts_values, sizeof(Datum) * desc->natts);
	memcpy(n, c->row->tts_isnull, sizeof(bool) * desc->natts);
	for (int i = desc->natts; i < wl_runs_merged_natts(); i++)
		n[i] = true;
	if (has_run)
	{
		if (!wl_runs_find(c->runs, c->runs_idx, c->snap, c->run, seq, c->tenant, NULL) ||
			!wl_store_lock_skip(c->runs, &c->run->tts_tid, c->snap, c->run,
								LockTupleNoKeyExclusive, &moved))
			return false;
		wl_runs_overlay(c->run, v, n);
	}
	if (wl_catalog_state_from_oid(DatumGetObjectId(v[w[W_STATE]])) != WL_READY)
		return false;
	if (!has_run && !clear_unheld(c, v, n))
		return false;
	if (c->events.rel == NULL)
	{
		if (!wl_store_events_open(&c->events) ||
			!wl_store_appender_open(&c->runs_app, &wl_runs_target))
			elog(ERROR, "a claim's rows could not be appended");

		/*
		 * nothing the claim reads is among them: written when it ends, where
		 * it may write more than one (one row alone is cheaper as it comes)
		 */
		if (c->r->max_items > 1)
			wl_store_appender_hold(&c->runs_app);
		if (c->r->max_items > 1 || c->r->start)
			wl_store_appender_hold(&c->events);
		/*
		 * not on Citus: its statements that write a run row there do not
		 * append what the row carries (workload.citus_distribute_tables)
		 */
		c->carry = !wl_store_citus() && !wl_store_row_triggers(c->events.rel, true, false, false);
	}
	moved_values(c, v, n);
	if (c->carry)
		carry(c, v, n);
	if (has_run)
	{
		TupleTableSlot *next = MakeSingleTupleTableSlot(RelationGetDescr(c->runs), &TTSOpsHeapTuple);
		bool		update_indexes;

		ExecStoreHeapTuple(wl_runs_form(RelationGetDescr(c->runs), v, n), next, true);
		simple_table_tuple_update(c->runs, &c->run->tts_tid, next, c->snap, &update_indexes);
		if (update_indexes)
			wl_store_index_version(c->runs, next);
		wl_store_memo_run(DatumGetInt64(seq), &next->tts_tid);
		ExecDropSingleTupleTableSlot(next);
	}
	else
	{
		Datum		rv[WL_RUN_NCOLS];
		bool		rn[WL_RUN_NCOLS];

		wl_runs_values(v, n, rv, rn);
		wl_store_appender_put(&c->runs_app, rv, rn);
	}
	simple_table_tuple_delete(c->queue, &c->locked->tts_tid, c->snap);
	if (!c->carry)
	{
		event(c, DatumGetInt64(seq), WL_READY, WL_CLAIMED, v);
		if (c->r->start)
			event(c, DatumGetInt64(seq), WL_CLAIMED, WL_RUNNING, v);
	}
	taken(c, v, n);
	return true;
}

/*
 * wl_store_claim_segments: the queue, in its order, as segments (out: at
 * most 2 * n + 1; returns their number): before, between and after the
 * points (priorities best first, all different), a range of priorities
 * scanned from its start; at each point, its priority after it.  Empty
 * ranges are left out.
 */
int
wl_store_claim_segments(const WlQueueKey *pt, int n, WlSegment *out)
{
	int			k = 0;
	int64		above = (int64) PG_INT32_MAX + 1;

	for (int i = 0; i <= n; i++)
	{
		int64		below = i < n ? pt[i].priority : (int64) PG_INT32_MIN - 1;

		if (above - below > 1)
			out[k++] = (WlSegment) {.point = false, .hi = above, .lo = below};
		if (i == n)
			break;
		out[k++] = (WlSegment) {.point = true, .priority = pt[i].priority,
		.created_at = pt[i].created_at, .seq = pt[i].seq};
		above = pt[i].priority;
	}
	return k;
}

/*
 * segment_keys: the queue index's keys for one segment (keys[0] the queue):
 * a range of priorities (below hi, above lo), or one priority after its
 * point (priority = p and (created_at, seq) > (c, s)).  Returns their number.
 */
static int
segment_keys(const WlSegment *g, ScanKey keys, ScanKey row)
{
	int			k = 1;

	if (g->point)
	{
		ScanKeyEntryInitialize(&keys[k++], 0, 2, BTEqualStrategyNumber, InvalidOid,
							   InvalidOid, F_INT4EQ, Int32GetDatum(g->priority));
		ScanKeyEntryInitialize(&row[0], SK_ROW_MEMBER, 3, BTGreaterStrategyNumber, TIMESTAMPTZOID,
							   InvalidOid, R.created_cmp, TimestampTzGetDatum(g->created_at));
		ScanKeyEntryInitialize(&row[1], SK_ROW_MEMBER | SK_ROW_END, 4, BTGreaterStrategyNumber,
							   INT8OID, InvalidOid, R.seq_cmp, Int64GetDatum(g->seq));
		MemSet(&keys[k], 0, sizeof(ScanKeyData));
		keys[k].sk_flags = SK_ROW_HEADER;
		keys[k].sk_attno = 3;
		keys[k].sk_strategy = BTGreaterStrategyNumber;
		keys[k++].sk_argument = PointerGetDatum(row);
		return k;
	}
	if (g->hi <= PG_INT32_MAX)
		ScanKeyEntryInitialize(&keys[k++], 0, 2, BTLessStrategyNumber, InvalidOid,
							   InvalidOid, F_INT4LT, Int32GetDatum((int32) g->hi));
	if (g->lo >= PG_INT32_MIN)
		ScanKeyEntryInitialize(&keys[k++], 0, 2, BTGreaterStrategyNumber, InvalidOid,
							   InvalidOid, F_INT4GT, Int32GetDatum((int32) g->lo));
	return k;
}

/*
 * in_flight: whether a claim from points passes over a queue row without
 * trying its lock: deleted (claimed, cancelled) by a transaction, or
 * locked by one still running.  A lock left by a transaction that has
 * ended (a claim that took the row's lock and then passed over its
 * workload, committed or not) is not in flight: with the statement's test
 * (xmax = 0) such a row was passed over by every claim from points until
 * the next claim from the start of the queue, behind work of lower
 * priority (claim_passes_over_work_held_or_gone, second permutation).
 */
static bool
in_flight(HeapTupleHeader t)
{
	TransactionId x = HeapTupleHeaderGetRawXmax(t);

	if (!TransactionIdIsValid(x) || (t->t_infomask & HEAP_XMAX_INVALID))
		return false;
	if (!HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask) || (t->t_infomask & HEAP_XMAX_IS_MULTI))
		return true;
	return TransactionIdIsInProgress(x);
}

/*
 * held_now: whether a transaction still running has deleted, updated or
 * locked the queue row: its lock attempt (SKIP LOCKED) would fail, so a
 * scan from the start of the queue passes over it without one (a
 * heavyweight lock attempt and an exclusive lock of a page every claimer
 * writes; at 64 sessions claiming 10 at a time a full scan met about 350
 * of them).  A lock several transactions share (a multixact), or this
 * transaction's own, is tried.
 */
static bool
held_now(HeapTupleHeader t)
{
	TransactionId x = HeapTupleHeaderGetRawXmax(t);

	if (!TransactionIdIsValid(x) ||
		(t->t_infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_COMMITTED | HEAP_XMAX_IS_MULTI)) ||
		TransactionIdIsCurrentTransactionId(x))
		return false;
	return TransactionIdIsInProgress(x);
}

/*
 * ahead: whether the shared front of segment g's priority is past the queue
 * row in slot (a row in flight this claim passed over); g's point is moved
 * to it if so.  While this claim's scan waited for a core, the claims that
 * started since took the rows after its point and moved the front: without
 * this, it stepped over each of them (a heap fetch and a buffer lock on
 * the pages every claimer writes), 8.4 rows a job at 64 sessions claiming
 * 10 at a time on 2 cores, hundreds in one claim in ten.
 */
static bool
ahead(Claim *c, TupleTableSlot *slot, WlSegment *g)
{
	WlQueueKey	front;
	WlQueueKey	here;

	if (c->r->front == NULL || !c->r->front(c->r->front_arg, g->priority, &front))
		return false;
	/* never past a row told claimable to this claim (its point was lowered to it) */
	for (int i = 0; i < c->r->nlowered; i++)
	{
		if (c->r->lowered[i].priority == g->priority &&
			wl_queue_key_cmp(&c->r->lowered[i], &front) < 0)
			return false;
	}
	here.priority = g->priority;
	here.created_at = DatumGetTimestampTz(slot_getattr(slot, R.q[Q_CREATED_AT] + 1, &(bool) {false}));
	here.seq = DatumGetInt64(slot_getattr(slot, R.q[Q_SEQ] + 1, &(bool) {false}));
	if (wl_queue_key_cmp(&front, &here) <= 0)
		return false;
	g->created_at = front.created_at;
	g->seq = front.seq;
	return true;
}

/*
 * claim_segment: claims from one segment of the queue until the claim has
 * max_items; resumed (from points): passes over rows in flight without
 * trying their locks, as CLAIM_RESUME_SQL does, and after every
 * WL_HELD_BEFORE_FRONT of them goes on from the shared front when it is
 * past them (ahead); from the start: passes over the rows a running
 * transaction holds without trying their locks (held_now).
 */
static void
claim_segment(Claim *c, Relation idx, const WlSegment *from, bool resumed)
{
	ScanKeyData keys[4];
	ScanKeyData row[2];
	int			nkeys;
	TupleTableSlot *slot = table_slot_create(c->queue, NULL);
	IndexScanDesc scan;
	WlSegment	g = *from;
	int			held = 0;		/* rows in flight passed over since the front was asked */

	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid, InvalidOid,
						   F_INT8EQ, Int64GetDatum(c->queue_key));
	nkeys = segment_keys(&g, keys, row);
	scan = index_beginscan(c->queue, idx, c->snap, nkeys, 0);
	index_rescan(scan, keys, nkeys, NULL, 0);
	while (c->n < c->r->max_items && index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		bool		moved;
		WlClaimable why;
		HeapTupleHeader t = ExecFetchSlotHeapTuple(slot, false, NULL)->t_data;

		if (resumed ? in_flight(t) : held_now(t))
		{
			if (resumed && g.point && ++held == WL_HELD_BEFORE_FRONT)
			{
				held = 0;
				if (ahead(c, slot, &g))
				{
					nkeys = segment_keys(&g, keys, row);
					index_rescan(scan, keys, nkeys, NULL, 0);
				}
			}
			continue;
		}
		slot_getallattrs(slot);
		why = claimable(c->r, c->now, slot->tts_values, slot->tts_isnull);
		if (why == WL_NOT_DUE || why == WL_NOT_MET)
		{
			WlQueueKey	k = row_key(slot);

			stop_at(c, &k, why);
		}
		if (why != WL_CLAIMABLE)
			continue;
		if (!wl_store_lock_skip(c->queue, &slot->tts_tid, c->snap, c->locked, LockTupleExclusive, &moved))
			continue;
		if (moved)
		{
			WlClaimable again;

			slot_getallattrs(c->locked);
			again = claimable(c->r, c->now, c->locked->tts_values, c->locked->tts_isnull);
			if (again != WL_CLAIMABLE)
			{
				if (again == WL_NOT_DUE || again == WL_NOT_MET)
				{
					WlQueueKey	k = row_key(c->locked);

					stop_at(c, &k, again);
				}
				continue;
			}
		}
		if (!take(c))
		{
			/* locked and left: claimable again, for others, when this transaction ends */
			WlQueueKey	k = row_key(c->locked);

			wl_store_ready_taken(c->r->tenant_id,
								 c->r->application_id ? c->r->application_id : "", &k, true);
			stop_at(c, &k, WL_NOT_DUE);
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/* open: the claim's tables and slots; false (nothing opened) where the statement must run */
static bool
open_claim(Claim *c)
{
	if (!wl_store_direct() || c->r->capabilities == NULL)
		return false;
	/* in a shard scope, only the scope's tenant's rows are on these shards */
	if (wl_store_shard_active() &&
		(wl_store_call_tenant() == NULL || strcmp(wl_store_call_tenant(), c->r->tenant_id) != 0))
		return false;
	wl_store_writable("UPDATE");
	claim_resolve();
	c->queue = table_open(R.queue, RowExclusiveLock);
	c->workloads = table_open(R.workloads, RowExclusiveLock);
	c->runs = wl_runs_open(&c->runs_idx);
	if (wl_store_row_triggers(c->workloads, false, true, true) ||
		wl_store_row_triggers(c->queue, false, true, true) ||
		wl_store_row_triggers(c->runs, true, true, false))
	{
		wl_runs_close(c->runs, c->runs_idx);
		table_close(c->workloads, NoLock);
		table_close(c->queue, NoLock);
		return false;
	}
	/* as SPI does before a statement: see what this transaction wrote so far */
	if (c->r->snapshot != NULL)
		PushActiveSnapshot(c->r->snapshot);
	else
	{
		CommandCounterIncrement();
		PushActiveSnapshot(GetTransactionSnapshot());
	}
	c->snap = GetActiveSnapshot();
	if (revocation_pending(c->snap))
	{
		PopActiveSnapshot();
		wl_runs_close(c->runs, c->runs_idx);
		table_close(c->workloads, NoLock);
		table_close(c->queue, NoLock);
		return false;
	}
	c->specs = table_open(R.specs, AccessShareLock);
	c->queue_idx = index_open(R.queue_idx, RowExclusiveLock);
	c->seq_idx = index_open(R.workloads_seq_idx, RowExclusiveLock);
	c->specs_idx = index_open(R.specs_idx, AccessShareLock);
	c->locked = table_slot_create(c->queue, NULL);
	c->row = table_slot_create(c->workloads, NULL);
	c->spec = table_slot_create(c->specs, NULL);
	c->run = table_slot_create(c->runs, NULL);
	return true;
}

/*
 * wl_store_claim_direct: the claim of wl_store_claim (r->workload_id
 * unset) without a plan: the number claimed (*out: them, in no order), or
 * -1 where it cannot run here (nothing done: run the statement).
 */
int
wl_store_claim_direct(const WlClaimRequest *r, WlClaimed **out)
{
	Claim		c = {.r = r, .now = wl_now(), .rows_blocks = InvalidBlockNumber,
	.specs_blocks = InvalidBlockNumber};
	WlSegment  *segs;
	int			nsegs;
	WlJson		evidence;
	const char *app;

	if (!open_claim(&c))
		return -1;
	c.tenant = CStringGetTextDatum(r->tenant_id);
	app = r->application_id ? r->application_id : "";
	c.queue_key = wl_queue_key(r->tenant_id, strlen(r->tenant_id), app, strlen(app));
	wl_json_begin(&evidence);
	wl_json_str(&evidence, "worker_id", r->worker_id);
	c.evidence = wl_json_end(&evidence);
	c.out = palloc0(sizeof(WlClaimed) * (r->max_items + 1));
	segs = palloc(sizeof(WlSegment) * (2 * r->npoints + 1));
	nsegs = r->points ? wl_store_claim_segments(r->points, r->npoints, segs) : 1;
	if (!r->points)
		segs[0] = (WlSegment) {.point = false, .hi = (int64) PG_INT32_MAX + 1, .lo = (int64) PG_INT32_MIN - 1};
	for (int i = 0; i < nsegs && c.n < r->max_items; i++)
		claim_segment(&c, c.queue_idx, &segs[i], r->points != NULL);
	if (c.row_scan)
		index_endscan(c.row_scan);
	if (c.spec_scan)
		index_endscan(c.spec_scan);
	index_close(c.queue_idx, NoLock);
	index_close(c.seq_idx, NoLock);
	index_close(c.specs_idx, NoLock);
	wl_store_appender_close(&c.events);
	wl_store_appender_close(&c.runs_app);
	ExecDropSingleTupleTableSlot(c.run);
	wl_runs_close(c.runs, c.runs_idx);
	ExecDropSingleTupleTableSlot(c.locked);
	ExecDropSingleTupleTableSlot(c.row);
	ExecDropSingleTupleTableSlot(c.spec);
	if (c.authority)
	{
		if (c.grants_scan)
			index_endscan(c.grants_scan);
		ExecDropSingleTupleTableSlot(c.grants);
		index_close(c.authority_idx, NoLock);
		table_close(c.authority, NoLock);
	}
	table_close(c.specs, NoLock);
	table_close(c.workloads, NoLock);
	table_close(c.queue, NoLock);
	PopActiveSnapshot();
	*out = c.out;
	((WlClaimRequest *) r)->stops = c.stops;
	((WlClaimRequest *) r)->nstops = c.nstops;
	return c.n;
}
