/*
 * store_scope.c: the shard scope a call on Citus runs in on the node that
 * holds its tenant (store_shard.c opens and closes it), and what the store
 * asks of it: whether one is open (wl_store_shard_active), the relation
 * each of our names stands for in it (wl_store_relid, wl_store_generation),
 * and a statement's text over the shards (wl_store_shard_sql: each table
 * named as its shard, each of our views read as its definition).  Nothing
 * here runs a statement of the store: store.c asks it, store_shard.c fills
 * it.  Layer 2.
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "catalog.h"
#include "store_ops.h"
#include "store_scope.h"
#include "store_sql.h"

static WlShardMap *active = NULL;
static int	scope_depth = 0;
static uint64 epoch = 1;
static uint64 epoch_catalog = 0;

/* activate: m the group relations resolve in (NULL: the tables themselves) */
static void
activate(WlShardMap *m)
{
	if (m != active)
		epoch++;
	active = m;
}

/*
 * wl_store_scope_open: the calls that follow run on map's shards, until
 * wl_store_scope_close(saved) (saved: the scope before)
 */
void
wl_store_scope_open(WlShardMap *map, WlShardScope *saved)
{
	saved->map = active;
	saved->depth = scope_depth;
	activate(map);
	scope_depth++;
}

/*
 * wl_store_scope_close: the scope before wl_store_scope_open.  Left for no
 * scope, the group stays what wl_store_relid names (nothing outside a scope
 * writes through those names: wl_store_direct() is false there), so the
 * relation caches stay valid for the next call of the same tenant.
 */
void
wl_store_scope_close(const WlShardScope *saved)
{
	if (saved->map != NULL)
		activate(saved->map);
	scope_depth = saved->depth;
}

/* wl_store_scope_forget: no group is named any more (its map is about to be freed); not in a scope */
void
wl_store_scope_forget(void)
{
	Assert(scope_depth == 0);
	activate(NULL);
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
