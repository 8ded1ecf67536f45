/* quota.h: per-tenant quotas (quota.c; layer 3). */
#ifndef WL_QUOTA_H
#define WL_QUOTA_H

#include "errors.h"

extern void wl_quota_init(void);
extern WlErr wl_quota_admit(const char *tenant_id, int64 bytes, char **detail);
extern void wl_quota_require(const char *tenant_id, int64 bytes);
extern void wl_quota_written(const char *tenant_id, int64 bytes);
extern void wl_quota_unadmit(const char *tenant_id, int64 bytes);
extern void wl_quota_finished(const char *tenant_id);
extern void wl_quota_stored(const char *tenant_id, int64 bytes);
extern void wl_quota_forget(void);
extern void wl_quota_require_schedule(const char *tenant_id, const char *application_id,
									  const char *schedule_id);

#endif
