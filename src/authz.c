/*
 * authz.c: the caller and tenant membership (SPEC section 5, "Tenant
 * isolation").  A role that is neither superuser nor workload_admin acts
 * only in the tenants and applications it is a member of: naming another
 * tenant is WORKLOAD_UNAUTHORIZED, and another tenant's workload is not
 * found.  A workload is locked through the statement that checks
 * membership, so a row the caller may not touch is never locked.  Layer 3.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "authz.h"
#include "errors.h"

/* The caller of the current API call (api.c sets it as each call begins). */
static WlCaller caller;
static Oid	caller_id = InvalidOid;

/*
 * wl_authz_set_caller makes role the caller of the API call that begins: it
 * acts everywhere when it is a superuser or has workload_admin's rights.
 */
void
wl_authz_set_caller(Oid role)
{
	Oid			admin = get_role_oid("workload_admin", true);

	if (caller.role != NULL)
		pfree((char *) caller.role);
	caller_id = role;
	caller.role = MemoryContextStrdup(TopMemoryContext, GetUserNameFromId(role, false));
	caller.superuser = superuser_arg(role);
	caller.admin = caller.superuser || (OidIsValid(admin) && has_privs_of_role(role, admin));
}

/*
 * The caller another node named for the call this node runs for it (a
 * routed call, api_route.c), while it runs; NULL otherwise.
 */
static char *routed_caller = NULL;

/* wl_authz_route_as: the caller of the routed call that begins (NULL: it has ended). */
void
wl_authz_route_as(const char *role)
{
	if (routed_caller)
		pfree(routed_caller);
	routed_caller = role ? MemoryContextStrdup(TopMemoryContext, role) : NULL;
}

/* wl_authz_routed_caller: that caller's role here, or InvalidOid outside a routed call. */
Oid
wl_authz_routed_caller(void)
{
	return routed_caller ? get_role_oid(routed_caller, false) : InvalidOid;
}

/* wl_authz_caller: the caller of the current API call. */
const WlCaller *
wl_authz_caller(void)
{
	if (caller.role == NULL)
		elog(ERROR, "workload API call without a caller");
	return &caller;
}

/* wl_authz_caller_oid: the role of the current API call's caller (to put it back after acting as another). */
Oid
wl_authz_caller_oid(void)
{
	return caller_id;
}

/* wl_authz_caller_is: whether the caller is role (by name) or a member of it. */
bool
wl_authz_caller_is(const char *role)
{
	Oid			r = get_role_oid(role, true);

	return OidIsValid(r) && is_member_of_role(caller_id, r);
}

/* wl_authz_member: whether the caller may act in this tenant and application. */
bool
wl_authz_member(const char *tenant_id, const char *application_id)
{
	const WlCaller *who = wl_authz_caller();

	return who->admin || wl_store_member(who->role, tenant_id, application_id);
}

/*
 * wl_authz_member_role: the role a membership row names, by identity: its
 * OID, as recorded when the membership was added (a role dropped since, or
 * made again under the same name, is another role).  On Citus each node
 * gives a role its own OID, and the row (a reference table's) holds the
 * coordinator's, so there the role's exact name stands for it, as it does
 * for Citus itself (a role is made on every node by name); never a parsed
 * or case-folded name.  InvalidOid: no such role (it counts for nobody).
 */
Oid
wl_authz_member_role(Oid role_oid, const char *role)
{
	if (wl_store_citus())
		return get_role_oid(role, true);
	return SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role_oid)) ? role_oid : InvalidOid;
}

/* wl_authz_require_member raises WORKLOAD_UNAUTHORIZED unless wl_authz_member. */
void
wl_authz_require_member(const char *tenant_id, const char *application_id)
{
	if (!wl_authz_member(tenant_id, application_id))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("Role \"%s\" may not act in tenant \"%s\", application \"%s\".",
							wl_authz_caller()->role, tenant_id, application_id));
}

/*
 * wl_authz_lock locks a workload the caller may touch and reads it; false
 * (and no lock taken) when there is none, or it belongs to a tenant and
 * application the caller may not act in: its existence is not revealed.
 */
bool
wl_authz_lock(const char *workload_id, WlRow *row)
{
	return wl_store_lock(workload_id, wl_authz_caller(), row);
}

/* wl_authz_lock_or_refuse is wl_authz_lock raising WORKLOAD_NOT_FOUND. */
void
wl_authz_lock_or_refuse(const char *workload_id, WlRow *row)
{
	if (!wl_authz_lock(workload_id, row))
		wl_refuse(WL_E_NOT_FOUND, errdetail("No workload \"%s\".", workload_id));
}

/* wl_authz_lock_many is wl_authz_lock for a batch (ids sorted, distinct). */
void
wl_authz_lock_many(char **ids, int n, WlRow *rows, bool *found)
{
	wl_store_lock_many(ids, n, wl_authz_caller(), rows, found);
}
