/* authz.h: grants, scopes, the calling role (authz.c). */
#ifndef WL_AUTHZ_H
#define WL_AUTHZ_H

#include "payload.h"

extern Datum wl_authz_caller_name(void);
extern void wl_authz_check_snapshot(const WlSpec *spec);
extern bool wl_authz_grant_current(Jsonb *snapshot, const char **why);
extern ArrayType *wl_authz_effective_scopes(ArrayType *granted, ArrayType *current);

#endif
