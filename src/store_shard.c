/*
 * store_shard.c: a call of one tenant on the Citus node that holds the
 * tenant, on the node's own shards (docs/operations.md, "Sharding by
 * tenant").
 *
 * On a Citus worker our tables are empty shells, and each hash range of
 * tenants lives in a group of co-located shard tables (workload_rows_102042,
 * queue_102106, ...).  A call whose tenant this node holds runs inside a
 * shard scope (wl_store_shard_enter; the scope itself is store_scope.c):
 * there the paths that write without a plan (store_direct.c,
 * store_claim_direct.c, store_fenced.c) find their tables and indexes by
 * name through wl_store_relid, which names the
 * tenant's shard of each distributed table and this node's copy of each
 * reference table, and run on them as on a single node.  Nothing is sent
 * to another node, and no statement of theirs is planned by Citus.
 *
 * A scope holds what Citus's own write to a shard holds: the shard group's
 * distribution metadata lock (ShareLock, taken by Citus's own function),
 * which a shard move or split takes exclusively on every node before it
 * switches the placement.  Once the lock is held, the
 * scope asks whether the placement is still on this node; if a move took it
 * away, the call is not made here (the caller routes it, or runs its
 * statements through Citus).  Outside a scope on Citus, wl_store_direct() is
 * false and every call runs its statements.
 *
 * Caches: tenant -> the tenant's workload_rows shard (bounded: emptied when
 * full), that shard -> its group's shard ids (one entry per shard group).
 * A relation cache of the direct paths holds the OIDs of one group at a
 * time (wl_store_generation changes when the group does); a node that
 * alternates between tenants of different groups resolves them again.
 * Layer 2.
 */
#include "postgres.h"

#include <ctype.h>

#include "miscadmin.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "fmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "catalog.h"
#include "guc.h"
#include "store.h"
#include "store_ops.h"
#include "store_scope.h"

#define SHARD_TENANT_KEY 128
#define SHARD_TENANTS_MAX 4096
#define SHARD_MAPS_MAX 4096

typedef struct TenantShard
{
	char		tenant_id[SHARD_TENANT_KEY];
	int64		anchor;			/* the tenant's shard of workload_rows */
} TenantShard;

static HTAB *tenant_shards = NULL;
static HTAB *maps = NULL;
static uint64 maps_generation = 0;
static LocalTransactionId checked_lxid = InvalidLocalTransactionId;
static int64 checked_anchor = 0;
static int64 elsewhere = 0;		/* the last shard found placed on another node */

/* forget_all: every cache here (outside a shard scope: no group is named any more) */
static void
forget_all(void)
{
	wl_store_scope_forget();
	if (tenant_shards)
		hash_destroy(tenant_shards);
	if (maps)
	{
		HASH_SEQ_STATUS s;
		WlShardMap   *m;

		hash_seq_init(&s, maps);
		while ((m = hash_seq_search(&s)) != NULL)
		{
			for (int i = 0; i < m->n; i++)
				pfree(m->tables[i]);
			if (m->tables)
				pfree(m->tables);
			if (m->shards)
				pfree(m->shards);
			if (m->lacks_defaults)
				pfree(m->lacks_defaults);
		}
		hash_destroy(maps);
	}
	tenant_shards = NULL;
	maps = NULL;
	checked_lxid = InvalidLocalTransactionId;
}

/* anchor_of: the tenant's workload_rows shard, from the cache or Citus's metadata */
static int64
anchor_of(const char *tenant)
{
	TenantShard *e = NULL;
	Datum		a[1];
	SPITupleTable *t;
	int64		anchor;
	bool		isnull;

	if (strlen(tenant) < SHARD_TENANT_KEY)
	{
		if (tenant_shards == NULL || hash_get_num_entries(tenant_shards) >= SHARD_TENANTS_MAX)
		{
			HASHCTL		ctl;

			if (tenant_shards)
				hash_destroy(tenant_shards);
			ctl.keysize = SHARD_TENANT_KEY;
			ctl.entrysize = sizeof(TenantShard);
			tenant_shards = hash_create("workload tenant shards", 256, &ctl, HASH_ELEM | HASH_STRINGS);
		}
		e = hash_search(tenant_shards, tenant, HASH_FIND, NULL);
		if (e)
			return e->anchor;
	}
	a[0] = CStringGetTextDatum(tenant);
	t = wl_store_run(P_CITUS_SHARD_OF, a, NULL, 1, SPI_OK_SELECT);
	anchor = SPI_processed == 1 ? DatumGetInt64(wl_store_datum(t, 0, 1, &isnull)) : 0;
	if (SPI_processed != 1 || isnull)
		anchor = 0;
	SPI_freetuptable(t);
	if (anchor != 0 && strlen(tenant) < SHARD_TENANT_KEY)
	{
		e = hash_search(tenant_shards, tenant, HASH_ENTER, NULL);
		e->anchor = anchor;
	}
	return anchor;
}

/* anchor_rel: the relation workload_rows_<anchor> on this node, if any */
static Oid
anchor_rel(int64 anchor)
{
	char		name[NAMEDATALEN];

	snprintf(name, sizeof(name), "workload_rows_" INT64_FORMAT, anchor);
	return get_relname_relid(name, wl_catalog_store_schema());
}

/* defaults: how many column defaults relation workload.<name> has (-1: no such relation) */
static int
defaults(const char *name)
{
	Oid			oid = get_relname_relid(name, wl_catalog_store_schema());
	Relation	rel;
	int			n;

	if (!OidIsValid(oid))
		return -1;
	rel = table_open(oid, AccessShareLock);
	n = RelationGetDescr(rel)->constr ? RelationGetDescr(rel)->constr->num_defval : 0;
	table_close(rel, AccessShareLock);
	return n;
}

/* lacks_defaults: whether table workload.<table> has a column default its shard lacks */
static bool
lacks_defaults(const char *table, int64 shard)
{
	char		name[NAMEDATALEN + 32];

	snprintf(name, sizeof(name), "%s_" INT64_FORMAT, table, shard);
	return defaults(table) > defaults(name);
}

/* map_of: the names of the anchor's shard group on this node, from the cache or Citus's metadata */
static WlShardMap *
map_of(int64 anchor)
{
	WlShardMap   *m;
	bool		found;
	Datum		a[1];
	SPITupleTable *t;
	MemoryContext old;

	if (maps != NULL && hash_get_num_entries(maps) >= SHARD_MAPS_MAX && !wl_store_shard_active())
		forget_all();
	if (maps == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(WlShardMap);
		maps = hash_create("workload shard maps", 64, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	m = hash_search(maps, &anchor, HASH_ENTER, &found);
	if (found && m->anchor_rel == anchor_rel(anchor))
		return m;
	/* made again (the group's shards were made again here): no cache may keep the old ones */
	if (found && wl_store_shard_active())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("the shards of shard group " INT64_FORMAT " changed during the call", anchor),
				 errhint("Make the call again.")));
	if (found)
	{
		wl_store_scope_forget();
		for (int i = 0; i < m->n; i++)
			pfree(m->tables[i]);
		pfree(m->tables);
		pfree(m->shards);
		pfree(m->lacks_defaults);
	}
	m->n = 0;
	m->tables = NULL;
	m->shards = NULL;
	m->lacks_defaults = NULL;
	a[0] = Int64GetDatum(anchor);
	t = wl_store_run_latest(P_CITUS_SHARD_MAP, a, NULL, 0, SPI_OK_SELECT);
	old = MemoryContextSwitchTo(TopMemoryContext);
	m->tables = palloc(sizeof(char *) * (SPI_processed + 1));
	m->shards = palloc(sizeof(int64) * (SPI_processed + 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		m->tables[i] = wl_store_text(t, (int) i, 1);
		m->shards[i] = wl_store_int(t, (int) i, 2);
	}
	m->n = (int) SPI_processed;
	m->lacks_defaults = palloc0(sizeof(bool) * (m->n + 1));
	MemoryContextSwitchTo(old);
	SPI_freetuptable(t);
	for (int i = 0; i < m->n; i++)
		m->lacks_defaults[i] = lacks_defaults(m->tables[i], m->shards[i]);
	m->anchor_rel = anchor_rel(anchor);
	return m;
}

/*
 * lock_shard_group: the lock Citus's executor takes before it writes a
 * shard (LockShardDistributionMetadata, ShareLock; for a co-located table
 * one lock per shard group), which a shard move or split takes exclusively
 * on every node before it switches the placement.  Citus's own function,
 * else (a build that does not export it) its SQL form.
 */
static void
lock_shard_group(int64 anchor)
{
	typedef void (*LockShardFn) (int64 shard_id, LOCKMODE mode);
	static LockShardFn citus_lock = NULL;
	static bool looked = false;

	if (!looked)
	{
		citus_lock = (LockShardFn) load_external_function("$libdir/citus", "LockShardDistributionMetadata",
														  false, NULL);
		looked = true;
	}
	if (citus_lock)
		citus_lock(anchor, ShareLock);
	else
	{
		Datum		a[1] = {PointerGetDatum(wl_store_int8_array(&anchor, 1))};

		SPI_freetuptable(wl_store_run(P_CITUS_SHARD_LOCK, a, NULL, 0, SPI_OK_SELECT));
	}
}

/* placed_here: whether the shard is placed on this node, as committed now */
static bool
placed_here(int64 anchor)
{
	Datum		a[1] = {Int64GetDatum(anchor)};
	SPITupleTable *t = wl_store_run_latest(P_CITUS_SHARD_HERE, a, NULL, 1, SPI_OK_SELECT);
	bool		placed = wl_store_bool(t, 0, 1);

	SPI_freetuptable(t);
	return placed;
}

/*
 * here: whether this transaction may write the anchor's shard group on this
 * node: its metadata lock taken (as Citus's executor takes it for a write
 * to a shard: a move or split waits for this transaction, or this one for
 * it), then the placement read as committed now.  Asked once per
 * transaction and group.
 */
static bool
here(int64 anchor)
{
	bool		placed;

	if (checked_lxid == MyProc->lxid && checked_anchor == anchor)
		return true;
	/* not here last time (a node that routes this tenant's calls): no lock, one look */
	if (anchor == elsewhere && !placed_here(anchor))
		return false;
	lock_shard_group(anchor);
	placed = placed_here(anchor);
	if (placed)
	{
		checked_lxid = MyProc->lxid;
		checked_anchor = anchor;
	}
	elsewhere = placed ? 0 : anchor;
	return placed;
}

/*
 * wl_store_shard_enter: whether the calls that follow, until
 * wl_store_shard_leave(saved), run on this node's shards of tenant (then
 * wl_store_direct() is true and wl_store_relid names them).  False, and
 * nothing changed, on a single node, under workload.statement_path, on a
 * database whose tables are not distributed, and where this node does not
 * hold the tenant now.  *saved: what leave puts back.
 */
bool
wl_store_shard_enter(const char *tenant, WlShardScope *saved)
{
	int64		anchor;
	WlShardMap   *m;

	saved->map = NULL;
	saved->depth = -1;
	if (tenant == NULL || wl_statement_path || !wl_store_citus() || !wl_store_citus_distributed())
		return false;
	if (maps_generation != wl_catalog_generation() && !wl_store_shard_active())
	{
		forget_all();
		maps_generation = wl_catalog_generation();
	}
	anchor = anchor_of(tenant);
	if (anchor == 0)
		return false;
	if (!here(anchor))
	{
		/* moved away, or split into other shards: ask Citus again next time */
		if (tenant_shards)
			(void) hash_search(tenant_shards, tenant, HASH_REMOVE, NULL);
		return false;
	}
	m = map_of(anchor);
	if (!OidIsValid(m->anchor_rel))
		return false;
	wl_store_scope_open(m, saved);
	return true;
}

/* wl_store_shard_leave: the scope before a wl_store_shard_enter that answered true */
void
wl_store_shard_leave(const WlShardScope *saved)
{
	if (saved->depth >= 0)
		wl_store_scope_close(saved);
}

