/*
 * errors.c: the data behind errors.h and the SQL entry point that lists it.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "compat.h"
#include "errors.h"

#define WL_ERR_ROW(name, a, b, c, token, message) \
	[name] = {MAKE_SQLSTATE('W', 'L', a, b, c), (const char[]){'W', 'L', a, b, c, '\0'}, token, message},
const WlErrInfo wl_errors[WL_E_COUNT] = {
	WL_ERROR_TABLE(WL_ERR_ROW)
};
#undef WL_ERR_ROW

/*
 * workload_error_codes lists every refusal: token, SQLSTATE, primary message.
 */
PG_FUNCTION_INFO_V1(workload_error_codes);
Datum
workload_error_codes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < WL_E_COUNT; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(wl_errors[i].token);
		values[1] = CStringGetTextDatum(wl_errors[i].sqlstate);
		values[2] = CStringGetTextDatum(wl_errors[i].message);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
