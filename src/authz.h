/* authz.h: grants, scopes, the calling role (authz.c). */
#ifndef WL_AUTHZ_H
#define WL_AUTHZ_H

#include "payload.h"

extern Datum wl_authz_caller_name(void);
extern void wl_authz_check_snapshot(const WlSpec *spec);
extern bool wl_authz_grant_current(Jsonb *snapshot, const char **why);
extern ArrayType *wl_authz_effective_scopes(ArrayType *granted, ArrayType *current);
extern bool wl_authz_grant_shape(JsonbContainer *g, char **detail);
extern bool wl_authz_verify(Jsonb *signed_grant, const char **why);
extern Jsonb *wl_authz_run_authority(const WlSpec *spec, const char *workload_id);
extern void wl_authz_check_run_authority(Jsonb *authority, const char *workload_id,
										 const char *tenant_id, const char *application_id);
extern bool wl_authz_is_admin(void);
extern bool wl_authz_member(const char *tenant_id, const char *application_id);
extern void wl_authz_require_member(const char *tenant_id, const char *application_id);

#endif
