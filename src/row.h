/*
 * row.h: the shapes every layer above the rules shares: a workload's hot
 * row, its timeouts and retry policy, and a fence (layer 1, types only).
 */
#ifndef WL_ROW_H
#define WL_ROW_H

#include "datatype/timestamp.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "states.h"

/*
 * The spec's timeouts (SPEC section 4, "timeouts"): the one list of their
 * names.  Each is milliseconds; 0 = none.
 */
#define WL_TIMEOUTS(X) X(queue_ms) X(claim_ms) X(execution_ms) X(heartbeat_ms) X(overall_ms)
#define WL_TIMEOUT_COUNT 5

typedef struct WlTimeouts
{
#define WL_TIMEOUT_MEMBER(f) int64 f;
	WL_TIMEOUTS(WL_TIMEOUT_MEMBER)
#undef WL_TIMEOUT_MEMBER
} WlTimeouts;

/*
 * Where a workload stands in the queue (storage: a workload.queue row when
 * READY; while it holds a claim, its run row's entry in runs_held_idx, read
 * as workload.leases), which the store keeps in step with the row.
 */
typedef enum WlQueued
{
	WL_QUEUED_NONE,
	WL_QUEUED_READY,
	WL_QUEUED_HELD
} WlQueued;

/* The hot row of one workload, as the store reads it under its row lock. */
typedef struct WlRow
{
	char	   *workload_id;
	char	   *tenant_id;
	char	   *application_id;
	int64		seq;			/* creation sequence: the key of its child rows */
	int			priority;
	bool		has_dependencies;
	WlState		state;
	int			attempt_count;
	int			retry_count;
	int64		fencing_token;
	int			checkpoint_sequence;
	char	   *claim_id;		/* NULL when no worker holds it */
	char	   *worker_id;
	TimestampTz lease_expires_at;
	TimestampTz next_attempt_at;
	TimestampTz state_entered_at;
	TimestampTz created_at;
	bool		has_heartbeat;
	TimestampTz last_heartbeat_at;
	ArrayType  *capability_snapshot;
	bool		failure_changed;	/* write last_failure on save */
	Jsonb	   *last_failure;
	bool		progress_changed;	/* write progress on save */
	Jsonb	   *progress;
	WlTimeouts	timeouts;
	bool		has_deadline;	/* deadline_at: when the tick must look again */
	TimestampTz deadline_at;
	TimestampTz wait_until;		/* the deadline of the wait being entered */
	int			wait_count;		/* attempts that ended in a wait */
	bool		has_criteria;
	char	   *claimed_by;		/* the database role that holds the claim */
	TimestampTz claimed_at;		/* the open attempt: when claimed (0: no claim) */
	TimestampTz started_at;		/* and when started (0: not started) */
	char	   *result_id;		/* the result of a SUCCEEDED workload */
	TimestampTz authority_expires_at;	/* when its authority lapses (0: never) */
	WlQueued	queued;			/* where it stands in the queue as stored (the store keeps it) */
	bool		in_run;			/* its mutable columns are on its run row (it was claimed) */
	ItemPointerData row_at;		/* where the store wrote it and its spec, when it just did */
	ItemPointerData spec_at;	/* (its queue row's hints; invalid: not known) */
	int64		carried_event;	/* its start's event, when its run row carries it (the store
								 * wrote it there: wl_store_event appends none) */
	char	   *result_hash;	/* its result's output hash, when its completion stored the
								 * result on the run row (wl_store_result_put writes nothing) */

	/*
	 * The claim as it was read, kept after wl_fence_release clears the
	 * current one: the open attempt a release closes (once).
	 */
	char	   *attempt_claim_id;
	char	   *attempt_worker_id;
	TimestampTz attempt_lease;
	bool		attempt_closed;
} WlRow;

/* The fence a worker presents: SPEC section 4. */
typedef struct WlFence
{
	char	   *workload_id;
	char	   *claim_id;
	char	   *worker_id;
	int64		fencing_token;
} WlFence;

/* A workload's retry policy (SPEC section 4, "retry_policy"). */
typedef struct WlPolicy
{
	int			max_attempts;
	int64		initial_delay_ms;
	int64		max_delay_ms;
	bool		exponential;
	ArrayType  *retry_on;
} WlPolicy;

#endif
