/* api.h: what every SQL entry point shares (api.c; layer 4). */
#ifndef WL_API_H
#define WL_API_H

#include "fmgr.h"
#include "funcapi.h"
#include "utils/jsonb.h"

#include "errors.h"

extern void wl_api_begin(void);
extern void wl_api_end(void);
extern Jsonb *wl_api_transfer(Jsonb *j);
extern void wl_api_report_item(ReturnSetInfo *rsinfo, const char *workload_id,
							   const char *done, WlErr err, Jsonb *doc);
extern void wl_api_put_text(ReturnSetInfo *rsinfo, const char *s);

#endif
