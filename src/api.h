/* api.h: what every SQL entry point shares (api.c; layer 4). */
#ifndef WL_API_H
#define WL_API_H

#include "fmgr.h"
#include "funcapi.h"
#include "utils/jsonb.h"

#include "errors.h"

/* One API call in progress: the user it runs as is switched back at its end. */
typedef struct WlApi
{
	Oid			saved_user;
	int			saved_context;
} WlApi;

extern void wl_api_begin(FunctionCallInfo fcinfo, WlApi *api);
extern void wl_api_end(WlApi *api);
extern Jsonb *wl_api_transfer(Jsonb *j);
extern void wl_api_report_item(ReturnSetInfo *rsinfo, const char *workload_id,
							   const char *done, WlErr err, Jsonb *doc);
extern void wl_api_put_text(ReturnSetInfo *rsinfo, const char *s);

/* api_route.c */
extern const char *wl_api_one_tenant(FunctionCallInfo fcinfo, Jsonb **specs, int n);
extern const char *wl_api_batch_tenant(FunctionCallInfo fcinfo, char **ids, int n);
extern bool wl_api_route(FunctionCallInfo fcinfo, const char *tenant, const char *workload_id,
						 Datum *result);

/*
 * WL_API_ROUTE: where the call's tenant lives on another node of a Citus
 * cluster, the call is made there and its answer returned (api_route.c).
 * Before a set-returning function's InitMaterializedSRF.
 */
#define WL_API_ROUTE(fcinfo, tenant, workload_id) \
	do { \
		Datum		wl_routed_; \
		if (wl_api_route((fcinfo), (tenant), (workload_id), &wl_routed_)) \
			return wl_routed_; \
	} while (0)

#endif
