/*
 * checkpoint.c: authenticated checkpoints (SPEC section 7).  Each
 * checkpoint carries the hash of its state and an HMAC tag over (checkpoint
 * id, workload id, sequence, state hash) under a server key; resume returns
 * the latest only when both verify and the governing snapshots match.
 * Layer 3.
 */
#include "postgres.h"

#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "jsonb_util.h"
#include "keys.h"
#include "payload.h"
#include "spec.h"
#include "store_ops.h"
#include "transition.h"
#include "checkpoint.h"
#include "quota.h"

static char *
tag_text(const char *checkpoint_id, const char *workload_id, int sequence, const char *hash)
{
	return psprintf("%s:%s:%d:%s", checkpoint_id, workload_id, sequence, hash);
}

/*
 * wl_checkpoint_append appends checkpoint n+1 to the fenced workload with its
 * state_hash and its tag; RUNNING or CHECKPOINTED -> CHECKPOINTED.  Returns
 * the checkpoint's document.
 */
Jsonb *
wl_checkpoint_append(const WlFence *fence, Jsonb *state)
{
	WlRow		row;
	char	   *hash = wl_jsonb_hash(state);
	char	   *id;
	char	   *key_id;
	char	   *tag;
	WlJson		b;

	wl_fence_lock(fence, &row);
	if (row.checkpoint_sequence >= WL_MAX_CHECKPOINTS)
		wl_refuse(WL_E_INVALID,
				  errdetail("Workload \"%s\" has %d checkpoints; the limit is %d.",
							row.workload_id, row.checkpoint_sequence, WL_MAX_CHECKPOINTS));
	row.checkpoint_sequence++;
	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_int(&b, "sequence", row.checkpoint_sequence);
	wl_json_str(&b, "state_hash", hash);
	wl_transition(&row, WL_CHECKPOINTED, fence->worker_id, wl_json_end(&b));
	id = wl_checkpoint_id(row.workload_id, row.checkpoint_sequence);
	tag = wl_keys_mac_current(tag_text(id, row.workload_id, row.checkpoint_sequence, hash),
							  &key_id);
	wl_quota_stored(row.tenant_id, VARSIZE(state));
	return wl_store_checkpoint_put(&row, id, state, hash, key_id, tag);
}

#define tampered(...) \
	wl_refuse(WL_E_CHECKPOINT_TAMPERED, errdetail(__VA_ARGS__))

/*
 * verified_checkpoint returns the latest checkpoint of a locked row (with
 * its state) or NULL when it has none, after checking it is the one the
 * row counts, has its own id, its state hashes to state_hash and its tag
 * verifies under a key that is not retired.  Anything else is
 * WORKLOAD_CHECKPOINT_TAMPERED: nothing is recovered partially.
 */
static Jsonb *
verified_checkpoint(const WlRow *row)
{
	WlCheckpointRow c;
	const char *why;

	if (!wl_store_checkpoint_last(row, &c))
	{
		if (row->checkpoint_sequence > 0)
			tampered("Checkpoint %d of workload \"%s\" is missing.",
					 row->checkpoint_sequence, row->workload_id);
		return NULL;
	}
	if (c.sequence != row->checkpoint_sequence)
		tampered("The latest checkpoint of workload \"%s\" is number %d; the workload recorded %d.",
				 row->workload_id, c.sequence, row->checkpoint_sequence);
	if (strcmp(c.checkpoint_id, wl_checkpoint_id(row->workload_id, c.sequence)) != 0)
		tampered("Checkpoint %d of workload \"%s\" carries another checkpoint's id.",
				 c.sequence, row->workload_id);
	if (!wl_hex_equal(wl_jsonb_hash(c.state), c.state_hash))
		tampered("The state of checkpoint \"%s\" does not match its state_hash.", c.checkpoint_id);
	if (!wl_keys_mac_check(c.key_id, tag_text(c.checkpoint_id, row->workload_id, c.sequence,
											  c.state_hash),
						   c.tag, &why))
		tampered("The tag of checkpoint \"%s\" does not verify: %s.", c.checkpoint_id, why);
	return c.doc;
}

/*
 * check_snapshots raises WORKLOAD_SNAPSHOT_MISMATCH unless expected equals
 * the workload's governing snapshots: both absent, or equal as jsonb.
 */
static void
check_snapshots(const char *workload_id, Jsonb *governing, Jsonb *expected)
{
	if (governing == NULL && expected == NULL)
		return;
	if (governing == NULL)
		wl_refuse(WL_E_SNAPSHOT_MISMATCH,
				  errdetail("Workload \"%s\" has no governing snapshots; expected_snapshots must be NULL.",
							workload_id));
	if (expected == NULL)
		wl_refuse(WL_E_SNAPSHOT_MISMATCH,
				  errdetail("Workload \"%s\" is governed by snapshots; expected_snapshots is NULL.",
							workload_id));
	if (wl_json_equal(governing, expected))
		return;
	for (int i = 0; wl_governing_fields[i]; i++)
	{
		char	   *want = wl_json_get_text(&governing->root, wl_governing_fields[i]);
		char	   *got = JB_ROOT_IS_OBJECT(expected) ?
			wl_json_get_text(&expected->root, wl_governing_fields[i]) : NULL;

		if (got == NULL || strcmp(want, got) != 0)
			wl_refuse(WL_E_SNAPSHOT_MISMATCH,
					  errdetail("Field expected_snapshots.%s does not match the governing snapshots of workload \"%s\".",
								wl_governing_fields[i], workload_id));
	}
	wl_refuse(WL_E_SNAPSHOT_MISMATCH,
			  errdetail("Argument \"expected_snapshots\" has fields the governing snapshots of workload \"%s\" do not.",
						workload_id));
}

/*
 * wl_checkpoint_resume: what the run holding the claim resumes from:
 * {workload_id, attempt, fencing_token, checkpoint, wake}.  checkpoint is the
 * latest, verified; wake is how the latest finished wait ended, or null.
 * Writes nothing.
 */
Jsonb *
wl_checkpoint_resume(const WlFence *fence, Jsonb *expected)
{
	WlRow		row;
	WlSpecRow	spec;
	Jsonb	   *checkpoint;
	WlJson		b;

	wl_fence_lock(fence, &row);
	wl_store_spec_read(&row, &spec);
	check_snapshots(row.workload_id, spec.governing_snapshots, expected);
	checkpoint = verified_checkpoint(&row);
	wl_json_begin(&b);
	wl_json_str(&b, "workload_id", row.workload_id);
	wl_json_int(&b, "attempt", row.attempt_count);
	wl_json_int(&b, "fencing_token", row.fencing_token);
	wl_json_jsonb(&b, "checkpoint", checkpoint);
	wl_json_jsonb(&b, "wake", wl_store_wait_last(&row));
	return wl_json_end(&b);
}
