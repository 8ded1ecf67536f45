/*
 * api.c: what the SQL entry points share: entering and leaving an API call
 * (the SPI connection; the caller is resolved afresh for each call), moving
 * an answer out of SPI memory, and the rows of set-returning answers.
 * Layer 4.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"

#include "api.h"
#include "authz.h"
#include "compat.h"

/* wl_api_begin starts an API call's work: connects to SPI, forgets the last caller. */
void
wl_api_begin(void)
{
	wl_authz_forget_caller();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "could not connect to SPI");
}

/* wl_api_end ends it (everything the answer needs must have been transferred). */
void
wl_api_end(void)
{
	SPI_finish();
}

/* wl_api_transfer copies a jsonb answer out of SPI memory into the caller's context. */
Jsonb *
wl_api_transfer(Jsonb *j)
{
	if (j == NULL)
		return NULL;
	return (Jsonb *) DatumGetPointer(SPI_datumTransfer(JsonbPGetDatum(j), false, -1));
}

/*
 * wl_api_report_item appends the row of one batch item (workload_id,
 * outcome, code, document) to a set-returning function's result: outcome
 * done with its document when err is WL_OK, else "refused" with the error's
 * token.  workload_id is NULL for an item that named none.
 */
void
wl_api_report_item(ReturnSetInfo *rsinfo, const char *workload_id, const char *done,
				   WlErr err, Jsonb *doc)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	bool		ok = err == WL_OK;

	values[0] = workload_id ? CStringGetTextDatum(workload_id) : (Datum) 0;
	nulls[0] = workload_id == NULL;
	values[1] = CStringGetTextDatum(ok ? done : "refused");
	values[2] = ok ? (Datum) 0 : CStringGetTextDatum(wl_errors[err].token);
	nulls[2] = ok;
	values[3] = ok && doc ? JsonbPGetDatum(doc) : (Datum) 0;
	nulls[3] = !ok || doc == NULL;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* wl_api_put_text appends a one-text-column row to a set-returning function's result. */
void
wl_api_put_text(ReturnSetInfo *rsinfo, const char *s)
{
	Datum		values[1];
	bool		nulls[1] = {false};

	values[0] = CStringGetTextDatum(s);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}
