/*
 * store_citus_claim.c: the claim on a Citus cluster, one statement per
 * table, each constrained by the tenant (Citus routes a statement to the
 * tenant's node only then, and cannot route a data-modifying CTE whose rows
 * feed another statement).  Nothing here runs on a single node.  Layer 2.
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_ops.h"

static int64
int_of(SPITupleTable *t, int row, int col)
{
	return wl_store_int(t, row, col);
}


typedef struct Upd
{
	WlClaimed	c;
	int64		seq;
	int			priority;
	TimestampTz created_at;
} Upd;

static int
upd_order(const void *a, const void *b)
{
	const Upd  *x = a;
	const Upd  *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->created_at != y->created_at)
		return x->created_at < y->created_at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* claim_pick: the queue rows the claim may take (step 1), their creation sequences */
static int
claim_pick(const WlClaimRequest *r, TimestampTz now, int64 **seqs)
{
	SPITupleTable *t;
	Datum		a[6];
	int			n;

	if (r->workload_id)
	{
		a[0] = CStringGetTextDatum(r->tenant_id);
		a[1] = Int64GetDatum(r->workload_seq);
		t = wl_store_run(P_CITUS_PICK_ONE, a, NULL, 0, SPI_OK_SELECT);
	}
	else
	{
		ArrayType  *revoked;

		t = wl_store_run(P_CITUS_REVOKED_NOW, NULL, NULL, 0, SPI_OK_SELECT);
		revoked = wl_store_array(t, 0, 1);
		SPI_freetuptable(t);
		a[0] = CStringGetTextDatum(r->tenant_id);
		a[1] = CStringGetTextDatum(r->application_id ? r->application_id : "");
		a[2] = TimestampTzGetDatum(now);
		a[3] = PointerGetDatum(r->capabilities);
		a[4] = Int32GetDatum(r->max_items);
		a[5] = PointerGetDatum(revoked);
		t = wl_store_run(P_CITUS_PICK_MANY, a, NULL, 0, SPI_OK_SELECT);
	}
	n = (int) SPI_processed;
	*seqs = palloc(sizeof(int64) * (n + 1));
	for (int i = 0; i < n; i++)
		(*seqs)[i] = int_of(t, i, 1);
	SPI_freetuptable(t);
	return n;
}

/*
 * claim_lock: those still READY, locked skipping any another transaction
 * holds (step 2; P_CITUS_CLAIM_LOCK): each one's id, sequence and queue order
 * in locked (the rest of each Upd is filled by claim_take)
 */
static int
claim_lock(const WlClaimRequest *r, int64 *seqs, int n, Upd **locked)
{
	Datum		a[3];
	SPITupleTable *t;
	bool		isnull;

	a[0] = CStringGetTextDatum(r->tenant_id);
	a[1] = PointerGetDatum(wl_store_int8_array(seqs, n));
	a[2] = wl_catalog_state_datum(WL_READY);
	t = wl_store_run(P_CITUS_CLAIM_LOCK, a, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	*locked = palloc0(sizeof(Upd) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		(*locked)[i].c.workload_id = wl_store_text(t, i, 1);
		(*locked)[i].seq = int_of(t, i, 2);
		(*locked)[i].priority = (int) int_of(t, i, 3);
		(*locked)[i].created_at = wl_store_ts(t, i, 4, &isnull);
		(*locked)[i].c.lapses_at = wl_store_ts(t, i, 5, &isnull);
	}
	SPI_freetuptable(t);
	return n;
}

/*
 * claimed: the rows t returned (the sequence, then claim_id, token, lease,
 * attempt, checkpoint sequence), each the Upd of its locked workload, put
 * in u from u[*k] on; t is freed
 */
static void
claimed(SPITupleTable *t, const Upd *locked, int n, Upd *u, int *k)
{
	bool		isnull;

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int64		seq = int_of(t, (int) i, 1);
		Upd		   *o = &u[(*k)++];

		for (int j = 0; j < n; j++)
			if (locked[j].seq == seq)
				*o = locked[j];
		o->c.claim_id = wl_store_text(t, (int) i, 2);
		o->c.fencing_token = int_of(t, (int) i, 3);
		o->c.lease_expires_at = wl_store_ts(t, (int) i, 4, &isnull);
		o->c.attempt = (int) int_of(t, (int) i, 5);
		o->c.checkpoint_sequence = (int) int_of(t, (int) i, 6);
	}
	SPI_freetuptable(t);
}

/*
 * claim_take: the claim written on the locked workloads (step 3), best
 * first: the run rows of those claimed before updated, then, for the rest,
 * a deadline kept on the workload row for the tick cleared and their run
 * rows appended (each its own statement: see above)
 */
static int
claim_take(const WlClaimRequest *r, TimestampTz now, Upd *locked, int n, Upd **out)
{
	Datum		a[8];
	Datum		f[11];
	bool		fnull[11];
	Datum		ins[19];
	char		insnull[19];
	Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
	SPITupleTable *t;
	SPITupleTable *first;
	Upd		   *u = palloc0(sizeof(Upd) * (n + 1));
	int			k = 0;

	for (int i = 0; i < n; i++)
		ids[i] = CStringGetTextDatum(locked[i].c.workload_id);
	a[0] = CStringGetTextDatum(r->tenant_id);
	a[1] = PointerGetDatum(wl_array_of(ids, NULL, n, TEXTOID));
	a[2] = TimestampTzGetDatum(now);
	a[3] = CStringGetTextDatum(r->worker_id);
	a[4] = TimestampTzGetDatum(DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
																	   TimestampTzGetDatum(now),
																	   IntervalPGetDatum(r->lease))));
	a[5] = wl_catalog_state_datum(r->start ? WL_RUNNING : WL_CLAIMED);
	a[6] = BoolGetDatum(r->start);
	a[7] = CStringGetTextDatum(r->role);
	claimed(wl_store_run(P_CITUS_CLAIM_RETRY, a, NULL, 0, SPI_OK_UPDATE_RETURNING), locked, n, u, &k);
	wl_store_run(P_CITUS_CLAIM_CLEAR, a, NULL, 0, SPI_OK_UPDATE);
	first = wl_store_run(P_CITUS_CLAIM_FIRST, a, NULL, 0, SPI_OK_SELECT);
	if (int_of(first, 0, 12) == 0)
	{
		SPI_freetuptable(first);
		goto done;
	}
	for (int c = 0; c < 11; c++)
		f[c] = SPI_getbinval(first->vals[0], first->tupdesc, c + 1, &fnull[c]);
	memcpy(ins, a, sizeof(a));
	memcpy(ins + 8, f, sizeof(f));
	for (int c = 0; c < 19; c++)
		insnull[c] = c >= 8 && fnull[c - 8] ? 'n' : ' ';
	t = wl_store_run(P_CITUS_CLAIM_INS, ins, insnull, 0, SPI_OK_INSERT_RETURNING);
	claimed(t, locked, n, u, &k);
	SPI_freetuptable(first);
done:
	for (int i = 0; i < k; i++)
		wl_store_tenant_remember(u[i].c.workload_id, r->tenant_id);
	qsort(u, k, sizeof(Upd), upd_order);
	*out = u;
	return k;
}

/*
 * claim_record: the queue rows deleted (the run rows hold the claims), the
 * claimed (and started) events appended, best first, and what the worker runs read from the specs
 * (steps 4 to 6)
 */
static void
claim_record(const WlClaimRequest *r, TimestampTz now, Upd *u, int n)
{
	int64	   *seqs = palloc(sizeof(int64) * (n + 1));
	int64	   *tok = palloc(sizeof(int64) * (n + 1));
	int32	   *att = palloc(sizeof(int32) * (n + 1));
	Datum	   *attd = palloc(sizeof(Datum) * (n + 1));
	Datum		a[11];
	SPITupleTable *t;

	for (int i = 0; i < n; i++)
	{
		seqs[i] = u[i].seq;
		tok[i] = u[i].c.fencing_token;
		att[i] = u[i].c.attempt;
		attd[i] = Int32GetDatum(att[i]);
	}
	a[0] = CStringGetTextDatum(r->tenant_id);
	a[1] = PointerGetDatum(wl_store_int8_array(seqs, n));
	wl_store_run(P_CITUS_QUEUE_DEL_MANY, a, NULL, 0, SPI_OK_DELETE);
	a[2] = PointerGetDatum(wl_store_int8_array(tok, n));
	a[3] = PointerGetDatum(wl_array_of(attd, NULL, n, INT4OID));
	a[4] = CStringGetTextDatum(r->worker_id);
	a[5] = TimestampTzGetDatum(now);
	a[6] = CStringGetTextDatum(r->role);
	a[7] = wl_catalog_state_datum(WL_READY);
	a[8] = wl_catalog_state_datum(WL_CLAIMED);
	a[9] = wl_catalog_state_datum(r->start ? WL_RUNNING : WL_CLAIMED);
	a[10] = BoolGetDatum(r->start);
	wl_store_run(P_CITUS_CLAIM_EVENTS, a, NULL, 0, SPI_OK_INSERT);
	t = wl_store_run(P_CITUS_CLAIM_SPECS, a, NULL, 0, SPI_OK_SELECT);
	for (uint64 k = 0; k < SPI_processed; k++)
	{
		int64		seq = int_of(t, (int) k, 1);

		for (int i = 0; i < n; i++)
			if (u[i].seq == seq)
			{
				u[i].c.definition_id = wl_store_text(t, (int) k, 2);
				u[i].c.definition_revision = wl_store_text(t, (int) k, 3);
				u[i].c.input = wl_store_jsonb(t, (int) k, 4);
			}
	}
	SPI_freetuptable(t);
}

/*
 * wl_store_citus_claim: wl_store_claim on Citus, one statement per table,
 * each constrained by the tenant: the queue rows (SKIP LOCKED), the run
 * rows of those claimed before (SKIP LOCKED), the claim written, the queue rows
 * deleted, the events appended, the specs read.  The same rows,
 * locks (in the same order) and events as the one statement.
 */
int
wl_store_citus_claim(const WlClaimRequest *r, WlClaimed **out)
{
	TimestampTz now = wl_now();
	int64	   *seqs;
	Upd		   *locked;
	Upd		   *u;
	int			n;

	*out = palloc0(sizeof(WlClaimed));
	if ((n = claim_pick(r, now, &seqs)) == 0 || (n = claim_lock(r, seqs, n, &locked)) == 0 ||
		(n = claim_take(r, now, locked, n, &u)) == 0)
		return 0;
	claim_record(r, now, u, n);
	*out = palloc0(sizeof(WlClaimed) * (n + 1));
	for (int i = 0; i < n; i++)
		(*out)[i] = u[i].c;
	return n;
}
