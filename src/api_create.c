/*
 * api_create.c: workload_create.  Layer 4: checks the argument, parses the
 * spec (spec.c), creates (create.c).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/jsonb.h"

#include "api.h"
#include "args.h"
#include "create.h"
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
	WlSpec		spec;
	Jsonb	   *doc;

	wl_args_require(fcinfo, "spec");
	wl_spec_parse(PG_GETARG_JSONB_P(0), &spec);
	wl_api_begin();
	doc = wl_api_transfer(wl_create(&spec));
	wl_api_end();
	PG_RETURN_JSONB_P(doc);
}
