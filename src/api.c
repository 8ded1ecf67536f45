/*
 * api.c: what the SQL entry points share: entering and leaving an API call
 * (who called; running as the extension's owner; the SPI connection), moving
 * an answer out of SPI memory, and the rows of set-returning answers.
 * Layer 4.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "api.h"
#include "authz.h"
#include "catalog.h"
#include "compat.h"

/*
 * called_as_definer: whether the function being called is still declared
 * SECURITY DEFINER (a 1.1 definition, before ALTER EXTENSION workload
 * UPDATE): its caller is then the session's outer role, as 1.1 had it.
 * Cached in fn_extra.
 */
static bool
called_as_definer(FunctionCallInfo fcinfo)
{
	FmgrInfo   *fl = fcinfo->flinfo;
	HeapTuple	tup;

	if (fl == NULL)
		return false;
	if (fl->fn_extra == NULL)
	{
		bool	   *definer = MemoryContextAllocZero(fl->fn_mcxt, sizeof(bool));

		tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fl->fn_oid));
		if (HeapTupleIsValid(tup))
		{
			*definer = ((Form_pg_proc) GETSTRUCT(tup))->prosecdef;
			ReleaseSysCache(tup);
		}
		fl->fn_extra = definer;
	}
	return *(bool *) fl->fn_extra;
}

/*
 * wl_api_begin starts an API call's work.  The caller is the role that
 * called the function (current_user at the call, SPEC section 5): a
 * SECURITY DEFINER function of another role that calls the API acts with
 * that role's rights.  The call then runs as the extension's owner, who alone
 * may read and write the tables, until wl_api_end; an error ends the
 * (sub)transaction, which puts the user back by itself.
 */
void
wl_api_begin(FunctionCallInfo fcinfo, WlApi *api)
{
	Oid			caller = wl_authz_routed_caller();

	if (!OidIsValid(caller))
		caller = called_as_definer(fcinfo) ? GetOuterUserId() : GetUserId();

	wl_authz_set_caller(caller);
	GetUserIdAndSecContext(&api->saved_user, &api->saved_context);
	SetUserIdAndSecContext(wl_catalog_owner(),
						   api->saved_context | SECURITY_LOCAL_USERID_CHANGE);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "could not connect to SPI");
}

/* wl_api_end ends it (everything the answer needs must have been transferred). */
void
wl_api_end(WlApi *api)
{
	SPI_finish();
	SetUserIdAndSecContext(api->saved_user, api->saved_context);
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
