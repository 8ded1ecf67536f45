/*
 * catalog.c: the extension's schema, the workload_state type and its label
 * OIDs, resolved once per backend through the syscache and forgotten when
 * the type changes (DROP/CREATE EXTENSION in this backend's life).  C never
 * spells the API schema; this file reads it from pg_extension.  Layer 2.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "catalog.h"

static bool cache_valid = false;
static uint64 generation = 0;
static Oid	state_type = InvalidOid;
static uint32 state_type_hash = 0;
static Oid	state_oids[WL_STATE_COUNT];

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

/* extension_schema: pg_extension.extnamespace (get_extension_schema is static before 16). */
static Oid
extension_schema(Oid extoid)
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
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
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

	return OidIsValid(extoid) ? extension_schema(extoid) : InvalidOid;
}

static void
ensure_cache(void)
{
	Oid			nsp;

	if (cache_valid)
		return;
	nsp = wl_catalog_api_schema();
	if (!OidIsValid(nsp))
		elog(ERROR, "extension \"workload\" is not installed in this database");
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
