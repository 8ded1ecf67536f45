/*
 * report.h: telling the server how one attempt ended, and logging it.
 */
#ifndef WLW_REPORT_H
#define WLW_REPORT_H

#include <stdbool.h>

#include "calls.h"

extern void wlw_report_lost(WlwItem *it, const char *call, const WlwError *err,
							const char *then);
extern void wlw_report_cancelled(WlwItem *it);
extern void wlw_report_fail(WlwItem *it, const char *kind, const char *error);
extern void wlw_report_not_started(WlwItem *it, WlwCall v, const WlwError *err);
extern void wlw_report_completed(WlwItem *it, WlwCall v, const WlwError *err, bool unmet);
extern void wlw_report_complete_one(WlwItem *it, const char *output);

#endif							/* WLW_REPORT_H */
