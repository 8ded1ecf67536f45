/*
 * catalog.c: the extension's schema, the workload_state type and its label
 * OIDs, resolved once per backend through the syscache and forgotten when
 * the type changes (DROP/CREATE EXTENSION in this backend's life).  C never
 * spells the API schema; this file reads it from pg_extension, and refuses
 * to work on tables of another version than the library's.  Layer 2.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "storage/lmgr.h"
#include "utils/syscache.h"

#include "catalog.h"

static bool cache_valid = false;
static uint64 generation = 0;
static Oid	extension_owner = InvalidOid;
static Oid	state_type = InvalidOid;
static uint32 state_type_hash = 0;
static Oid	state_oids[WL_STATE_COUNT];
static Oid	workload_seq = InvalidOid;
static Oid	event_seq = InvalidOid;
static Oid	store_schema = InvalidOid;
static Oid	extension_oid = InvalidOid;

/* A change to our enum type makes the cached OIDs, and plans typed with them, stale. */
static void
type_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	if (hashvalue == 0 || hashvalue == state_type_hash)
		cache_valid = false;
}

/* wl_catalog_init registers the invalidation callback; called from _PG_init. */
void
wl_catalog_init(void)
{
	CacheRegisterSyscacheCallback(TYPEOID, type_changed, (Datum) 0);
}

/*
 * extension_row reads pg_extension's namespace and owner of extoid
 * (get_extension_schema is static before 16).
 */
static Oid
extension_row(Oid extoid, Oid *owner, char **version)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
		if (owner)
			*owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
		if (version)
		{
			bool		isnull;
			Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
										 RelationGetDescr(rel), &isnull);

			*version = isnull ? "" : TextDatumGetCString(d);
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/*
 * wl_catalog_api_schema: the schema the extension's API lives in, or
 * InvalidOid when the extension is not installed in this database.
 */
Oid
wl_catalog_api_schema(void)
{
	Oid			extoid = get_extension_oid("workload", true);

	return OidIsValid(extoid) ? extension_row(extoid, NULL, NULL) : InvalidOid;
}

static void
ensure_cache(void)
{
	Oid			nsp = InvalidOid;
	Oid			extoid;
	char	   *version = NULL;

	if (cache_valid)
		return;
	extoid = get_extension_oid("workload", true);
	if (OidIsValid(extoid))
		nsp = extension_row(extoid, &extension_owner, &version);
	extension_oid = extoid;
	if (!OidIsValid(nsp))
		elog(ERROR, "extension \"workload\" is not installed in this database");
	/*
	 * The library speaks to the tables of its own version only; while an
	 * install or update script runs, the tables are on their way there.
	 */
	if (!creating_extension && strcmp(version, WL_EXTVERSION) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"workload\" is at version %s in this database, and its library is version %s",
						version, WL_EXTVERSION),
				 errhint("Run ALTER EXTENSION workload UPDATE.")));
	state_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								 CStringGetDatum("workload_state"), ObjectIdGetDatum(nsp));
	if (!OidIsValid(state_type))
		elog(ERROR, "type workload_state not found in the extension's schema");
	state_type_hash = GetSysCacheHashValue1(TYPEOID, ObjectIdGetDatum(state_type));
	for (int i = 0; i < WL_STATE_COUNT; i++)
	{
		HeapTuple	tup = SearchSysCache2(ENUMTYPOIDNAME, ObjectIdGetDatum(state_type),
										  CStringGetDatum(wl_state_name((WlState) i)));

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "workload_state has no label \"%s\"", wl_state_name((WlState) i));
		state_oids[i] = ((Form_pg_enum) GETSTRUCT(tup))->oid;
		ReleaseSysCache(tup);
	}
	workload_seq = InvalidOid;
	event_seq = InvalidOid;
	store_schema = get_namespace_oid("workload", false);
	generation++;
	cache_valid = true;
}

/*
 * wl_catalog_generation: a number that changes whenever the cached OIDs were
 * resolved again; whatever was built with older OIDs (saved plans) is stale.
 */
uint64
wl_catalog_generation(void)
{
	ensure_cache();
	return generation;
}

/* wl_catalog_owner: the extension's owner, who owns its tables and as whom the API writes. */
Oid
wl_catalog_owner(void)
{
	ensure_cache();
	return extension_owner;
}

Oid
wl_catalog_state_type(void)
{
	ensure_cache();
	return state_type;
}

Oid
wl_catalog_state_oid(WlState s)
{
	ensure_cache();
	return state_oids[s];
}

Datum
wl_catalog_state_datum(WlState s)
{
	return ObjectIdGetDatum(wl_catalog_state_oid(s));
}

/* wl_catalog_state_from_oid maps a label OID to its state; an unknown one is a bug. */
WlState
wl_catalog_state_from_oid(Oid oid)
{
	ensure_cache();
	for (int i = 0; i < WL_STATE_COUNT; i++)
	{
		if (state_oids[i] == oid)
			return (WlState) i;
	}
	elog(ERROR, "unknown workload_state OID %u", oid);
	return WL_CREATED;			/* keep compiler quiet */
}

/* wl_catalog_workload_seq: the sequence workloads' creation sequences are drawn from. */
Oid
wl_catalog_workload_seq(void)
{
	ensure_cache();
	if (!OidIsValid(workload_seq))
	{
		workload_seq = get_relname_relid("workload_seq", get_namespace_oid("workload", false));
		if (!OidIsValid(workload_seq))
			elog(ERROR, "sequence workload.workload_seq not found");
	}
	return workload_seq;
}

/* wl_catalog_event_seq: the sequence events' sequence numbers are drawn from. */
Oid
wl_catalog_event_seq(void)
{
	ensure_cache();
	if (!OidIsValid(event_seq))
	{
		event_seq = get_relname_relid("event_seq", store_schema);
		if (!OidIsValid(event_seq))
			elog(ERROR, "sequence workload.event_seq not found");
	}
	return event_seq;
}

/* wl_catalog_store_schema: the schema our tables live in (workload). */
Oid
wl_catalog_store_schema(void)
{
	ensure_cache();
	return store_schema;
}

/*
 * The tick's single-runner lock is taken on a sub-object of the extension
 * itself (pg_extension, its OID, this sub-id): no SQL command locks a
 * sub-object of an extension, so no role, whatever its rights, can take or
 * hold it.  An advisory lock key, which any role may take, would let a
 * stranger with a login hold every tick off.
 */
#define WL_TICK_LOCK_SUBID 1

/*
 * wl_catalog_tick_lock takes the tick's single-runner lock for the
 * transaction, without waiting: false when another tick holds it.
 */
bool
wl_catalog_tick_lock(void)
{
	ensure_cache();
	return ConditionalLockDatabaseObject(ExtensionRelationId, extension_oid,
										 WL_TICK_LOCK_SUBID, ExclusiveLock);
}
