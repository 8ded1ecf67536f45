/* grants.h: signed grants, run authorities, effective scopes (grants.c; layer 3). */
#ifndef WL_GRANTS_H
#define WL_GRANTS_H

#include "utils/array.h"
#include "utils/jsonb.h"

#include "spec.h"

extern bool wl_grant_shape(JsonbContainer *g, char **detail);
extern Jsonb *wl_grant_sign(Jsonb *grant);
extern bool wl_grant_verify(Jsonb *signed_grant, const char **why);
extern bool wl_grant_current(Jsonb *snapshot, const char **why);
extern void wl_grant_check_snapshot(const WlSpec *spec);
extern Jsonb *wl_grant_run_authority(const WlSpec *spec, const char *workload_id);
extern void wl_grant_check_run_authority(Jsonb *authority, const char *workload_id,
										 const char *tenant_id, const char *application_id);
extern ArrayType *wl_grant_effective_scopes(ArrayType *granted, ArrayType *current);

#endif
