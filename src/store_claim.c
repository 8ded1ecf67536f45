/*
 * store_claim.c: the claim statement's typed wrapper (from the start of the
 * queue or from a session's points in it).  Layer 2: it writes what it is
 * told.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_ops.h"

/* wl_claimed_cmp: claimed workloads in queue order (for qsort) */
int
wl_claimed_cmp(const void *a, const void *b)
{
	return wl_queue_key_cmp(&((const WlClaimed *) a)->key, &((const WlClaimed *) b)->key);
}

/*
 * wl_store_claim runs the claim statement: up to r->max_items claimable
 * workloads of the tenant and application (or the one named, by its
 * creation sequence), from the start of the queue, locked SKIP LOCKED, moved to CLAIMED (and, with
 * r->start, on to RUNNING) with their attempts opened and events appended,
 * in one statement, and returns them best first.  This statement is the
 * one state change made in SQL: the caller asks the transition table first
 * (claim.c), and a regress test checks the events it writes against the
 * table.
 */
int
wl_store_claim(const WlClaimRequest *r, WlClaimed **out)
{
	Datum		args[19];
	WlJson		evidence;
	SPITupleTable *t;
	int			n;
	bool		isnull;
	WlPlanId	plan;

	((WlClaimRequest *) r)->scanned_from_start = r->points == NULL;
	if (!r->workload_id && (n = wl_store_claim_direct(r, out)) >= 0)
	{
		/* on Citus, a worker's calls that name only these go to their tenant's shards */
		for (int i = 0; i < n && wl_store_shard_active(); i++)
			wl_store_tenant_remember((*out)[i].workload_id, r->tenant_id);
		if (n > 1)
			qsort(*out, n, sizeof(WlClaimed), wl_claimed_cmp);
		return n;
	}
	if (wl_store_citus())
	{
		((WlClaimRequest *) r)->scanned_from_start = true;
		return wl_store_citus_claim(r, out);
	}
	/*
	 * The statement knows nothing of the rows it steps over (not due yet, a
	 * dependency not in its state) that may become claimable behind a
	 * point, so it always scans from the start of the queue (it runs where
	 * the claim without a plan cannot: with row triggers, while a
	 * revocation waits for its sweep).
	 */
	((WlClaimRequest *) r)->scanned_from_start = true;
	args[0] = CStringGetTextDatum(r->tenant_id);
	args[1] = CStringGetTextDatum(r->application_id ? r->application_id : "");
	args[2] = TimestampTzGetDatum(wl_now());
	args[3] = PointerGetDatum(r->capabilities);
	args[4] = Int32GetDatum(r->max_items);
	args[5] = CStringGetTextDatum(r->worker_id);
	args[6] = IntervalPGetDatum(r->lease);
	args[7] = Int64GetDatum(r->workload_seq);
	args[8] = wl_catalog_state_datum(r->start ? WL_RUNNING : WL_CLAIMED);
	args[9] = BoolGetDatum(r->start);
	args[10] = CStringGetTextDatum(r->role);
	args[11] = wl_catalog_state_datum(WL_READY);
	args[12] = wl_catalog_state_datum(WL_CLAIMED);
	/* the events' evidence, built once here (jsonb_build_object in the statement: once an event) */
	wl_json_begin(&evidence);
	wl_json_str(&evidence, "worker_id", r->worker_id);
	args[13] = JsonbPGetDatum(wl_json_end(&evidence));
	if (r->workload_id)
		plan = P_CLAIM_ONE;
	else
		plan = r->start ? P_CLAIM_MANY_START : P_CLAIM_MANY;
	t = wl_store_run(plan, args, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	*out = palloc0(sizeof(WlClaimed) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		WlClaimed  *c = &(*out)[i];

		c->workload_id = wl_store_text(t, i, 1);
		c->claim_id = wl_store_text(t, i, 2);
		c->fencing_token = wl_store_int(t, i, 3);
		c->lease_expires_at = wl_store_ts(t, i, 4, &isnull);
		c->attempt = (int) wl_store_int(t, i, 5);
		c->definition_id = wl_store_text(t, i, 6);
		c->definition_revision = wl_store_text(t, i, 7);
		c->input = wl_store_jsonb(t, i, 8);
		c->checkpoint_sequence = (int) wl_store_int(t, i, 9);
		c->key.priority = (int) wl_store_int(t, i, 10);
		c->key.created_at = wl_store_ts(t, i, 11, &isnull);
		c->key.seq = wl_store_int(t, i, 12);
		c->lapses_at = wl_store_ts(t, i, 13, &isnull);
		wl_store_ready_taken(r->tenant_id, r->application_id ? r->application_id : "", &c->key,
							 false);
	}
	SPI_freetuptable(t);
	if (n > 1)
		qsort(*out, n, sizeof(WlClaimed), wl_claimed_cmp);
	return n;
}
