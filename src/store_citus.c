/*
 * store_citus.c: the statements that run differently on a Citus cluster
 * (issue 13; docs/citus-design.md).  Citus sends a statement to the one
 * worker holding a tenant only when every table it touches is constrained by
 * tenant_id, and it cannot route a data-modifying CTE whose rows feed
 * another statement: the claim there is one statement per table, and a call
 * that names only a workload id first finds its tenant.  Nothing here runs
 * on a single node.  Layer 2.
 */
#include "postgres.h"

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

/*
 * The tenant of the workloads this backend created or claimed: a worker's
 * start, heartbeat and complete name only the workload, and go to the
 * tenant's node without asking every node first.  A hint only: the fenced
 * statement still checks everything, and a miss falls back to the locked
 * path, which asks the cluster (wl_store_tenant_of).
 */
#define TENANT_KEY_LEN 128
#define TENANT_CACHE_MAX 65536

typedef struct TenantEntry
{
	char		workload_id[TENANT_KEY_LEN];
	char	   *tenant_id;
} TenantEntry;

static HTAB *tenants = NULL;

/*
 * The tenant the current call named (a tenant-first overload, a routed
 * call): every row the call locks is looked for in that tenant, so a
 * workload of another tenant is not found.  Set and cleared by the entry
 * point around the call.
 */
static char *call_tenant = NULL;

const char *
wl_store_call_tenant(void)
{
	return call_tenant;
}

void
wl_store_set_call_tenant(const char *tenant_id)
{
	if (call_tenant)
		pfree(call_tenant);
	call_tenant = tenant_id ? MemoryContextStrdup(TopMemoryContext, tenant_id) : NULL;
}

/*
 * wl_store_touch_arg: the applications of tenant_id that who may act in, the
 * last parameter of a MAY_TOUCH statement on Citus (MAY_TOUCH_CITUS); NULL
 * (*null = 'n') on one node, for a caller who acts everywhere, or when the
 * tenant is not known (the statement then finds nothing).
 */
Datum
wl_store_touch_arg(const WlCaller *who, const char *tenant_id, char *null)
{
	Datum		a[2];
	SPITupleTable *t;
	Datum		apps;

	*null = 'n';
	if (!wl_store_citus() || who == NULL || who->admin || tenant_id == NULL)
		return (Datum) 0;
	a[0] = DirectFunctionCall1(namein, CStringGetDatum(who->role ? who->role : ""));
	a[1] = CStringGetTextDatum(tenant_id);
	t = wl_store_run(P_MEMBER_APPS, a, NULL, 1, SPI_OK_SELECT);
	apps = PointerGetDatum(wl_store_array(t, 0, 1));
	SPI_freetuptable(t);
	*null = ' ';
	return apps;
}

/* whether the tables are distributed, per catalog generation (Citus's metadata) */
static bool distributed = false;
static uint64 distributed_generation = 0;

/*
 * wl_store_citus_distributed: whether this database runs on Citus with
 * workload_citus_distribute() done (the tables distributed by tenant).
 */
bool
wl_store_citus_distributed(void)
{
	SPITupleTable *t;

	if (!wl_store_citus())
		return false;
	if (distributed_generation == wl_catalog_generation() && distributed)
		return true;
	t = wl_store_run(P_CITUS_DISTRIBUTED, NULL, NULL, 1, SPI_OK_SELECT);
	distributed = wl_store_bool(t, 0, 1);
	SPI_freetuptable(t);
	distributed_generation = wl_catalog_generation();
	return distributed;
}

/* wl_store_citus_tenant_local: whether this node holds the tenant's shard. */
bool
wl_store_citus_tenant_local(const char *tenant_id)
{
	Datum		a[1];
	SPITupleTable *t;
	bool		local;

	a[0] = CStringGetTextDatum(tenant_id);
	t = wl_store_run(P_CITUS_TENANT_LOCAL, a, NULL, 1, SPI_OK_SELECT);
	local = wl_store_bool(t, 0, 1);
	SPI_freetuptable(t);
	return local;
}

/*
 * wl_store_citus_route runs workload.route_<function>($1, ..., $nargs) (the
 * tenant first, the caller last), which Citus delegates to the node holding
 * the tenant (force_delegation: docs/citus-design.md section b).  Planned for
 * this call (a generic plan would not be delegated) and not saved: one per
 * call.  Returns its rows, valid until SPI_finish.
 */
SPITupleTable *
wl_store_citus_route(const char *function, int nargs, Oid *types, Datum *values,
					 const char *nulls)
{
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT * FROM workload.route_%s(", function);
	for (int i = 0; i < nargs; i++)
		appendStringInfo(&sql, "%s$%d", i ? ", " : "", i + 1);
	appendStringInfoChar(&sql, ')');
	if (SPI_execute_with_args(sql.data, nargs, types, values, nulls, false, 0) < 0)
		elog(ERROR, "could not route %s", function);
	return SPI_tuptable;
}

void
wl_store_tenant_remember(const char *workload_id, const char *tenant_id)
{
	TenantEntry *e;
	bool		found;

	if (!wl_store_citus() || workload_id == NULL || tenant_id == NULL ||
		strlen(workload_id) >= TENANT_KEY_LEN)
		return;
	if (tenants != NULL && hash_get_num_entries(tenants) >= TENANT_CACHE_MAX)
	{
		hash_destroy(tenants);
		tenants = NULL;
	}
	if (tenants == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = TENANT_KEY_LEN;
		ctl.entrysize = sizeof(TenantEntry);
		tenants = hash_create("workload tenants", 1024, &ctl, HASH_ELEM | HASH_STRINGS);
	}
	e = hash_search(tenants, workload_id, HASH_ENTER, &found);
	if (found && strcmp(e->tenant_id, tenant_id) == 0)
		return;
	if (found)
		pfree(e->tenant_id);
	e->tenant_id = MemoryContextStrdup(TopMemoryContext, tenant_id);
}

/* wl_store_tenant_hint: the remembered tenant of a workload, or NULL. */
const char *
wl_store_tenant_hint(const char *workload_id)
{
	TenantEntry *e;

	if (call_tenant)
		return call_tenant;
	if (tenants == NULL || workload_id == NULL || strlen(workload_id) >= TENANT_KEY_LEN)
		return NULL;
	e = hash_search(tenants, workload_id, HASH_FIND, NULL);
	return e ? e->tenant_id : NULL;
}

/*
 * wl_store_tenant_of: on Citus, the tenant of a workload (NULL if there is
 * none): a read of every shard, without a lock, made once per call that
 * names only a workload id and was not remembered.  NULL on a single node,
 * where no statement needs it.
 */
const char *
wl_store_tenant_of(const char *workload_id)
{
	Datum		a[1];
	SPITupleTable *t;
	char	   *tenant = NULL;

	if (!wl_store_citus() || workload_id == NULL)
		return NULL;
	a[0] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_CITUS_TENANT_OF, a, NULL, 2, SPI_OK_SELECT);
	if (SPI_processed == 1)
		tenant = wl_store_text(t, 0, 1);
	SPI_freetuptable(t);
	if (tenant)
		wl_store_tenant_remember(workload_id, tenant);
	return tenant;
}

/* the tenant of a batch of workloads, if they all have one and the same; else NULL */
const char *
wl_store_tenant_of_many(char **ids, int n)
{
	const char *tenant = NULL;

	for (int i = 0; i < n; i++)
	{
		const char *t = wl_store_tenant_hint(ids[i]);

		if (t == NULL)
			t = wl_store_tenant_of(ids[i]);
		if (t == NULL)
			continue;
		if (tenant != NULL && strcmp(t, tenant) != 0)
			return NULL;
		tenant = t;
	}
	return tenant;
}

static int64
int_of(SPITupleTable *t, int row, int col)
{
	return wl_store_int(t, row, col);
}

static ArrayType *
int8_array(int64 *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(v[i]);
	return wl_array_of(d, NULL, n, INT8OID);
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

/*
 * wl_store_citus_claim: wl_store_claim on Citus, one statement per table,
 * each constrained by the tenant: the queue rows (SKIP LOCKED), their
 * workload rows (SKIP LOCKED), the claim written on them, the queue rows
 * moved to leases, the events appended, the specs read.  The same rows,
 * locks (in the same order) and events as the one statement.
 */
int
wl_store_citus_claim(const WlClaimRequest *r, WlClaimed **out)
{
	TimestampTz now = wl_now();
	SPITupleTable *t;
	Datum		a[11];
	int			n;
	int64	   *seqs;
	Datum	   *ids;
	Upd		   *u;
	int64	   *tok;
	int32	   *att;
	Datum	   *attd;
	Datum	   *tokd;
	bool		isnull;

	*out = palloc0(sizeof(WlClaimed));
	/* 1. the queue rows */
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
	if (n == 0)
	{
		SPI_freetuptable(t);
		return 0;
	}
	seqs = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
		seqs[i] = int_of(t, i, 1);
	SPI_freetuptable(t);

	/* 2. their workload rows, still READY, skipping any another transaction holds */
	a[0] = CStringGetTextDatum(r->tenant_id);
	a[1] = PointerGetDatum(int8_array(seqs, n));
	a[2] = wl_catalog_state_datum(WL_READY);
	t = wl_store_run(P_CITUS_CLAIM_LOCK, a, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	if (n == 0)
	{
		SPI_freetuptable(t);
		return 0;
	}
	ids = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		ids[i] = CStringGetTextDatum(wl_store_text(t, i, 1));
	SPI_freetuptable(t);

	/* 3. the claim on them */
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
	t = wl_store_run(P_CITUS_CLAIM_UPD, a, NULL, 0, SPI_OK_UPDATE_RETURNING);
	n = (int) SPI_processed;
	u = palloc0(sizeof(Upd) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		u[i].c.workload_id = wl_store_text(t, i, 1);
		u[i].c.claim_id = wl_store_text(t, i, 2);
		u[i].c.fencing_token = int_of(t, i, 3);
		u[i].c.lease_expires_at = wl_store_ts(t, i, 4, &isnull);
		u[i].c.attempt = (int) int_of(t, i, 5);
		u[i].c.checkpoint_sequence = (int) int_of(t, i, 6);
		u[i].seq = int_of(t, i, 7);
		u[i].priority = (int) int_of(t, i, 8);
		u[i].created_at = wl_store_ts(t, i, 9, &isnull);
	}
	SPI_freetuptable(t);
	if (n == 0)
		return 0;
	qsort(u, n, sizeof(Upd), upd_order);

	seqs = palloc(sizeof(int64) * n);
	tok = palloc(sizeof(int64) * n);
	att = palloc(sizeof(int32) * n);
	tokd = palloc(sizeof(Datum) * n);
	attd = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		seqs[i] = u[i].seq;
		tok[i] = u[i].c.fencing_token;
		att[i] = u[i].c.attempt;
		tokd[i] = Int64GetDatum(tok[i]);
		attd[i] = Int32GetDatum(att[i]);
		wl_store_tenant_remember(u[i].c.workload_id, r->tenant_id);
	}

	/* 4. the queue rows become leases */
	a[0] = CStringGetTextDatum(r->tenant_id);
	a[1] = PointerGetDatum(int8_array(seqs, n));
	wl_store_run(P_CITUS_QUEUE_DEL_MANY, a, NULL, 0, SPI_OK_DELETE);
	wl_store_run(P_CITUS_LEASE_PUT_MANY, a, NULL, 0, SPI_OK_INSERT);

	/* 5. the claimed (and started) events, best first */
	a[2] = PointerGetDatum(wl_array_of(tokd, NULL, n, INT8OID));
	a[3] = PointerGetDatum(wl_array_of(attd, NULL, n, INT4OID));
	a[4] = CStringGetTextDatum(r->worker_id);
	a[5] = TimestampTzGetDatum(now);
	a[6] = CStringGetTextDatum(r->role);
	a[7] = wl_catalog_state_datum(WL_READY);
	a[8] = wl_catalog_state_datum(WL_CLAIMED);
	a[9] = wl_catalog_state_datum(r->start ? WL_RUNNING : WL_CLAIMED);
	a[10] = BoolGetDatum(r->start);
	wl_store_run(P_CITUS_CLAIM_EVENTS, a, NULL, 0, SPI_OK_INSERT);

	/* 6. what the worker runs, from the specs */
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

	*out = palloc0(sizeof(WlClaimed) * (n + 1));
	for (int i = 0; i < n; i++)
		(*out)[i] = u[i].c;
	return n;
}
