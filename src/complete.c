/*
 * complete.c: completing a workload (SPEC section 4, workload_complete and
 * workload_complete_many): the verdict on a completion against the locked
 * row and what its result id already names, then the writes (row and event,
 * result).  An attempt that succeeds is not written to the attempts: the
 * row (its times) and the result (its claim) are its record, and the
 * documents read it from them.  A plain batch (each workload and result id
 * named once) is decided with a fixed number of statements, whatever its
 * size: the common case in one conditional statement, the rest under the
 * row locks.  Layer 3.
 */
#include "postgres.h"

#include "authz.h"
#include "complete.h"
#include "criteria.h"
#include "fence.h"
#include "jsonb_util.h"
#include "payload.h"
#include "store_ops.h"
#include "transition.h"
#include "quota.h"

static bool
same_fence(const WlFence *a, const WlFence *b)
{
	return strcmp(a->claim_id, b->claim_id) == 0 &&
		strcmp(a->worker_id, b->worker_id) == 0 &&
		a->fencing_token == b->fencing_token;
}

/*
 * decide is the verdict on one completion of a locked row, given what its
 * result id already names (prev, when stored).  Returns the refusal with
 * *detail, or WL_OK: then *replay says whether the stored result is the
 * answer (the same result_id again from the same claim) or the completion is
 * to be written.  The same result_id from another claim is
 * WL_E_STALE_FENCE; a result_id of another workload is
 * WL_E_RESULT_DUPLICATE.  Cancellation wins: a workload in
 * CANCELLATION_REQUESTED refuses with WL_E_TRANSITION_DENIED.
 */
static WlErr
decide(const WlRow *row, const WlCompletion *c, const WlStoredResult *prev, char **detail,
	   bool *replay)
{
	WlErr		err;

	*replay = false;
	if (prev)
	{
		if (strcmp(prev->workload_id, row->workload_id) != 0)
		{
			*detail = psprintf("Result \"%s\" belongs to another workload.", c->result_id);
			return WL_E_RESULT_DUPLICATE;
		}
		if (!same_fence(&prev->provenance, &c->fence))
		{
			*detail = psprintf("Result \"%s\" was stored by another claim.", c->result_id);
			return WL_E_STALE_FENCE;
		}
		*replay = true;
		return WL_OK;
	}
	if ((err = wl_fence_verdict(row, &c->fence, detail)) != WL_OK)
		return err;
	if (!wl_state_allowed(row->state, WL_SUCCEEDED))
	{
		*detail = psprintf("Workload \"%s\" cannot move from %s to SUCCEEDED.",
						   row->workload_id, wl_state_name(row->state));
		return WL_E_TRANSITION_DENIED;
	}
	return wl_payload_verdict(c->output, "output", WL_MAX_PAYLOAD_BYTES, detail);
}

/* evidence: the completion event's evidence (before the claim is released). */
static Jsonb *
evidence(const WlRow *row, const WlCompletion *c)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_int(&b, "fencing_token", row->fencing_token);
	wl_json_int(&b, "attempt", row->attempt_count);
	wl_json_str(&b, "result_id", c->result_id);
	return wl_json_end(&b);
}

/* result_of: the result a completion stores (counted against its tenant's stored bytes) */
static void
result_of(WlNewResult *r, const WlRow *row, const WlCompletion *c)
{
	wl_quota_stored(row->tenant_id, VARSIZE(c->output));
	r->row = row;
	r->fence = &c->fence;
	r->result_id = c->result_id;
	r->output = c->output;
	r->artifacts = c->artifacts;
	r->schema_version = c->schema_version;
}

/*
 * complete_item decides and applies one completion without raising for a
 * refusal: sets it->err (WL_OK) and it->doc, or the refusal and it->detail.
 * An output that misses the workload's completion criteria is not a
 * refusal: the attempt fails for good, it->unmet is set and it->doc says
 * why.  Takes the row lock; on a refusal nothing has been written.
 */
static void
complete_item(WlCompleteItem *it)
{
	WlCompletion *c = &it->c;
	WlRow		row;
	WlStoredResult prev;
	bool		stored;
	bool		replay;
	char	   *reason;
	Jsonb	   *ev;
	WlNewResult r;

	it->unmet = false;
	if (!wl_authz_lock(c->fence.workload_id, &row))
	{
		it->detail = psprintf("No workload \"%s\".", c->fence.workload_id);
		it->err = WL_E_NOT_FOUND;
		return;
	}
	stored = wl_store_result_find(&row, c->result_id, &prev);
	it->err = decide(&row, c, stored ? &prev : NULL, &it->detail, &replay);
	if (it->err != WL_OK || replay)
	{
		it->doc = replay ? prev.doc : NULL;
		return;
	}
	if (row.has_criteria && (reason = wl_criteria_unmet(&row, c->output)) != NULL)
	{
		it->unmet = true;
		it->doc = wl_criteria_fail(&row, c->fence.worker_id, c->result_id, reason);
		return;
	}
	ev = evidence(&row, c);
	wl_fence_release(&row);
	row.result_id = (char *) c->result_id;
	wl_transition(&row, WL_SUCCEEDED, c->fence.worker_id, ev);
	result_of(&r, &row, c);
	it->doc = wl_store_result_put(&r);
}

/*
 * wl_complete stores the result of the fenced workload and moves it to
 * SUCCEEDED; the same result id again from the same claim returns the
 * stored result.  Raises the refusal (see decide).  *unmet: the output
 * missed the completion criteria (the answer then says why).
 */
Jsonb *
wl_complete(const WlCompletion *c, bool *unmet)
{
	WlCompleteItem it;
	WlRow		row;
	WlFencedCall f = {.kind = WL_FENCED_COMPLETE, .fence = &c->fence, .from = WL_RUNNING,
		.to = WL_SUCCEEDED, .result_id = c->result_id, .output = c->output,
	.artifacts = c->artifacts, .schema_version = c->schema_version};
	char	   *detail;

	/*
	 * The common case as one conditional statement: a valid output from the
	 * holder of a RUNNING workload without completion criteria.  Its result
	 * id can then only clash with another workload's (the refusal aborts the
	 * writes).  Anything else is decided under the row lock below.  (The
	 * batch's one statement, which also writes the event, the lease and the
	 * result, costs more for one item than these simple ones.)
	 */
	*unmet = false;
	if (wl_payload_verdict(c->output, "output", WL_MAX_PAYLOAD_BYTES, &detail) == WL_OK &&
		wl_fence_try(&f, &row))
	{
		WlNewResult r;

		wl_transition_applied(&row, WL_RUNNING, c->fence.worker_id, evidence(&row, c));
		result_of(&r, &row, c);
		return wl_store_result_put(&r);
	}
	memset(&it, 0, sizeof(it));
	it.c = *c;
	complete_item(&it);
	if (it.err != WL_OK)
		wl_refuse(it.err, errdetail_internal("%s", it.detail));
	*unmet = it.unmet;
	return it.doc;
}

static int
item_cmp(const void *a, const void *b)
{
	const WlCompleteItem *x = a;
	const WlCompleteItem *y = b;

	/* malformed items (no id) first; then by id, so batches lock rows in one order */
	if (x->c.fence.workload_id == NULL || y->c.fence.workload_id == NULL)
		return (x->c.fence.workload_id != NULL) - (y->c.fence.workload_id != NULL);
	return strcmp(x->c.fence.workload_id, y->c.fence.workload_id);
}

static int
by_result(const void *a, const void *b)
{
	return strcmp((*(WlCompleteItem *const *) a)->c.result_id,
				  (*(WlCompleteItem *const *) b)->c.result_id);
}

/*
 * plain_items collects the items that parsed into v (in workload_id order)
 * and says whether they name each workload and each result id once.  Only
 * then are they decided together; otherwise one after another, where the
 * second naming sees what the first wrote.
 */
static bool
plain_items(WlCompleteItem *items, int n, WlCompleteItem **v, int *m)
{
	WlCompleteItem **byres = palloc(sizeof(WlCompleteItem *) * (n + 1));

	*m = 0;
	for (int i = 0; i < n; i++)
	{
		if (items[i].err != WL_OK)
			continue;
		if (*m > 0 && strcmp(v[*m - 1]->c.fence.workload_id, items[i].c.fence.workload_id) == 0)
			return false;
		v[*m] = byres[*m] = &items[i];
		(*m)++;
	}
	qsort(byres, *m, sizeof(WlCompleteItem *), by_result);
	for (int i = 1; i < *m; i++)
	{
		if (strcmp(byres[i - 1]->c.result_id, byres[i]->c.result_id) == 0)
			return false;
	}
	return true;
}

/*
 * write_together writes k decided completions: rows and events in one
 * statement, attempts in one, results in one.  A result id taken meanwhile
 * by another workload aborts the whole batch (WORKLOAD_RESULT_DUPLICATE).
 */
static void
write_together(WlRow **rows, WlCompleteItem **its, int k)
{
	Jsonb	  **ev = palloc(sizeof(Jsonb *) * k);
	WlNewResult *res = palloc(sizeof(WlNewResult) * k);
	Jsonb	  **docs = palloc(sizeof(Jsonb *) * k);

	for (int i = 0; i < k; i++)
	{
		ev[i] = evidence(rows[i], &its[i]->c);
		wl_fence_release(rows[i]);
		rows[i]->result_id = (char *) its[i]->c.result_id;
		result_of(&res[i], rows[i], &its[i]->c);
	}
	wl_transition_many(rows, k, WL_SUCCEEDED, its[0]->c.fence.worker_id, ev);
	wl_store_result_put_many(res, k, docs);
	for (int i = 0; i < k; i++)
		its[i]->doc = docs[i];
}

/*
 * complete_together decides the m items of a plain batch with one lock
 * statement and one result lookup, in C with the verdict complete_item
 * uses, and writes the completions together.  An item whose workload has
 * completion criteria is left to complete_item, after the others.
 */
static void
complete_together(WlCompleteItem **v, int m)
{
	char	  **ids = palloc(sizeof(char *) * m);
	char	  **rids = palloc(sizeof(char *) * m);
	WlRow	   *rows = palloc0(sizeof(WlRow) * m);
	bool	   *found = palloc(sizeof(bool) * m);
	bool	   *stored = palloc(sizeof(bool) * m);
	WlStoredResult *prev = palloc0(sizeof(WlStoredResult) * m);
	WlRow	  **g = palloc(sizeof(WlRow *) * m);
	WlCompleteItem **gi = palloc(sizeof(WlCompleteItem *) * m);
	bool	   *later = palloc0(sizeof(bool) * m);
	int			k = 0;

	for (int j = 0; j < m; j++)
	{
		ids[j] = v[j]->c.fence.workload_id;
		rids[j] = v[j]->c.result_id;
	}
	wl_authz_lock_many(ids, m, rows, found);
	for (int j = 0; j < m; j++)
	{
		/* a workload that was not found has no tenant whose result ids to look in */
		if (!found[j])
			rows[j].tenant_id = rows[j].application_id = "";
	}
	wl_store_result_find_many(rows, rids, m, stored, prev);
	for (int j = 0; j < m; j++)
	{
		WlCompleteItem *it = v[j];
		bool		replay;

		if (!found[j])
		{
			it->detail = psprintf("No workload \"%s\".", ids[j]);
			it->err = WL_E_NOT_FOUND;
			continue;
		}
		it->err = decide(&rows[j], &it->c, stored[j] ? &prev[j] : NULL, &it->detail, &replay);
		if (it->err != WL_OK)
			continue;
		if (replay)
			it->doc = prev[j].doc;
		else if (rows[j].has_criteria)
			later[j] = true;
		else
		{
			g[k] = &rows[j];
			gi[k++] = it;
		}
	}
	if (k > 0)
		write_together(g, gi, k);
	for (int j = 0; j < m; j++)
	{
		if (later[j])
			complete_item(v[j]);
	}
}

/*
 * complete_fenced completes, as one conditional statement, the items of a
 * plain batch whose output is valid and whose workload the caller holds,
 * RUNNING, without completion criteria, under a free result id (the common
 * case, as wl_complete's); the table is asked first.  Leaves in rest (which
 * may be v) the items it did not complete, in their order, for the decision
 * under the row locks, and returns how many.  A result id another workload
 * took meanwhile aborts the whole batch (WORKLOAD_RESULT_DUPLICATE).
 */
static int
complete_fenced(WlCompleteItem **v, int m, WlCompleteItem **rest)
{
	WlFencedResult *f = palloc0(sizeof(WlFencedResult) * (m + 1));
	int		   *sent = palloc(sizeof(int) * (m + 1));	/* v[j]'s place in f, or -1 */
	WlRow	  **rows = palloc(sizeof(WlRow *) * (m + 1));
	char	   *detail;
	int			k = 0;
	int			done = 0;
	int			left = 0;
	bool		allowed = wl_state_allowed(WL_RUNNING, WL_SUCCEEDED);

	for (int j = 0; j < m; j++)
	{
		WlCompletion *c = &v[j]->c;

		sent[j] = -1;
		if (!allowed ||
			wl_payload_verdict(c->output, "output", WL_MAX_PAYLOAD_BYTES, &detail) != WL_OK)
			continue;
		f[k].fence = &c->fence;
		f[k].result_id = c->result_id;
		f[k].output = c->output;
		f[k].artifacts = c->artifacts;
		f[k].schema_version = c->schema_version;
		sent[j] = k++;
	}
	if (k > 0)
		wl_store_fenced_complete_many(f, k, v[0]->c.fence.worker_id, wl_authz_caller(),
									  WL_RUNNING, WL_SUCCEEDED);
	/* the rest keeps the batch's order (workload_id): its rows are locked in it */
	for (int j = 0; j < m; j++)
	{
		WlFencedResult *it = sent[j] >= 0 ? &f[sent[j]] : NULL;

		if (it == NULL || !it->done)
		{
			rest[left++] = v[j];
			continue;
		}
		v[j]->err = WL_OK;
		v[j]->doc = it->doc;
		rows[done++] = &it->row;
	}
	wl_transition_written_many(rows, done, WL_RUNNING, v[0]->c.fence.worker_id);
	return left;
}

/*
 * wl_complete_batch completes every item that parsed (err WL_OK) in this
 * one transaction, each decided on its own: a refused item writes nothing
 * and the others still complete.  The items are sorted in workload_id order
 * first (so two batches never lock rows in opposite orders) and answered in
 * that order.
 */
void
wl_complete_batch(WlCompleteItem *items, int n)
{
	WlCompleteItem **v = palloc(sizeof(WlCompleteItem *) * (n + 1));
	int			m;

	qsort(items, n, sizeof(WlCompleteItem), item_cmp);
	/* on Citus, the fenced part runs together on the tenant's shards; the rest item by item */
	if ((wl_store_writes_batched() || wl_store_shard_active()) && plain_items(items, n, v, &m))
	{
		if (m > 0)
			m = complete_fenced(v, m, v);
		if (m > 0 && wl_store_writes_batched())
			complete_together(v, m);
		for (int j = 0; j < m && !wl_store_writes_batched(); j++)
			complete_item(v[j]);
		return;
	}
	for (int i = 0; i < n; i++)
	{
		if (items[i].err == WL_OK)
			complete_item(&items[i]);
	}
}
