/*
 * store_shard.c: a call of one tenant on the Citus node that holds the
 * tenant, on the node's own shards (docs/operations.md, "Sharding by
 * tenant").
 *
 * On a Citus worker our tables are empty shells, and each hash range of
 * tenants lives in a group of co-located shard tables (workload_rows_102042,
 * queue_102106, ...).  A call whose tenant this node holds runs inside a
 * shard scope (wl_store_shard_enter): there the paths that write without a
 * plan (store_direct.c, store_claim_direct.c, store_fenced.c) find their
 * tables and indexes by name through wl_store_relid, which names the
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

#define SHARD_TENANT_KEY 128
#define SHARD_TENANTS_MAX 4096
#define SHARD_MAPS_MAX 4096

typedef struct TenantShard
{
	char		tenant_id[SHARD_TENANT_KEY];
	int64		anchor;			/* the tenant's shard of workload_rows */
} TenantShard;

/* A shard group as this node names it: each table's shard (reference tables: their one shard). */
typedef struct ShardMap
{
	int64		anchor;
	int			n;
	char	  **tables;
	int64	   *shards;
	/*
	 * the table has a column default its shard lacks (Citus evaluates a
	 * sequence's default where the statement is planned, and leaves it off
	 * the shards): an INSERT that leaves the column out cannot run there
	 */
	bool	   *lacks_defaults;
	Oid			anchor_rel;		/* workload_rows_<anchor> when the map was made */
} ShardMap;

static HTAB *tenant_shards = NULL;
static HTAB *maps = NULL;
static uint64 maps_generation = 0;
static ShardMap *active = NULL;
static int	scope_depth = 0;
static uint64 epoch = 1;
static uint64 epoch_catalog = 0;
static LocalTransactionId checked_lxid = InvalidLocalTransactionId;
static int64 checked_anchor = 0;
static int64 elsewhere = 0;		/* the last shard found placed on another node */

static void
forget_all(void)
{
	if (tenant_shards)
		hash_destroy(tenant_shards);
	if (maps)
	{
		HASH_SEQ_STATUS s;
		ShardMap   *m;

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
static ShardMap *
map_of(int64 anchor)
{
	ShardMap   *m;
	bool		found;
	Datum		a[1];
	SPITupleTable *t;
	MemoryContext old;

	if (maps == NULL || hash_get_num_entries(maps) >= SHARD_MAPS_MAX)
	{
		HASHCTL		ctl;

		forget_all();
		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(ShardMap);
		maps = hash_create("workload shard maps", 64, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	m = hash_search(maps, &anchor, HASH_ENTER, &found);
	if (found && m->anchor_rel == anchor_rel(anchor))
		return m;
	if (found)
	{
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

/* activate: m the group relations resolve in (NULL: the tables themselves) */
static void
activate(ShardMap *m)
{
	if (m != active)
		epoch++;
	active = m;
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
	ShardMap   *m;

	saved->map = active;
	saved->depth = scope_depth;
	if (tenant == NULL || wl_statement_path || !wl_store_citus() || !wl_store_citus_distributed())
		return false;
	if (maps_generation != wl_catalog_generation())
	{
		forget_all();
		active = NULL;
		epoch++;
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
	activate(m);
	scope_depth++;
	return true;
}

/*
 * wl_store_shard_leave: the scope before wl_store_shard_enter.  Left for no
 * scope, the group stays what wl_store_relid names (nothing outside a scope
 * writes through those names: wl_store_direct() is false there), so the
 * relation caches stay valid for the next call of the same tenant.
 */
void
wl_store_shard_leave(const WlShardScope *saved)
{
	if (saved->map != NULL)
		activate(saved->map);
	scope_depth = saved->depth;
}

/* wl_store_shard_active: whether a shard scope is open (wl_store_shard_enter) */
bool
wl_store_shard_active(void)
{
	return scope_depth > 0;
}

/*
 * wl_store_generation: a number that changes whenever what wl_store_relid
 * answers may change (the catalog's generation, the shard group in scope):
 * the relation caches of the direct paths are built again when it does.
 */
uint64
wl_store_generation(void)
{
	uint64		gen = wl_catalog_generation();

	if (gen != epoch_catalog)
	{
		epoch_catalog = gen;
		epoch++;
	}
	return epoch;
}

/*
 * wl_store_relid: the relation workload.<name> (a table or an index) the
 * direct paths use: itself, or once a shard scope was entered the shard of
 * its table in the group of the latest scope (<name>_<shard id>, as Citus
 * names a shard's relations).  InvalidOid when there is no such relation.
 */
Oid
wl_store_relid(const char *name)
{
	Oid			base = get_relname_relid(name, wl_catalog_store_schema());
	Oid			table = base;
	char	   *tname;
	char		shard_name[NAMEDATALEN + 32];
	Oid			oid;

	if (active == NULL || !OidIsValid(base))
		return base;
	if (get_rel_relkind(base) == RELKIND_INDEX)
		table = IndexGetRelation(base, false);
	tname = get_rel_name(table);
	for (int i = 0; i < active->n; i++)
	{
		if (strcmp(active->tables[i], tname) != 0)
			continue;
		snprintf(shard_name, sizeof(shard_name), "%s_" INT64_FORMAT, name, active->shards[i]);
		if (strlen(shard_name) >= NAMEDATALEN)
			elog(ERROR, "the shard of workload.%s has a name longer than %d bytes", name,
				 NAMEDATALEN - 1);
		oid = get_relname_relid(shard_name, wl_catalog_store_schema());
		if (!OidIsValid(oid))
			elog(ERROR, "shard workload.%s is not on this node", shard_name);
		return oid;
	}
	/* a table of this node only (neither distributed nor a reference table) */
	return base;
}

/*
 * on_shards: sql with each table of the group in scope named as its shard
 * (workload.<table> -> workload.<table>_<shard id>)
 */
static char *
on_shards(const char *sql)
{
	StringInfoData out;
	static const char prefix[] = "workload.";

	initStringInfo(&out);
	while (*sql)
	{
		int			i = active ? active->n : 0;

		if (strncmp(sql, prefix, sizeof(prefix) - 1) == 0)
		{
			const char *name = sql + sizeof(prefix) - 1;

			for (i = 0; i < active->n; i++)
			{
				size_t		len = strlen(active->tables[i]);

				if (strncmp(name, active->tables[i], len) == 0 &&
					!isalnum((unsigned char) name[len]) && name[len] != '_')
				{
					appendStringInfo(&out, "%s%s_" INT64_FORMAT, prefix, active->tables[i],
									 active->shards[i]);
					sql = name + len;
					break;
				}
			}
		}
		if (active == NULL || i == active->n)
			appendStringInfoChar(&out, *sql++);
	}
	return out.data;
}

/*
 * wl_store_shard_deps_unmet is workload.dependencies_unmet(tenant, seq) on
 * the shards in scope (a function's statement on our distributed tables is
 * one Citus cannot plan inside a claim on the shards), read in the claim's
 * snapshot.
 */
bool
wl_store_shard_deps_unmet(Datum tenant, Datum seq)
{
	static char *sql = NULL;
	static int64 sql_anchor = 0;
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		a[2] = {tenant, seq};
	bool		isnull;
	bool		unmet;

	if (active == NULL || scope_depth == 0)
		elog(ERROR, "workload: a dependency check on shards outside a shard scope");
	if (sql == NULL || sql_anchor != active->anchor)
	{
		if (sql)
			pfree(sql);
		sql = MemoryContextStrdup(TopMemoryContext, on_shards(wl_sql_deps_unmet));
		sql_anchor = active->anchor;
	}
	if (SPI_execute_with_args(sql, 2, types, a, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "workload: the dependency check on shard group " INT64_FORMAT " failed", active->anchor);
	unmet = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return unmet && !isnull;
}

/* wl_store_shard_anchor: the workload_rows shard of the group in scope (0: none) */
int64
wl_store_shard_anchor(void)
{
	return scope_depth > 0 && active ? active->anchor : 0;
}

/*
 * The functions of ours a statement may call on the shards: they read no
 * table (a function that reads one would read the empty distributed table
 * there, through Citus).
 */
static const char *const shard_safe_functions[] = {
	"attempt_id_for", "claim_deadline", "claim_id_for", "event_evidence", "event_type",
	"queue_key", "member_role", "workload_state", NULL
};

/*
 * mapped: whether name (len bytes) is a table of the group in scope, or a
 * function above; a table into which the statement inserts (insert) only
 * if its shard has the table's column defaults
 */
static bool
mapped(const char *name, size_t len, bool insert)
{
	for (int i = 0; i < active->n; i++)
	{
		if (strlen(active->tables[i]) == len && strncmp(active->tables[i], name, len) == 0)
			return !(insert && active->lacks_defaults[i]);
	}
	for (int i = 0; shard_safe_functions[i]; i++)
	{
		if (strlen(shard_safe_functions[i]) == len && strncmp(shard_safe_functions[i], name, len) == 0)
			return true;
	}
	return false;
}

/*
 * Our views, which a statement on the shards reads as their definitions
 * over the shards (a view's own text names the distributed tables, empty
 * on a worker): their definitions as pg_get_viewdef writes them with only
 * pg_catalog on the search path (every name qualified), per catalog
 * generation.
 */
static const char *const view_names[] = {
	"workloads", "carried_events", "events", "event_log", "attempt_log", "results", "leases", NULL
};
static char *view_defs[lengthof(view_names)];
static uint64 views_generation = 0;

/* view_def: the definition of our view name (len bytes), or NULL when it is not one */
static const char *
view_def(const char *name, size_t len)
{
	if (views_generation != wl_catalog_generation())
	{
		for (int i = 0; view_names[i]; i++)
		{
			if (view_defs[i])
				pfree(view_defs[i]);
			view_defs[i] = NULL;
		}
		views_generation = wl_catalog_generation();
	}
	for (int i = 0; view_names[i]; i++)
	{
		Oid			oid;
		char	   *def;
		size_t		n;

		if (strlen(view_names[i]) != len || strncmp(view_names[i], name, len) != 0)
			continue;
		if (view_defs[i])
			return view_defs[i];
		oid = get_relname_relid(view_names[i], wl_catalog_store_schema());
		if (!OidIsValid(oid))
			return NULL;
		def = text_to_cstring(DatumGetTextPP(DirectFunctionCall1(pg_get_viewdef, ObjectIdGetDatum(oid))));
		n = strlen(def);
		while (n > 0 && (def[n - 1] == ';' || isspace((unsigned char) def[n - 1])))
			def[--n] = '\0';
		view_defs[i] = MemoryContextStrdup(TopMemoryContext, def);
		return view_defs[i];
	}
	return NULL;
}

/* has_alias: whether what follows a relation's name in FROM (at) is its alias */
static bool
has_alias(const char *at)
{
	static const char *const not_alias[] = {
		"WHERE", "JOIN", "LEFT", "RIGHT", "INNER", "CROSS", "FULL", "ON", "GROUP", "ORDER", "LIMIT",
		"OFFSET", "UNION", "FOR", "HAVING", "WINDOW", "USING", "NATURAL", "EXCEPT", "INTERSECT", NULL
	};

	while (isspace((unsigned char) *at))
		at++;
	if (!isalpha((unsigned char) *at) && *at != '_')
		return false;
	for (int i = 0; not_alias[i]; i++)
	{
		size_t		len = strlen(not_alias[i]);

		if (pg_strncasecmp(at, not_alias[i], len) == 0 && !isalnum((unsigned char) at[len]) && at[len] != '_')
			return false;
	}
	return true;
}

/*
 * with_views_expanded: sql with each of our views it reads replaced by its
 * definition, as a subquery under the view's name where the statement gives
 * it no alias (views in views too); NULL past a few levels
 */
static const char *
with_views_expanded(const char *sql, int depth)
{
	static const char prefix[] = "workload.";
	StringInfoData out;
	const char *from = sql;
	bool		any = false;

	if (depth > 4)
		return NULL;
	initStringInfo(&out);
	for (const char *at = strstr(sql, prefix); at; at = strstr(at, prefix))
	{
		const char *name = at + sizeof(prefix) - 1;
		size_t		len = 0;
		const char *def;
		const char *inner;

		while (isalnum((unsigned char) name[len]) || name[len] == '_')
			len++;
		def = (at > sql && (at[-1] == '\'' || at[-1] == '"')) ? NULL : view_def(name, len);
		if (def == NULL)
		{
			at = name;
			continue;
		}
		inner = with_views_expanded(def, depth + 1);
		if (inner == NULL)
			return NULL;
		appendBinaryStringInfo(&out, from, at - from);
		appendStringInfo(&out, "(%s)", inner);
		if (!has_alias(name + len))
			appendStringInfo(&out, " AS %.*s", (int) len, name);
		from = at = name + len;
		any = true;
	}
	if (!any)
		return sql;
	appendStringInfoString(&out, from);
	return out.data;
}

/*
 * wl_store_shard_sql: sql on the shards of the group in scope (each of our
 * tables named as its shard), or NULL where it cannot run there as it is:
 * it names something of ours that is not a table of the group or a
 * function above (a view, a table of this node only, a function that reads
 * a table), or names one inside a string (a regclass literal).
 */
char *
wl_store_shard_sql(const char *sql)
{
	static const char prefix[] = "workload.";

	if (active == NULL || scope_depth == 0)
		return NULL;
	sql = with_views_expanded(sql, 0);
	if (sql == NULL)
		return NULL;
	for (const char *at = strstr(sql, prefix); at; at = strstr(at + 1, prefix))
	{
		const char *name = at + sizeof(prefix) - 1;
		size_t		len = 0;
		bool		insert = at - sql >= 12 && strncmp(at - 12, "INSERT INTO ", 12) == 0;

		while (isalnum((unsigned char) name[len]) || name[len] == '_')
			len++;

		if ((at > sql && (at[-1] == '\'' || at[-1] == '"' || isalnum((unsigned char) at[-1]) ||
						  at[-1] == '_')) || !mapped(name, len, insert))
			return NULL;
	}
	return on_shards(sql);
}
