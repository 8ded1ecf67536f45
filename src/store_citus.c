/*
 * store_citus.c: the statements that run differently on a Citus cluster
 * (docs/operations.md, "Sharding by tenant").  Citus sends a statement to the one
 * worker holding a tenant only when every table it touches is constrained by
 * tenant_id, and it cannot route a data-modifying CTE whose rows feed
 * another statement: the claim there is one statement per table, and a call
 * that names only a workload id first finds its tenant.  Nothing here runs
 * on a single node.  Layer 2.
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
	if (!wl_store_citus())
		return false;
	if (distributed_generation == wl_catalog_generation() && distributed)
		return true;
	distributed = wl_store_run_bool(P_CITUS_DISTRIBUTED, NULL);
	distributed_generation = wl_catalog_generation();
	return distributed;
}

/*
 * wl_store_writes_batched: whether the store writes a batch's rows (of
 * workload_complete_many, workload_create_many) in one statement per
 * table.  Not on Citus: a statement there must name its tenant as a
 * constant to run on the tenant's node, and a batch's rows come as
 * arrays, so each item is written on its own (still in the one call, on
 * the one node).
 */
bool
wl_store_writes_batched(void)
{
	return !wl_store_citus();
}

/* wl_store_citus_coordinator: whether this node is the Citus coordinator. */
bool
wl_store_citus_coordinator(void)
{
	return wl_store_run_bool(P_CITUS_COORDINATOR, NULL);
}

/* wl_store_citus_tenant_local: whether this node holds the tenant's shard. */
bool
wl_store_citus_tenant_local(const char *tenant_id)
{
	Datum		a[1] = {CStringGetTextDatum(tenant_id)};

	return wl_store_run_bool(P_CITUS_TENANT_LOCAL, a);
}

/*
 * wl_store_citus_route runs workload.route_<function>($1, ..., $nargs) (the
 * tenant first, the caller last), which Citus delegates to the node holding
 * the tenant (force_delegation: Citus delegates a plain distributed function
 * inside a transaction block only with it).  Planned for
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

/* tenant_hint: the tenant the call named, else the remembered one of a workload, or NULL. */
static const char *
tenant_hint(const char *workload_id)
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
 * wl_store_tenant_of: the tenant of a workload as far as the store knows
 * it: the one the call named (a tenant-first overload), else the one this
 * backend remembered for it, else, on Citus, the cluster's answer (NULL if
 * there is none): a read of every shard, without a lock, made once per
 * call that names only a workload id.  A named or remembered tenant is
 * taken as the workload's own: its id is a hash over the tenant, and if
 * not, a statement constrained by it finds nothing, so no other tenant's
 * row is ever locked.  NULL on a single node when the call named none.
 */
const char *
wl_store_tenant_of(const char *workload_id)
{
	Datum		a[1];
	SPITupleTable *t;
	char	   *tenant = (char *) tenant_hint(workload_id);

	if (tenant != NULL || !wl_store_citus() || workload_id == NULL)
		return tenant;
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
		const char *t = wl_store_tenant_of(ids[i]);

		if (t == NULL)
			continue;
		if (tenant != NULL && strcmp(t, tenant) != 0)
			return NULL;
		tenant = t;
	}
	return tenant;
}
