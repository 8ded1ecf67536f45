/*
 * api_authz.c: authority's SQL entry points (SPEC section 5): signing,
 * verifying and revoking grants, rotating and retiring keys, tenant
 * members, effective scopes.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api.h"
#include "args.h"
#include "authz.h"
#include "clock.h"
#include "grants.h"
#include "keys.h"
#include "store_ops.h"

/* workload_effective_scopes(granted, current) exposes the rule (grants.c). */
PG_FUNCTION_INFO_V1(workload_effective_scopes);
Datum
workload_effective_scopes(PG_FUNCTION_ARGS)
{
	PG_RETURN_ARRAYTYPE_P(wl_grant_effective_scopes(wl_arg_text_array(fcinfo, 0, "granted"),
													wl_arg_text_array(fcinfo, 1, "current")));
}

/* workload_sign_grant(grant) -> {grant, key_id, signature} under the current key. */
PG_FUNCTION_INFO_V1(workload_sign_grant);
Datum
workload_sign_grant(PG_FUNCTION_ARGS)
{
	WlApi		api;
	Jsonb	   *grant;
	Jsonb	   *signed_grant;
	char	   *detail;

	wl_args_require(fcinfo, "grant");
	grant = PG_GETARG_JSONB_P(0);
	if (JB_ROOT_IS_SCALAR(grant) || !wl_grant_shape(&grant->root, &detail))
		wl_refuse(WL_E_INVALID, errdetail_internal("%s", JB_ROOT_IS_SCALAR(grant) ?
												   "The grant must be an object." : detail));
	wl_api_begin(fcinfo, &api);
	signed_grant = wl_api_transfer(wl_grant_sign_recorded(grant));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(signed_grant);
}

/* workload_verify_grant(signed) -> whether it holds now (grants.c). */
PG_FUNCTION_INFO_V1(workload_verify_grant);
Datum
workload_verify_grant(PG_FUNCTION_ARGS)
{
	WlApi		api;
	const char *why;
	bool		ok;

	wl_args_require(fcinfo, "signed");
	wl_api_begin(fcinfo, &api);
	ok = wl_grant_verify(PG_GETARG_JSONB_P(0), &why);
	wl_api_end(&api);
	PG_RETURN_BOOL(ok);
}

/* workload_revoke_grant(grant_id): the grant no longer verifies, anywhere. */
PG_FUNCTION_INFO_V1(workload_revoke_grant);
Datum
workload_revoke_grant(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *grant_id = wl_arg_id(fcinfo, 0, "grant_id");

	wl_api_begin(fcinfo, &api);
	wl_store_revoke(grant_id, wl_now(), wl_authz_caller()->role);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/* workload_rotate_signing_key() -> the new key's id, which signs from now on. */
PG_FUNCTION_INFO_V1(workload_rotate_signing_key);
Datum
workload_rotate_signing_key(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *key_id;

	wl_api_begin(fcinfo, &api);
	key_id = wl_keys_rotate();
	wl_api_end(&api);
	PG_RETURN_TEXT_P(cstring_to_text(key_id));
}

/* workload_retire_signing_key(key_id): grants and checkpoints signed with it stop verifying. */
PG_FUNCTION_INFO_V1(workload_retire_signing_key);
Datum
workload_retire_signing_key(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *key_id = wl_arg_id(fcinfo, 0, "key_id");

	wl_api_begin(fcinfo, &api);
	wl_keys_retire(key_id);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/*
 * membership_args reads (role, tenant_id, application_id); the role is named
 * exactly as given (no case folding): *oid is its identity, which the
 * membership records, or InvalidOid when there is no such role.
 */
static char *
membership_args(FunctionCallInfo fcinfo, Oid *oid, char **tenant, char **app)
{
	char	   *role;

	wl_args_require(fcinfo, "role", "tenant_id", "application_id");
	role = NameStr(*PG_GETARG_NAME(0));
	*oid = get_role_oid(role, true);
	*tenant = wl_arg_tenant(fcinfo, 1, "tenant_id");
	*app = wl_arg_tenant(fcinfo, 2, "application_id");
	return role;
}

static void
no_such_role(const char *role)
{
	wl_refuse(WL_E_INVALID, errdetail("Role \"%s\" does not exist.", role));
}

/* workload_add_tenant_member(role, tenant_id, application_id): idempotent. */
PG_FUNCTION_INFO_V1(workload_add_tenant_member);
Datum
workload_add_tenant_member(PG_FUNCTION_ARGS)
{
	WlApi		api;
	Oid			oid;
	char	   *tenant;
	char	   *app;
	char	   *role = membership_args(fcinfo, &oid, &tenant, &app);

	if (!OidIsValid(oid))
		no_such_role(role);
	wl_api_begin(fcinfo, &api);
	wl_store_member_put(role, oid, tenant, app);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/*
 * workload_remove_tenant_member(role, tenant_id, application_id): idempotent.
 * It removes the role's membership, and any recorded under that name for a
 * role dropped since (which counts for nobody).
 */
PG_FUNCTION_INFO_V1(workload_remove_tenant_member);
Datum
workload_remove_tenant_member(PG_FUNCTION_ARGS)
{
	WlApi		api;
	Oid			oid;
	char	   *tenant;
	char	   *app;
	char	   *role = membership_args(fcinfo, &oid, &tenant, &app);
	bool		removed;

	wl_api_begin(fcinfo, &api);
	removed = wl_store_member_del_dropped(role, tenant, app);
	if (OidIsValid(oid))
		removed = wl_store_member_del(oid, tenant, app) || removed;
	/* the removed role may still be listening: the channel gets a new name */
	if (removed)
		wl_keys_rotate_channel(tenant, app);
	if (!OidIsValid(oid) && !removed)
		no_such_role(role);
	wl_api_end(&api);
	PG_RETURN_VOID();
}

/*
 * workload_channel(tenant_id, application_id): the channel to LISTEN on, for
 * a role that may act in that tenant and application (WORKLOAD_UNAUTHORIZED
 * otherwise): LISTEN needs no privilege, so the name is the secret.
 */
PG_FUNCTION_INFO_V1(workload_channel);
Datum
workload_channel(PG_FUNCTION_ARGS)
{
	WlApi		api;
	char	   *tenant = wl_arg_tenant(fcinfo, 0, "tenant_id");
	char	   *app = wl_arg_tenant(fcinfo, 1, "application_id");
	char	   *channel;

	wl_api_begin(fcinfo, &api);
	wl_authz_require_member(tenant, app);
	channel = wl_keys_channel(tenant, app);
	wl_api_end(&api);
	PG_RETURN_TEXT_P(cstring_to_text(channel));
}

/* workload.make_channel_secret(): the install script makes the channel secret (once). */
PG_FUNCTION_INFO_V1(workload_make_channel_secret);
Datum
workload_make_channel_secret(PG_FUNCTION_ARGS)
{
	WlApi		api;

	wl_api_begin(fcinfo, &api);
	wl_keys_make_channel_secret();
	wl_api_end(&api);
	PG_RETURN_VOID();
}
