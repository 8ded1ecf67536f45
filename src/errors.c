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

/*
 * wl_report_item appends the row of one batch item (workload_id, outcome,
 * code, document) to a set-returning function's result: outcome done with
 * its document when err is WL_E_COUNT, else "refused" with the error's
 * token.  workload_id is NULL for an item that named none.
 */
void
wl_report_item(ReturnSetInfo *rsinfo, const char *workload_id, const char *done, WlErr err,
			   Datum doc)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	bool		ok = err == WL_E_COUNT;

	values[0] = workload_id ? CStringGetTextDatum(workload_id) : (Datum) 0;
	nulls[0] = workload_id == NULL;
	values[1] = CStringGetTextDatum(ok ? done : "refused");
	values[2] = ok ? (Datum) 0 : CStringGetTextDatum(wl_errors[err].token);
	nulls[2] = ok;
	values[3] = ok ? doc : (Datum) 0;
	nulls[3] = !ok;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}
