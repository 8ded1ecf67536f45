/*
 * api_read.c: workload_get, workload_list, workload_history.  Reads only.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/jsonb.h"

#include "authz.h"
#include "clock.h"
#include "compat.h"
#include "errors.h"
#include "payload.h"
#include "store.h"

#define WL_MAX_LIST 10000

/* workload_get(workload_id) -> the whole document; WORKLOAD_NOT_FOUND if none. */
PG_FUNCTION_INFO_V1(workload_get);
Datum
workload_get(PG_FUNCTION_ARGS)
{
	char	   *id;
	Jsonb	   *doc;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("workload_id must not be NULL."));
	id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "workload_id");
	SPI_connect();
	doc = wl_store_document(id, true);
	if (doc == NULL)
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	doc = wl_store_transfer(doc);
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
}

/* put_rows copies every row of t (columns 1..natts of the result) into the SRF. */
static void
put_rows(ReturnSetInfo *rsinfo, SPITupleTable *t, uint64 n)
{
	int			natts = rsinfo->setDesc->natts;
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);

	for (uint64 r = 0; r < n; r++)
	{
		for (int c = 0; c < natts; c++)
			values[c] = wl_store_datum(t, (int) r, c + 1, &nulls[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * workload_list(tenant_id, application_id, state, lim) -> SETOF jsonb,
 * priority first, then oldest.  lim must be 1..10000.
 */
PG_FUNCTION_INFO_V1(workload_list);
Datum
workload_list(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	SPITupleTable *t;
	int			lim;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3))
		wl_refuse(WL_E_INVALID, errdetail("tenant_id, application_id and lim must not be NULL."));
	lim = PG_GETARG_INT32(3);
	if (lim < 1 || lim > WL_MAX_LIST)
		wl_refuse(WL_E_INVALID, errdetail("lim must be from 1 to %d.", WL_MAX_LIST));
	args[0] = CStringGetTextDatum(wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "tenant_id"));
	args[1] = CStringGetTextDatum(wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "application_id"));
	args[2] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	nulls[2] = PG_ARGISNULL(2) ? 'n' : ' ';
	args[3] = Int32GetDatum(lim);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	SPI_connect();
	wl_authz_require_member(TextDatumGetCString(args[0]), TextDatumGetCString(args[1]));
	t = wl_store_run(P_LIST, args, nulls, 0, SPI_OK_SELECT);
	put_rows(rsinfo, t, SPI_processed);
	SPI_finish();
	return (Datum) 0;
}

/* workload_history(workload_id) -> its events in order; WORKLOAD_NOT_FOUND if none. */
PG_FUNCTION_INFO_V1(workload_history);
Datum
workload_history(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		args[1];
	SPITupleTable *t;
	char	   *id;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("workload_id must not be NULL."));
	id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "workload_id");
	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	if (wl_store_document(id, false) == NULL)
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", id));
	args[0] = CStringGetTextDatum(id);
	t = wl_store_run(P_HISTORY, args, NULL, 0, SPI_OK_SELECT);
	put_rows(rsinfo, t, SPI_processed);
	SPI_finish();
	return (Datum) 0;
}

/*
 * workload_stats(tenant_id, application_id) -> jsonb: counts per state, due
 * and delayed READY work, the age of the oldest due READY workload, held
 * and dead-lettered work, completions and failures in the last minute.
 * Naming a tenant the caller is not a member of is WORKLOAD_UNAUTHORIZED.
 */
PG_FUNCTION_INFO_V1(workload_stats);
Datum
workload_stats(PG_FUNCTION_ARGS)
{
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', 'n'};
	char	   *tenant;
	char	   *app;
	Jsonb	   *stats;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		wl_refuse(WL_E_INVALID, errdetail("tenant_id and application_id must not be NULL."));
	tenant = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "tenant_id");
	app = wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "application_id");
	args[0] = CStringGetTextDatum(tenant);
	args[1] = CStringGetTextDatum(app);
	args[2] = TimestampTzGetDatum(wl_now());
	args[3] = (Datum) 0;
	SPI_connect();
	wl_authz_require_member(tenant, app);
	stats = wl_store_transfer(wl_store_one_row_jsonb(P_STATS, args, nulls));
	SPI_finish();
	PG_RETURN_JSONB_P(stats);
}
