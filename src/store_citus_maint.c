/*
 * store_citus_maint.c: maintenance on a Citus cluster, per node
 * (docs/operations.md, "Sharding by tenant"): the tick's scans and retention read and
 * write the shards this node holds, as the plain tables they are here, so
 * each node looks after its own tenants and one that is down stops nobody
 * else's maintenance.  Nothing here runs on a single node but
 * wl_store_dues, the reader of every maintenance scan's rows (store_meta.c's
 * on one node too).  Layer 2.
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
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
 * wl_store_dues reads the (workload_id, due, tenant_id, rank) rows of a
 * maintenance scan (FAIR); the tenant is remembered for the row's lock.
 */
int
wl_store_dues(SPITupleTable *t, WlDue **out)
{
	int			n = (int) SPI_processed;
	bool		isnull;

	*out = palloc(sizeof(WlDue) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		WlDue	   *d = &(*out)[i];

		d->workload_id = wl_store_text(t, i, 1);
		d->at = wl_store_ts(t, i, 2, &isnull);
		d->tenant_id = wl_store_text(t, i, 3);
		d->rank = wl_store_int(t, i, 4);
		wl_store_tenant_remember(d->workload_id, d->tenant_id);
	}
	SPI_freetuptable(t);
	return n;
}

/* local_shards: the shards of workload.workload_rows this node holds */
static int64 *
local_shards(int *n)
{
	SPITupleTable *t = wl_store_run(P_CITUS_LOCAL_SHARDS, NULL, NULL, 0, SPI_OK_SELECT);
	int64	   *shards = palloc(sizeof(int64) * (SPI_processed + 1));

	*n = (int) SPI_processed;
	for (int i = 0; i < *n; i++)
		shards[i] = wl_store_int(t, i, 1);
	SPI_freetuptable(t);
	return shards;
}

/* fair_order: FAIR's order across shard groups: rank, then due, then id */
static int
fair_order(const void *a, const void *b)
{
	const WlDue *x = a;
	const WlDue *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return strcmp(x->workload_id, y->workload_id);
}

/*
 * shard_here locks shard `name` (schema workload) for a scan, without
 * waiting: false when it is gone.  A table lock held on it (a DROP
 * EXTENSION dropping this node's shards, which then waits for the
 * extension this pass holds) is ERRCODE_LOCK_NOT_AVAILABLE at once, and the
 * pass gives way (bgworker.c) before a deadlock detector, local or
 * Citus's, can see the two waiting on each other and cancel the DROP.
 */
static bool
shard_here(const char *name)
{
	return OidIsValid(RangeVarGetRelidExtended(makeRangeVar("workload", (char *) name, -1),
											   AccessShareLock, RVR_NOWAIT | RVR_MISSING_OK,
											   NULL, NULL));
}

/* A shard group: the shard of each co-located table over one hash range. */
typedef struct ShardGroup
{
	int			n;
	char	  **tables;			/* "workload.events", ... */
	int64	   *shards;
	bool		here;			/* the workloads shard is placed on this node */
} ShardGroup;

static void
shard_group(int64 workloads_shard, ShardGroup *g)
{
	Datum		a[1] = {Int64GetDatum(workloads_shard)};
	SPITupleTable *t = wl_store_run(P_CITUS_SHARD_GROUP, a, NULL, 0, SPI_OK_SELECT);

	g->n = (int) SPI_processed;
	g->tables = palloc(sizeof(char *) * (g->n + 1));
	g->shards = palloc(sizeof(int64) * (g->n + 1));
	g->here = false;
	for (int i = 0; i < g->n; i++)
	{
		g->tables[i] = wl_store_text(t, i, 1);
		g->shards[i] = wl_store_int(t, i, 2);
		g->here = wl_store_bool(t, i, 3);
	}
	SPI_freetuptable(t);
}

/* on_shards: sql with each of our tables named as its shard in the group */
static char *
on_shards(const char *sql, const ShardGroup *g)
{
	StringInfoData out;

	initStringInfo(&out);
	while (*sql)
	{
		int			i;

		for (i = 0; i < g->n; i++)
		{
			size_t		len = strlen(g->tables[i]);

			if (strncmp(sql, g->tables[i], len) == 0 && !isalnum((unsigned char) sql[len]) &&
				sql[len] != '_')
			{
				appendStringInfo(&out, "%s_" INT64_FORMAT, g->tables[i], g->shards[i]);
				sql += len;
				break;
			}
		}
		if (i == g->n)
			appendStringInfoChar(&out, *sql++);
	}
	return out.data;
}

/*
 * wl_store_citus_local_due: a maintenance scan (wl_sql_local_due[scan]) of
 * the shards of workload.workload_rows this node holds, each read as the plain
 * table it is here: the first limit rows in fair order (a tenant's rows are
 * all in one shard group, so each group's ranks are its tenants'), each with
 * its tenant remembered (the row is then locked by it).  Each node so looks
 * after its own tenants, and one that is down stops nobody else's
 * maintenance.
 */
int
wl_store_citus_local_due(int scan, TimestampTz now, int limit, WlDue **out)
{
	int			nshards;
	int64	   *shards = local_shards(&nshards);
	char	   *sql = wl_store_sql_text(wl_sql_local_due[scan]);
	Oid			types[2] = {TIMESTAMPTZOID, INT4OID};
	Datum		a[2];
	WlDue	   *all = NULL;
	int			n = 0;

	a[0] = TimestampTzGetDatum(now);
	a[1] = Int32GetDatum(limit);
	for (int i = 0; i < nshards; i++)
	{
		ShardGroup	g;
		char	   *one;
		int			got;
		WlDue	   *part;

		if (!shard_here(psprintf("workload_rows_" INT64_FORMAT, shards[i])))
			continue;
		shard_group(shards[i], &g);
		one = on_shards(sql, &g);
		if (SPI_execute_with_args(one, 2, types, a, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "workload: the maintenance scan of shard " INT64_FORMAT " failed", shards[i]);
		got = wl_store_dues(SPI_tuptable, &part);
		all = all ? repalloc(all, sizeof(WlDue) * (n + got + 1)) : palloc(sizeof(WlDue) * (got + 1));
		memcpy(all + n, part, sizeof(WlDue) * got);
		n += got;
	}
	if (n > 1)
		qsort(all, n, sizeof(WlDue), fair_order);
	*out = all ? all : palloc(sizeof(WlDue));
	return Min(n, limit);
}


/*
 * wl_store_citus_local_purge is wl_store_purge on Citus: for each shard
 * group this node holds, the same retention statement run on the group's
 * shards as the plain tables they are here.  Each group is first locked as
 * Citus's own writes lock a shard (P_CITUS_SHARD_LOCK), so a shard move
 * waits for it, and skipped when a move took it away meanwhile.
 */
uint64
wl_store_citus_local_purge(TimestampTz before, int batch, bool include_dead_letter)
{
	int			n;
	int64	   *shards = local_shards(&n);
	uint64		done = 0;
	Oid			types[2] = {TIMESTAMPTZOID, INT4OID};

	for (int i = 0; i < n && done < (uint64) batch; i++)
	{
		ShardGroup	g;
		Datum		lock[1];

		shard_group(shards[i], &g);
		lock[0] = PointerGetDatum(wl_store_int8_array(g.shards, g.n));
		SPI_freetuptable(wl_store_run(P_CITUS_SHARD_LOCK, lock, NULL, 0, SPI_OK_SELECT));
		shard_group(shards[i], &g);
		if (!g.here)
			continue;
		for (int kind = 0; kind < (include_dead_letter ? 2 : 1) && done < (uint64) batch; kind++)
		{
			Datum		a[2];

			a[0] = TimestampTzGetDatum(before);
			a[1] = Int32GetDatum(batch - (int) done);
			(void) wl_store_run_text(on_shards(wl_store_sql_text(wl_sql_purge[kind]), &g),
									 2, types, a, NULL, SPI_OK_DELETE);
			done += SPI_processed;
		}
	}
	return done;
}
