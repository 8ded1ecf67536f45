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

/* one_d: a one-dimensional array of n datums of a type, with nulls */
static Datum
one_d(Datum *d, bool *nulls, int n, Oid type, int len, bool byval, char align)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	return PointerGetDatum(construct_md_array(d, nulls, 1, dims, lbs, type, len, byval, align));
}

/* claim_segments: the segments as P_CLAIM_RESUME's arrays (hi, lo, p, c, s) */
static void
claim_segments(const WlQueueKey *pt, int n, Datum *out)
{
	WlSegment  *g = palloc(sizeof(WlSegment) * (2 * n + 1));
	int			k = wl_store_claim_segments(pt, n, g);
	Datum	   *hi = palloc(sizeof(Datum) * k),
			   *lo = palloc(sizeof(Datum) * k),
			   *p = palloc(sizeof(Datum) * k),
			   *c = palloc(sizeof(Datum) * k),
			   *sq = palloc(sizeof(Datum) * k);
	bool	   *no_range = palloc(sizeof(bool) * k),	/* nulls of hi, lo */
			   *no_point = palloc(sizeof(bool) * k);	/* nulls of p, c, s */

	for (int i = 0; i < k; i++)
	{
		no_range[i] = g[i].point;
		no_point[i] = !g[i].point;
		hi[i] = Int64GetDatum(g[i].hi);
		lo[i] = Int64GetDatum(g[i].lo);
		p[i] = Int32GetDatum(g[i].priority);
		c[i] = TimestampTzGetDatum(g[i].created_at);
		sq[i] = Int64GetDatum(g[i].seq);
	}
	out[0] = one_d(hi, no_range, k, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	out[1] = one_d(lo, no_range, k, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	out[2] = one_d(p, no_point, k, INT4OID, 4, true, TYPALIGN_INT);
	out[3] = one_d(c, no_point, k, TIMESTAMPTZOID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	out[4] = one_d(sq, no_point, k, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

/* wl_claimed_cmp: claimed workloads in queue order (for qsort) */
int
wl_claimed_cmp(const void *a, const void *b)
{
	return wl_queue_key_cmp(&((const WlClaimed *) a)->key, &((const WlClaimed *) b)->key);
}

/*
 * wl_store_claim runs the claim statement: up to r->max_items claimable
 * workloads of the tenant and application (or the one named, by its
 * creation sequence), from the start of the queue or after r->points
 * (claim_segments), locked SKIP LOCKED, moved to CLAIMED (and, with
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

	if (wl_store_citus())
		return wl_store_citus_claim(r, out);
	if (!r->workload_id && (n = wl_store_claim_direct(r, out)) >= 0)
	{
		if (n > 1)
			qsort(*out, n, sizeof(WlClaimed), wl_claimed_cmp);
		return n;
	}
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
	if (r->points)
		claim_segments(r->points, r->npoints, args + 14);
	if (r->workload_id)
		plan = P_CLAIM_ONE;
	else if (r->points)
		plan = r->start ? P_CLAIM_RESUME_START : P_CLAIM_RESUME;
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
	}
	SPI_freetuptable(t);
	if (n > 1)
		qsort(*out, n, sizeof(WlClaimed), wl_claimed_cmp);
	return n;
}
