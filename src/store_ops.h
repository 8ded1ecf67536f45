/*
 * store_ops.h: the storage layer's typed interface: one wrapper per
 * statement (store_rows.c: workload rows and events; store_create.c:
 * creation and the dependency graph; store_claim.c: the claim;
 * store_parts.c: specs, attempts, results, checkpoints, waits, compensation
 * steps; store_meta.c: documents, keys, revocations, members, maintenance
 * scans; store_sched.c: schedules and their events).  Each wrapper copies what it returns into the current memory
 * context and frees its tuple table.  Nothing here decides: membership comes
 * in as a WlCaller, and the rules (states, deadlines) come from the layers
 * below.  Layer 2.
 *
 * Lock order, everywhere: the workload row (FOR NO KEY UPDATE), then its
 * attempts, checkpoints, results, events, waits and compensation steps.
 * workload_signal reads open waits without locking them, then locks each
 * workload row in workload_id order and re-reads its wait under that lock.
 * A dependency is read FOR SHARE (its workload, queue and run rows), so the
 * create waits while a worker's transaction holds it (store.c's header).
 */
#ifndef WL_STORE_OPS_H
#define WL_STORE_OPS_H

#include "datatype/timestamp.h"
#include "utils/snapshot.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "row.h"
#include "spec.h"

/*
 * Who a statement acts for: everywhere (admin: a superuser, workload_admin,
 * or the domain acting for the system), or as the role named, which sees
 * and locks only rows of its tenants and applications.
 */
typedef struct WlCaller
{
	const char *role;
	bool		admin;
	bool		superuser;
} WlCaller;

/* ---- store_rows.c ---- */
extern bool wl_store_lock(const char *workload_id, const WlCaller *who, WlRow *row);
extern bool wl_store_lock_unheld(const char *workload_id, const WlCaller *who, WlRow *row);
extern void wl_store_lock_many(char **ids, int n, const WlCaller *who, WlRow *rows, bool *found);
extern void wl_store_save(WlRow *row);
extern void wl_store_event(const WlRow *row, const WlState *from, WlState to,
						   const char *actor, const char *role, Jsonb *evidence);
extern bool wl_store_event_carried(const WlRow *row, const WlState *from, WlState to);
extern Jsonb *wl_store_event_evidence(Jsonb *rest, bool has_token, int64 token,
									  bool has_attempt, int32 attempt);
extern void wl_store_save_many(WlRow **rows, int n, const WlState *from, WlState to,
							   const char *actor, const char *role, Jsonb **evidence);
extern void wl_store_row_put(const WlSpec *spec, const char *workload_id, int64 seq,
							 TimestampTz now, const WlRow *first, WlRow *row);

/* ---- store_create.c ---- */
extern char *wl_store_idempotent(const char *tenant_id, const char *application_id,
								 const char *idempotency_key, TimestampTz *not_before);
extern int64 wl_store_next_seq(void);
extern bool wl_store_spec_put(const WlSpec *spec, const char *workload_id, int64 seq,
							  const char *input_hash, const char *role, Jsonb *run_authority,
							  ArrayType *grant_ids);
extern void wl_store_dependency_put(const char *tenant_id, const char *workload_id,
									const char *depends_on, WlState required);
extern bool wl_store_dependency_state(const char *depends_on, const char *tenant_id,
									  const char *application_id, WlState *state);
extern int64 wl_store_unmet_dependencies(const WlRow *row);
extern void wl_store_depended_on(WlRow **rows, int n, bool *held);
extern void wl_store_deps_queue(const WlRow *row, bool *checks, bool *blocked);
extern void wl_store_unblock_dependents(const char *tenant_id, char **ids, int n);
extern char **wl_store_dependents(const char *workload_id, const char *tenant_id, WlState final,
								  const char *after, const char *only, int *n, char ***met,
								  int *nmet);
/* what is left of a cascade, a maintenance pass's (workload.cascades) */
typedef struct WlCascadeLeft
{
	WlState		final;
	char	   *after_id;		/* a frame: its dependents after this (NULL: all) */
	char	   *dependent_id;	/* NULL for a frame; else only this dependent */
} WlCascadeLeft;
extern void wl_store_cascade_put(const char *tenant_id, const char *workload_id, WlState final,
								 const char *after_id, const char *dependent_id);
extern int	wl_store_cascade_take(const char *tenant_id, const char *workload_id,
								  WlCascadeLeft **out);

/*
 * A fenced call made as one conditional statement: the row moves only if
 * the fence holds (the current claim, unexpired, of the caller's role, on a
 * row the caller may touch) and the row is in state `from`.  START moves it
 * to RUNNING, BEAT extends the lease (until, progress), COMPLETE moves it to
 * SUCCEEDED with result_id and releases the claim.
 */
typedef enum WlFencedKind
{
	WL_FENCED_START,
	WL_FENCED_BEAT,
	WL_FENCED_COMPLETE
} WlFencedKind;

typedef struct WlFencedCall
{
	WlFencedKind kind;
	const WlFence *fence;
	const WlCaller *who;
	WlState		from;
	WlState		to;
	TimestampTz until;			/* BEAT: the new lease */
	Jsonb	   *progress;		/* BEAT: NULL keeps the last */
	const char *result_id;		/* COMPLETE */
	bool		result_free;	/* COMPLETE: and only if no result of its tenant and application has that id */
	/*
	 * COMPLETE: the result (its output checked, never NULL), stored by the
	 * completion's own update of the run row
	 */
	Jsonb	   *output;
	ArrayType  *artifacts;
	int			schema_version;
} WlFencedCall;

extern bool wl_store_fenced(const WlFencedCall *c, WlRow *row);

/* A place in a queue of one tenant and application: its order is priority DESC, created_at, seq. */
typedef struct WlQueueKey
{
	int			priority;
	TimestampTz created_at;
	int64		seq;
} WlQueueKey;

/* A claim: of up to max_items due READY workloads of one tenant, or of one named workload. */
typedef struct WlClaimRequest
{
	const char *tenant_id;
	const char *application_id;
	ArrayType  *capabilities;
	int			max_items;
	const char *worker_id;
	Interval   *lease;
	const char *workload_id;	/* claim this one (checked by the caller), or NULL */
	int64		workload_seq;	/* and its creation sequence */
	bool		start;
	bool		context;		/* verify each and answer its execution context (claim.c) */
	const char *role;
	/* claim after these points (one per priority, best first; claim_resume.c), or NULL */
	const WlQueueKey *points;
	int			npoints;
	/*
	 * the queue's shared front (claim_resume.c), or NULL: told of each
	 * workload the claim takes, as it takes it; asked, by a claim from
	 * points that meets rows other claims hold, how far it moved since
	 * (false: no front for that priority)
	 */
	void		(*on_take) (void *arg, const WlQueueKey *key);
	bool		(*front) (void *arg, int priority, WlQueueKey *key);
	void	   *front_arg;
	/* the snapshot a claim from points runs with (taken before the points were set), or NULL */
	Snapshot	snapshot;
	/* the rows told claimable that lowered the points (a claim never jumps past one) */
	const WlQueueKey *lowered;
	int			nlowered;
	/*
	 * out: rows the claim stepped over that may become claimable without a
	 * transaction telling (not due yet, a dependency not in its state): a
	 * point stays before each (one per priority, the least); and whether the
	 * claim scanned from the start of the queue (it ran without its points)
	 */
	WlQueueKey *stops;
	int			nstops;
	bool		scanned_from_start;
} WlClaimRequest;

/* One claimed workload: the row workload_claim returns. */
typedef struct WlClaimed
{
	char	   *workload_id;
	char	   *claim_id;
	int64		fencing_token;
	TimestampTz lease_expires_at;
	int			attempt;
	char	   *definition_id;
	char	   *definition_revision;
	Jsonb	   *input;
	int			checkpoint_sequence;
	WlQueueKey	key;			/* where it stood in the queue */
	TimestampTz lapses_at;		/* when its authority lapses (0: never) */
	Jsonb	   *context;		/* its execution context, when asked for (claim.c) */
	/* what the context needs besides its grants, when a claim read it (else NULL) */
	ArrayType  *capability_snapshot;
	char	   *environment;
	ArrayType  *connection_scopes;
	ArrayType  *grant_ids;
	Jsonb	   *authorization_snapshot;
	Jsonb	   *run_authority;
} WlClaimed;

/* store_ready.c: rows that became claimable, told between the server's sessions */
extern void wl_store_ready_init(void);
extern bool wl_store_ready_here(void);
extern void wl_store_ready_claimable(const char *tenant_id, const char *application_id,
									 const WlQueueKey *key, TimestampTz due);
extern void wl_store_ready_recheck(const char *tenant_id, const char *application_id,
								   const WlQueueKey *key, TimestampTz due);
extern void wl_store_ready_taken(const char *tenant_id, const char *application_id,
								 const WlQueueKey *key, bool left);
extern bool wl_store_ready_read(const char *tenant_id, const char *application_id,
								Snapshot snap, TimestampTz now, uint64 *seen, WlQueueKey *lower,
								int max, int *nlower, bool *full);

/* wl_queue_key_cmp: queue order (priority DESC, created_at, seq), as the claim's index */
static inline int
wl_queue_key_cmp(const WlQueueKey *a, const WlQueueKey *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->created_at != b->created_at)
		return a->created_at < b->created_at ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

extern int	wl_claimed_cmp(const void *a, const void *b);

extern int	wl_store_claim(const WlClaimRequest *r, WlClaimed **out);

/* ---- store_parts.c ---- */
typedef struct WlSpecRow
{
	Jsonb	   *authorization_snapshot;
	Jsonb	   *run_authority;
	ArrayType  *connection_scopes;
	char	   *definition_id;
	char	   *definition_revision;
	char	   *environment;
	Jsonb	   *governing_snapshots;
	Jsonb	   *completion_criteria;
	int			priority;
	char	   *created_by;		/* the database role that created the workload */
	ArrayType  *grant_ids;		/* its authorization chain, as stored at create */
} WlSpecRow;

extern void wl_store_policy(const WlRow *row, WlPolicy *p);
extern bool wl_store_revoked_among(ArrayType *ids);
extern void wl_store_spec_read(const WlRow *row, WlSpecRow *out);
extern void wl_store_attempt_close(WlRow *row, const char *outcome, const char *kind,
								   const char *error);

/* A result already stored under a result id. */
typedef struct WlStoredResult
{
	char	   *workload_id;
	WlFence		provenance;
	Jsonb	   *doc;
} WlStoredResult;

/* A result to store for the current attempt of a locked row. */
typedef struct WlNewResult
{
	const WlRow *row;
	const WlFence *fence;
	const char *result_id;
	Jsonb	   *output;
	ArrayType  *artifacts;
	int			schema_version;
} WlNewResult;

/*
 * One item of a batched fenced completion (wl_store_fenced_complete_many):
 * what the worker presents, and, when done, the row it moved (workload_id,
 * tenant_id, application_id, seq, attempt_count, state) and its result's
 * document.
 */
typedef struct WlFencedResult
{
	const WlFence *fence;
	const char *result_id;
	Jsonb	   *output;
	ArrayType  *artifacts;
	int			schema_version;
	bool		done;
	WlRow		row;
	Jsonb	   *doc;
} WlFencedResult;

extern int	wl_store_fenced_complete_many(WlFencedResult *items, int n, const char *worker_id,
										 const WlCaller *who, WlState from, WlState to);

extern bool wl_store_result_find(const WlRow *row, const char *result_id, WlStoredResult *out);
extern void wl_store_result_find_many(const WlRow *rows, char **result_ids, int n, bool *found,
									  WlStoredResult *out);
extern Jsonb *wl_store_result_put(const WlNewResult *r);
extern void wl_store_result_put_many(const WlNewResult *r, int n, Jsonb **docs);

typedef struct WlCheckpointRow
{
	int			sequence;
	char	   *checkpoint_id;
	Jsonb	   *state;
	char	   *state_hash;
	char	   *key_id;
	char	   *tag;
	Jsonb	   *doc;			/* the checkpoint document, with its state */
} WlCheckpointRow;

extern Jsonb *wl_store_checkpoint_put(const WlRow *row, const char *checkpoint_id, Jsonb *state,
									  const char *state_hash, const char *key_id,
									  const char *tag);
extern bool wl_store_checkpoint_last(const WlRow *row, WlCheckpointRow *out);

/* The open wait of a workload. */
typedef struct WlWait
{
	int			number;
	char	   *kind;
	char	   *wake_key;
	TimestampTz deadline;
} WlWait;

/* How a wait was answered. */
typedef struct WlWaitAnswer
{
	const char *outcome;
	Jsonb	   *payload;
	bool		has_decision;
	bool		approved;
	const char *approver;
	const char *approver_role;
	const char *note;
} WlWaitAnswer;

extern void wl_store_wait_put(const WlRow *row, const char *kind, const char *wake_key,
							  TimestampTz deadline);
extern bool wl_store_wait_open(const WlRow *row, WlWait *w);
extern void wl_store_wait_resolve(const WlRow *row, int number, const WlWaitAnswer *a);
extern void wl_store_wait_close(const WlRow *row, const char *outcome);
extern Jsonb *wl_store_wait_last(const WlRow *row);
extern char **wl_store_waits_keyed(const char *tenant_id, const char *application_id,
								   const char *wake_key, TimestampTz now, int *n);

/* A compensation step. */
typedef struct WlStep
{
	int			step;
	char	   *capability;
	Jsonb	   *input;
	char	   *digest;
	char	   *compensation_id;
} WlStep;

extern WlStep *wl_store_steps(const WlRow *row, int *n);
extern Jsonb *wl_store_step_put(const WlRow *row, int step, const char *capability,
								Jsonb *input, const char *input_hash, const char *digest);
extern void wl_store_step_bind(const WlRow *row, int step, const char *compensation_id,
							   const char *actor);

/* ---- store_meta.c ---- */
typedef struct WlEventRow
{
	int64		sequence;
	char	   *event_type;
	bool		has_from;
	WlState		from;
	WlState		to;
	char	   *actor;
	TimestampTz at;
	Jsonb	   *evidence;
} WlEventRow;

extern Jsonb *wl_store_document(const char *workload_id, bool full, const WlCaller *who);
extern Jsonb **wl_store_list(const char *tenant_id, const char *application_id,
							 const WlState *state, int lim, int *n);
extern WlEventRow *wl_store_history(const char *workload_id, int *n);
extern Jsonb *wl_store_stats(const char *tenant_id, const char *application_id, TimestampTz now);

typedef struct WlKey
{
	char	   *key_id;
	bytea	   *secret;
	bool		retired;
} WlKey;

extern bool wl_store_key_current(WlKey *k);
extern bool wl_store_key_get(const char *key_id, WlKey *k);
extern void wl_store_key_put(const char *key_id, bytea *secret, TimestampTz at);
extern bool wl_store_key_retire(const char *key_id, TimestampTz at);
extern int64 wl_store_keys_other(const char *key_id);
extern ArrayType *wl_store_grant_chain(const char *grant_id, const char *parent, bool *revoked);
extern ArrayType *wl_store_grants_chain(ArrayType *ids, bool *revoked);
extern void wl_store_lineage_put(const char *grant_id, const char *parent, const char *tenant_id,
								 const char *application_id, TimestampTz at);
extern void wl_store_revoke(const char *grant_id, TimestampTz at, const char *role);

/* A revocation whose queued work is still to be dead-lettered, and how far its sweep has come. */
typedef struct WlRevocation
{
	char	   *grant_id;
	char	   *sweep_after;
} WlRevocation;

extern int	wl_store_revocations_unswept(int limit, WlRevocation **out);
extern char **wl_store_revoked_slice(const char *grant_id, const char *after, int limit,
									 char **last, int *scanned, int *n);
extern void wl_store_revocation_progress(const char *grant_id, const char *after,
										 bool done, TimestampTz at);
extern bytea *wl_store_channel_secret(void);
extern void wl_store_channel_secret_put(bytea *secret, TimestampTz at);

/* A tenant's and application's own channel secret (rotated since CREATE EXTENSION). */
typedef struct WlChannelPair
{
	char	   *tenant_id;
	char	   *application_id;
	bytea	   *secret;
} WlChannelPair;

extern int	wl_store_channel_pairs(WlChannelPair **out);
extern void wl_store_channel_pair_put(const char *tenant_id, const char *application_id,
									  bytea *secret, TimestampTz at);
extern Oid	wl_store_channel_secrets_rel(void);
extern void wl_store_tenant_use(const char *tenant_id, int64 *active, int64 *bytes);
extern int64 wl_store_tenant_schedules(const char *tenant_id, const char *application_id,
									   const char *schedule_id);
extern bool wl_store_member(const char *role, const char *tenant_id, const char *application_id);
extern void wl_store_member_put(const char *role, Oid role_oid, const char *tenant_id,
								const char *application_id);
extern bool wl_store_member_del(Oid role_oid, const char *tenant_id, const char *application_id);
extern bool wl_store_member_del_dropped(const char *role, const char *tenant_id,
										const char *application_id);

/* A row a maintenance scan found due, and where the scan has got to. */
/* A row a maintenance scan found due, and its place in the fair order. */
typedef struct WlDue
{
	char	   *workload_id;
	TimestampTz at;
	char	   *tenant_id;
	int64		rank;			/* 1 for each tenant's soonest, 2 for its next, ... */
} WlDue;

extern void wl_store_held_begin(void);
extern void wl_store_held_end(void);
extern int	wl_store_expired(TimestampTz now, const WlCaller *who, int limit, WlDue **out);
extern int	wl_store_deadline_due(TimestampTz now, int limit, WlDue **out);
extern int	wl_store_held_deadline_due(TimestampTz now, int limit, WlDue **out);
extern int	wl_store_heartbeat_due(TimestampTz now, int limit, WlDue **out);
extern int	wl_store_cascades_due(int limit, WlDue **out);
extern uint64 wl_store_purge(TimestampTz before, int batch, bool include_dead_letter);

/* ---- store_bulk.c ---- */
/* One new workload of a batch (workload_create_many): its spec and what create derived. */
typedef struct WlNewWorkload
{
	const WlSpec *spec;
	const char *workload_id;
	const char *input_hash;
	const char *actor;			/* its events' actor */
	Jsonb	   *authorization_snapshot; /* as stored */
	Jsonb	   *run_authority;	/* as stored */
	ArrayType  *grant_ids;
	int64		seq;
	WlRow		first;			/* READY, with its due time and deadline */
	bool		written;		/* out: false when a concurrent create won its key */
} WlNewWorkload;

extern void wl_store_create_many(WlNewWorkload *w, int n, TimestampTz now, const char *role);
extern Jsonb **wl_store_documents(char **ids, char **tenants, int n);
extern void wl_store_idempotent_many(char **tenants, char **apps, char **keys, int n,
									 char **found, TimestampTz *not_before);
extern char **wl_store_dead_letters(const char *tenant_id, const char *application_id,
									const char *definition_id, const char *failure_kind,
									int lim, int *n);
/* ---- store_sched.c ---- */
/* A schedule as stored (the key, and what the tick and the API read or write). */
typedef struct WlSchedule
{
	char	   *tenant_id;
	char	   *application_id;
	char	   *schedule_id;
	char	   *cron;
	char	   *timezone;
	Jsonb	   *template;		/* grant in stored form */
	char	   *overlap;
	char	   *catch_up;
	bool		paused;
	bool		has_next;		/* next_run_at is not NULL */
	TimestampTz next_run_at;
	char	   *last_workload_id;
	char	   *created_by;
	TimestampTz grant_expires_at;	/* its template's grant's expiry (0: none) */
} WlSchedule;

/* What one tick did with a schedule. */
typedef struct WlScheduleRun
{
	bool		has_next;
	TimestampTz next_run_at;
	char	   *workload_id;	/* the latest workload made, or NULL: none */
	TimestampTz slot;			/* its slot */
	bool		set_error;		/* write last_error (error NULL clears it) */
	Jsonb	   *error;
} WlScheduleRun;

extern Jsonb *wl_store_schedule_put(const WlSchedule *s, TimestampTz now);
extern bool wl_store_schedule_lock(const char *tenant_id, const char *application_id,
								   const char *schedule_id, WlSchedule *out);
extern Jsonb *wl_store_schedule_pause(const WlSchedule *s, TimestampTz now);
extern Jsonb *wl_store_schedule_resume(const WlSchedule *s, TimestampTz now);
extern Jsonb *wl_store_schedule_set_grant(const WlSchedule *s, TimestampTz now);
extern int	wl_store_schedule_grants_expiring(TimestampTz by, int limit, WlSchedule **out);
extern bool wl_store_schedule_grant_warned(const WlSchedule *s, TimestampTz now, TimestampTz by,
										   char **grant_id, TimestampTz *expires);
extern bool wl_store_schedule_drop(const char *tenant_id, const char *application_id,
								   const char *schedule_id);
extern Jsonb **wl_store_schedule_list(const char *tenant_id, const char *application_id, int *n);
extern int	wl_store_schedules_due(TimestampTz now, int limit, WlSchedule **out);
extern void wl_store_schedule_ran(const WlSchedule *s, const WlScheduleRun *r);
extern void wl_store_schedule_event(const WlSchedule *s, const char *event_type,
									TimestampTz slot, TimestampTz at, Jsonb *evidence);
extern bool wl_store_workload_state(const char *workload_id, const char *tenant_id,
									WlState *state);
/* Citus */
extern Jsonb *wl_store_citus_distribute(void);
extern bool wl_store_citus(void);
extern bool wl_store_direct(void);
/* store_shard.c: a call on this node's shards of its tenant (Citus) */
typedef struct WlShardScope
{
	void	   *map;
	int			depth;
} WlShardScope;
extern bool wl_store_shard_enter(const char *tenant, WlShardScope *saved);
extern void wl_store_shard_leave(const WlShardScope *saved);
extern bool wl_store_shard_active(void);
extern uint64 wl_store_generation(void);
extern Oid	wl_store_relid(const char *name);
extern bool wl_store_shard_deps_unmet(Datum tenant, Datum seq);
extern int64 wl_store_shard_anchor(void);
extern char *wl_store_shard_sql(const char *sql);
extern void wl_store_init(void);
/* store_citus.c */
extern void wl_store_tenant_remember(const char *workload_id, const char *tenant_id);
extern const char *wl_store_call_tenant(void);
extern Datum wl_store_touch_arg(const WlCaller *who, const char *tenant_id, char *null);
extern void wl_store_set_call_tenant(const char *tenant_id);
extern bool wl_store_citus_distributed(void);
extern bool wl_store_citus_tenant_local(const char *tenant_id);
extern bool wl_store_citus_coordinator(void);
extern bool wl_store_writes_batched(void);
extern uint64 wl_store_citus_local_purge(TimestampTz before, int batch, bool include_dead_letter);
extern int	wl_store_citus_local_due(int scan, TimestampTz now, int limit, WlDue **out);
/* the rows of a routed call, for the entry point to return (valid until SPI_finish) */
extern struct SPITupleTable *wl_store_citus_route(const char *function, int nargs, Oid *types,
												  Datum *values, const char *nulls);
extern const char *wl_store_tenant_of(const char *workload_id);
extern const char *wl_store_tenant_of_many(char **ids, int n);
extern int	wl_store_citus_claim(const WlClaimRequest *r, WlClaimed **out);

#endif
