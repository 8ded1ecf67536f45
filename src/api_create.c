/*
 * api_create.c: workload_create and workload_create_many.  Layer 4: checks
 * the argument, parses the spec (spec.c), creates (create.c, create_many.c).
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api.h"
#include "args.h"
#include "compat.h"
#include "create.h"
#include "create_many.h"
#include "payload.h"
#include "store_ops.h"
#include "spec.h"

/*
 * workload_create(spec jsonb) -> jsonb: the workload document.  Same
 * (tenant, application, idempotency_key) with the same input and revision
 * returns the existing workload unchanged.
 */
PG_FUNCTION_INFO_V1(workload_create);
Datum
workload_create(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlSpec		spec;
	Jsonb	   *doc;

	wl_args_require(fcinfo, "spec");
	wl_spec_parse(PG_GETARG_JSONB_P(0), &spec);
	WL_API_ROUTE(fcinfo, spec.tenant_id, NULL);
	wl_api_begin(fcinfo, &api);
	doc = wl_api_transfer(wl_create(&spec));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(doc);
}

/*
 * specs_arg checks workload_create_many's argument (a JSON array of 1 to
 * WL_MAX_BATCH items, at most WL_MAX_BATCH_BYTES) and returns its items,
 * each as a jsonb of its own (an item that is no object is refused by the
 * spec's own check).
 */
static Jsonb **
specs_arg(FunctionCallInfo fcinfo, int *n)
{
	Jsonb	   *specs;
	Jsonb	  **out;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			k = 0;

	wl_args_require(fcinfo, "specs");
	specs = PG_GETARG_JSONB_P(0);
	if (!JB_ROOT_IS_ARRAY(specs) || JB_ROOT_IS_SCALAR(specs))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"specs\" must be a JSON array."));
	if (VARSIZE(specs) > WL_MAX_BATCH_BYTES)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"specs\" is %zu bytes; the limit is %d.",
							(size_t) VARSIZE(specs), WL_MAX_BATCH_BYTES));
	*n = JB_ROOT_COUNT(specs);
	if (*n < 1 || *n > WL_MAX_BATCH)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"specs\" has %d items; it must have 1 to %d.", *n, WL_MAX_BATCH));
	out = palloc(sizeof(Jsonb *) * (*n + 1));
	it = JsonbIteratorInit(&specs->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
			out[k++] = JsonbValueToJsonb(&v);
	}
	return out;
}

/*
 * workload_create_many(specs jsonb) -> TABLE(ord, workload_id, outcome,
 * code, document): creates each spec as workload_create would, all in this
 * one transaction, each decided on its own: "created", "existing" (an
 * idempotent replay) or "refused" (code its error code; nothing written for
 * it).  Rows come in the order of specs (ord from 1).
 */
PG_FUNCTION_INFO_V1(workload_create_many);
Datum
workload_create_many(PG_FUNCTION_ARGS)
{
	WlApi		api;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n;
	Jsonb	  **specs = specs_arg(fcinfo, &n);
	WlCreateItem *items = palloc0(sizeof(WlCreateItem) * (n + 1));

	WL_API_ROUTE(fcinfo, wl_api_one_tenant(fcinfo, specs, n), NULL);
	InitMaterializedSRF(fcinfo, 0);
	wl_api_begin(fcinfo, &api);
	wl_create_many(specs, n, items);
	for (int i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		bool		ok = items[i].err == WL_OK;

		values[0] = Int32GetDatum(i + 1);
		values[1] = ok ? CStringGetTextDatum(items[i].workload_id) : (Datum) 0;
		nulls[1] = !ok;
		values[2] = CStringGetTextDatum(items[i].outcome);
		values[3] = ok ? (Datum) 0 : CStringGetTextDatum(wl_errors[items[i].err].token);
		nulls[3] = ok;
		values[4] = ok ? JsonbPGetDatum(items[i].doc) : (Datum) 0;
		nulls[4] = !ok;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	wl_api_end(&api);
	return (Datum) 0;
}
