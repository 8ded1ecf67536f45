/*
 * api_citus.c: SQL entry points for running on a Citus cluster
 * (docs/operations.md, "Sharding by tenant").  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/jsonb.h"

#include "api.h"
#include "store_ops.h"

/*
 * workload_citus_distribute(): on the coordinator of a Citus cluster, make
 * the keys, channel secret, members, revocations and grant lineage reference
 * tables and every per-workload table distributed by tenant_id, co-located
 * with workload.workload_rows.  WORKLOAD_INVALID without Citus or off the
 * coordinator.  Returns what it made; tables already distributed are left.
 */
PG_FUNCTION_INFO_V1(workload_citus_distribute);
Datum
workload_citus_distribute(PG_FUNCTION_ARGS)
{
	WlApi		api;
	Jsonb	   *out;

	wl_api_begin(fcinfo, &api);
	out = wl_api_transfer(wl_store_citus_distribute());
	wl_api_end(&api);
	PG_RETURN_JSONB_P(out);
}
