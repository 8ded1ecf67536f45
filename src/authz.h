/* authz.h: who is calling and what they may touch (authz.c; layer 3). */
#ifndef WL_AUTHZ_H
#define WL_AUTHZ_H

#include "store_ops.h"

extern void wl_authz_set_caller(Oid role);
extern const WlCaller *wl_authz_caller(void);
extern void wl_authz_route_as(const char *role);
extern Oid	wl_authz_routed_caller(void);
extern Oid	wl_authz_caller_oid(void);
extern bool wl_authz_caller_is(const char *role);
extern bool wl_authz_member(const char *tenant_id, const char *application_id);
extern Oid	wl_authz_member_role(Oid role_oid, const char *role);
extern void wl_authz_require_member(const char *tenant_id, const char *application_id);
extern bool wl_authz_lock(const char *workload_id, WlRow *row);
extern void wl_authz_lock_or_refuse(const char *workload_id, WlRow *row);
extern void wl_authz_lock_many(char **ids, int n, WlRow *rows, bool *found);

#endif
