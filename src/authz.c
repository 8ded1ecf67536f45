/*
 * authz.c: what a grant allows.  The authorization snapshot must bind the
 * requester, tenant and application and cover the capabilities asked for;
 * effective scopes are granted intersected with current.  Reads only.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "guc.h"
#include "keys.h"
#include "store.h"

/* wl_authz_caller_name is the role that called the API (outside SECURITY DEFINER). */
Datum
wl_authz_caller_name(void)
{
	return DirectFunctionCall1(namein,
							   CStringGetDatum(GetUserNameFromId(GetOuterUserId(), false)));
}

static bool
covers(ArrayType *granted, ArrayType *needed)
{
	int			n;
	char	  **items;

	if (wl_payload_array_contains(granted, "*"))
		return true;
	items = wl_payload_array_items(needed, &n);
	for (int i = 0; i < n; i++)
	{
		if (!wl_payload_array_contains(granted, items[i]))
			return false;
	}
	return true;
}

/*
 * wl_authz_grant_current says whether the snapshot's grant is active and
 * within its validity window now; why names what failed.
 */
bool
wl_authz_grant_current(Jsonb *snapshot, const char **why)
{
	JsonbContainer *grant = wl_json_get_object(&snapshot->root, "grant");
	char	   *status = wl_json_get_text(grant, "status");
	char	   *issued = wl_json_get_text(grant, "issued_at");
	char	   *expires = wl_json_get_text(grant, "expires_at");
	TimestampTz now = wl_now();
	TimestampTz ts;

	if (status == NULL || strcmp(status, "active") != 0)
		return (*why = "the grant is not active", false);
	if (issued == NULL || !wl_clock_parse(issued, &ts) || ts > now)
		return (*why = "the grant is not yet valid or has no valid issued_at", false);
	if (expires == NULL || !wl_clock_parse(expires, &ts) || ts <= now)
		return (*why = "the grant has expired or has no valid expires_at", false);
	return true;
}

static bool
text_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/*
 * wl_authz_check_snapshot raises WORKLOAD_UNAUTHORIZED unless the
 * authorization snapshot verifies (wl_authz_verify), its grant names the
 * requester as its subject and the spec's tenant and application, and its
 * capabilities cover capability_snapshot: a caller can never delegate a
 * scope it does not hold.  Caller is connected to SPI.
 */
void
wl_authz_check_snapshot(const WlSpec *spec)
{
	JsonbContainer *grant = wl_json_get_object(&spec->authorization_snapshot->root, "grant");
	JsonbContainer *subject = wl_json_get_object(grant, "subject");
	ArrayType  *caps = wl_json_get_strings(grant, "capabilities");
	const char *why;

	if (!wl_authz_verify(spec->authorization_snapshot, &why))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("The authorization snapshot does not hold: %s.", why));
	if (!text_eq(wl_json_get_text(subject, "kind"), spec->requested_kind) ||
		!text_eq(wl_json_get_text(subject, "id"), spec->requested_id))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("The grant's subject is not the requester."));
	if (!text_eq(wl_json_get_text(grant, "tenant_id"), spec->tenant_id) ||
		!text_eq(wl_json_get_text(grant, "application_id"), spec->application_id))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("The grant is for another tenant or application."));
	if (caps == NULL || !covers(caps, spec->capability_snapshot))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("The grant's capabilities do not cover capability_snapshot."));
}

/*
 * wl_authz_effective_scopes: granted intersected with current, where "*" on
 * either side stands for the other side's set.  An empty side gives empty.
 */
ArrayType *
wl_authz_effective_scopes(ArrayType *granted, ArrayType *current)
{
	int			ng;
	int			nc;
	char	  **g = wl_payload_array_items(granted, &ng);
	char	  **c = wl_payload_array_items(current, &nc);
	bool		gstar = wl_payload_array_contains(granted, "*");
	bool		cstar = wl_payload_array_contains(current, "*");
	char	  **from = g;
	int			nfrom = ng;
	Datum	   *out;
	int			n = 0;

	if (gstar && !cstar)
		from = c, nfrom = nc;
	out = palloc(sizeof(Datum) * (nfrom + 1));
	for (int i = 0; i < nfrom; i++)
	{
		bool		dup = false;

		if (!(gstar || cstar) && !wl_payload_array_contains(current, from[i]))
			continue;
		if (gstar && cstar && strcmp(from[i], "*") != 0)
			continue;
		for (int j = 0; j < n && !dup; j++)
			dup = strcmp(TextDatumGetCString(out[j]), from[i]) == 0;
		if (!dup)
			out[n++] = CStringGetTextDatum(from[i]);
	}
	return construct_array(out, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/* workload_effective_scopes(granted, current) exposes the rule; NULL is WORKLOAD_INVALID. */
PG_FUNCTION_INFO_V1(workload_effective_scopes);
Datum
workload_effective_scopes(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		wl_refuse(WL_E_INVALID, errdetail("granted and current must not be NULL."));
	PG_RETURN_ARRAYTYPE_P(wl_authz_effective_scopes(
		wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(0), "granted"),
		wl_payload_text_array(PG_GETARG_ARRAYTYPE_P(1), "current")));
}

/* ---- signed grants ---- */

static const char *const grant_fields[] = {
	"contract_version", "id", "issuer", "subject", "tenant_id", "application_id",
	"capabilities", "resources", "constraints", "issued_at", "expires_at",
	"parent_grant", "revision", "status", NULL
};
static const char *const principal_fields[] = {"kind", "id", NULL};
static const char *const principal_kinds[] = {"agent", "human", "service", "workload", NULL};
static const char *const signed_fields[] = {"grant", "key_id", "signature", NULL};
static const char *const constraint_fields[] = {"subject_attributes", NULL};

static bool
in_set(const char *const *set, const char *s)
{
	for (int i = 0; s && set[i]; i++)
	{
		if (strcmp(set[i], s) == 0)
			return true;
	}
	return false;
}

static bool
nonblank(const char *s)
{
	for (; s && *s; s++)
	{
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return true;
	}
	return false;
}

static bool
principal_ok(JsonbContainer *p)
{
	char	   *unknown;

	return p != NULL && wl_json_keys_within(p, principal_fields, &unknown) &&
		in_set(principal_kinds, wl_json_get_text(p, "kind")) &&
		nonblank(wl_json_get_text(p, "id"));
}

/*
 * wl_authz_grant_shape: whether a grant has exactly the fields of SPEC
 * section 5 with their types; *detail says what is wrong.
 */
bool
wl_authz_grant_shape(JsonbContainer *g, char **detail)
{
	char	   *unknown;
	int64		n;
	TimestampTz ts;
	JsonbValue *v;
	JsonbContainer *c;

	if (g == NULL || !JsonContainerIsObject(g))
		return (*detail = "The grant must be an object.", false);
	if (!wl_json_keys_within(g, grant_fields, &unknown))
		return (*detail = psprintf("The grant has an unknown field \"%s\".", unknown), false);
	if (!nonblank(wl_json_get_text(g, "id")) || !nonblank(wl_json_get_text(g, "tenant_id")) ||
		!nonblank(wl_json_get_text(g, "application_id")))
		return (*detail = "grant.id, tenant_id and application_id must be non-blank strings.", false);
	if (!principal_ok(wl_json_get_object(g, "issuer")) ||
		!principal_ok(wl_json_get_object(g, "subject")))
		return (*detail = "grant.issuer and grant.subject must be {\"kind\": agent|human|service|workload, \"id\": text}.", false);
	if (wl_json_get_strings(g, "capabilities") == NULL)
		return (*detail = "grant.capabilities must be an array of strings.", false);
	if (wl_json_get(g, "resources") && wl_json_get_strings(g, "resources") == NULL)
		return (*detail = "grant.resources must be an array of strings.", false);
	if ((v = wl_json_get(g, "constraints")) != NULL && v->type != jbvNull)
	{
		c = wl_json_get_object(g, "constraints");
		if (c == NULL || !wl_json_keys_within(c, constraint_fields, &unknown) ||
			(wl_json_get(c, "subject_attributes") && !wl_json_get_object(c, "subject_attributes")))
			return (*detail = "grant.constraints must be {\"subject_attributes\": {...}}.", false);
	}
	if (!wl_json_get_text(g, "issued_at") || !wl_clock_parse(wl_json_get_text(g, "issued_at"), &ts) ||
		!wl_json_get_text(g, "expires_at") || !wl_clock_parse(wl_json_get_text(g, "expires_at"), &ts))
		return (*detail = "grant.issued_at and grant.expires_at must be timestamps.", false);
	if ((v = wl_json_get(g, "parent_grant")) != NULL && v->type != jbvNull && v->type != jbvString)
		return (*detail = "grant.parent_grant must be a string or null.", false);
	if (!wl_json_get_int(g, "contract_version", &n) || !wl_json_get_int(g, "revision", &n))
		return (*detail = "grant.contract_version and grant.revision must be integers.", false);
	if (!in_set((const char *const[]) {"active", "suspended", "revoked", NULL},
				wl_json_get_text(g, "status")))
		return (*detail = "grant.status must be \"active\", \"suspended\" or \"revoked\".", false);
	return true;
}

/* sign builds {"grant": grant, "key_id": ..., "signature": HMAC of grant's text}. */
static Jsonb *
sign(Jsonb *grant)
{
	char	   *key_id;
	char	   *mac = wl_keys_mac_current(wl_jsonb_text(grant), &key_id);
	WlJson		b;

	wl_json_begin(&b);
	wl_json_jsonb(&b, "grant", grant);
	wl_json_str(&b, "key_id", key_id);
	wl_json_str(&b, "signature", mac);
	return wl_json_end(&b);
}

/*
 * wl_authz_verify: whether a signed grant holds now: its shape, a signature
 * under a known key that is not retired, not revoked, active and inside its
 * validity window.  why says what failed.  Caller is connected to SPI.
 */
bool
wl_authz_verify(Jsonb *signed_grant, const char **why)
{
	JsonbContainer *root = &signed_grant->root;
	JsonbContainer *grant;
	char	   *unknown;
	char	   *detail;
	char	   *key_id;
	char	   *signature;
	Datum		args[1];

	if (!JsonContainerIsObject(root) || !wl_json_keys_within(root, signed_fields, &unknown))
		return (*why = "it is not a signed grant {grant, key_id, signature}", false);
	grant = wl_json_get_object(root, "grant");
	key_id = wl_json_get_text(root, "key_id");
	signature = wl_json_get_text(root, "signature");
	if (grant == NULL || key_id == NULL || signature == NULL)
		return (*why = "it is not a signed grant {grant, key_id, signature}", false);
	if (!wl_authz_grant_shape(grant, &detail))
		return (*why = "the grant is malformed", false);
	if (!wl_keys_mac_check(key_id, wl_jsonb_text(JsonbValueToJsonb(wl_json_get(root, "grant"))),
						   signature, why))
		return false;
	args[0] = CStringGetTextDatum(wl_json_get_text(grant, "id"));
	wl_store_run(P_REVOKED, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed > 0)
		return (*why = "the grant has been revoked", false);
	return wl_authz_grant_current(signed_grant, why);
}

/*
 * wl_authz_run_authority signs, under the server key, the authority one
 * workload runs on: subject the workload, subject attributes naming the
 * requester and the database role, capabilities the effective scopes,
 * valid for workload.run_authority_ttl.
 */
Jsonb *
wl_authz_run_authority(const WlSpec *spec, const char *workload_id)
{
	JsonbContainer *grant = wl_json_get_object(&spec->authorization_snapshot->root, "grant");
	TimestampTz now = wl_now();
	WlJson		b;
	WlJson		sub;
	WlJson		attrs;
	WlJson		cons;
	WlJson		issuer;

	wl_json_begin(&sub);
	wl_json_str(&sub, "kind", "workload");
	wl_json_str(&sub, "id", workload_id);
	wl_json_begin(&issuer);
	wl_json_str(&issuer, "kind", "service");
	wl_json_str(&issuer, "id", "workload");
	wl_json_begin(&attrs);
	wl_json_str(&attrs, "principal_id", spec->requested_id);
	wl_json_str(&attrs, "principal_kind", spec->requested_kind);
	wl_json_str(&attrs, "database_role", NameStr(*DatumGetName(wl_authz_caller_name())));
	wl_json_begin(&cons);
	wl_json_jsonb(&cons, "subject_attributes", wl_json_end(&attrs));

	wl_json_begin(&b);
	wl_json_int(&b, "contract_version", 1);
	wl_json_str(&b, "id", psprintf("run_%s", workload_id));
	wl_json_jsonb(&b, "issuer", wl_json_end(&issuer));
	wl_json_jsonb(&b, "subject", wl_json_end(&sub));
	wl_json_str(&b, "tenant_id", spec->tenant_id);
	wl_json_str(&b, "application_id", spec->application_id);
	wl_json_strs(&b, "capabilities",
				 wl_authz_effective_scopes(wl_json_get_strings(grant, "capabilities"),
										   spec->capability_snapshot));
	wl_json_strs(&b, "resources", construct_empty_array(TEXTOID));
	wl_json_jsonb(&b, "constraints", wl_json_end(&cons));
	wl_json_ts(&b, "issued_at", now);
	wl_json_ts(&b, "expires_at", now + (int64) wl_run_authority_ttl_s * USECS_PER_SEC);
	wl_json_str(&b, "parent_grant", wl_json_get_text(grant, "id"));
	wl_json_int(&b, "revision", 1);
	wl_json_str(&b, "status", "active");
	return sign(wl_json_end(&b));
}

/*
 * wl_authz_check_run_authority raises AUTHORIZATION_DENIED unless the run
 * authority verifies and is bound to this very workload, tenant and
 * application.
 */
void
wl_authz_check_run_authority(Jsonb *authority, const char *workload_id,
							 const char *tenant_id, const char *application_id)
{
	JsonbContainer *grant = wl_json_get_object(&authority->root, "grant");
	JsonbContainer *subject = wl_json_get_object(grant, "subject");
	const char *why;

	if (!wl_authz_verify(authority, &why))
		wl_refuse(WL_E_AUTHORIZATION_DENIED, errdetail("The run authority does not hold: %s.", why));
	if (!text_eq(wl_json_get_text(subject, "kind"), "workload") ||
		!text_eq(wl_json_get_text(subject, "id"), workload_id) ||
		!text_eq(wl_json_get_text(grant, "tenant_id"), tenant_id) ||
		!text_eq(wl_json_get_text(grant, "application_id"), application_id))
		wl_refuse(WL_E_AUTHORIZATION_DENIED,
				  errdetail("The run authority is not bound to workload \"%s\".", workload_id));
}

/* workload_sign_grant(grant) -> {grant, key_id, signature} under the current key. */
PG_FUNCTION_INFO_V1(workload_sign_grant);
Datum
workload_sign_grant(PG_FUNCTION_ARGS)
{
	Jsonb	   *grant;
	Jsonb	   *signed_grant;
	char	   *detail;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("grant must not be NULL."));
	grant = PG_GETARG_JSONB_P(0);
	if (JB_ROOT_IS_SCALAR(grant) || !wl_authz_grant_shape(&grant->root, &detail))
		wl_refuse(WL_E_INVALID, errdetail_internal("%s", JB_ROOT_IS_SCALAR(grant) ? "The grant must be an object." : detail));
	SPI_connect();
	signed_grant = wl_store_transfer(sign(grant));
	SPI_finish();
	PG_RETURN_JSONB_P(signed_grant);
}

/* workload_verify_grant(signed) -> whether it holds now (see wl_authz_verify). */
PG_FUNCTION_INFO_V1(workload_verify_grant);
Datum
workload_verify_grant(PG_FUNCTION_ARGS)
{
	const char *why;
	bool		ok;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("signed must not be NULL."));
	SPI_connect();
	ok = wl_authz_verify(PG_GETARG_JSONB_P(0), &why);
	SPI_finish();
	PG_RETURN_BOOL(ok);
}

/* workload_revoke_grant(grant_id): the grant no longer verifies, anywhere. */
PG_FUNCTION_INFO_V1(workload_revoke_grant);
Datum
workload_revoke_grant(PG_FUNCTION_ARGS)
{
	Datum		args[3];

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("grant_id must not be NULL."));
	args[0] = CStringGetTextDatum(wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "grant_id"));
	args[1] = TimestampTzGetDatum(wl_now());
	args[2] = wl_authz_caller_name();
	SPI_connect();
	wl_store_run(P_REVOKE_PUT, args, NULL, 0, SPI_OK_INSERT);
	SPI_finish();
	PG_RETURN_VOID();
}

/* ---- tenants ---- */

/* wl_authz_is_admin: the caller is a superuser or has workload_admin's rights. */
bool
wl_authz_is_admin(void)
{
	Oid			role = GetOuterUserId();
	Oid			admin;

	if (superuser_arg(role))
		return true;
	admin = get_role_oid("workload_admin", true);
	return OidIsValid(admin) && has_privs_of_role(role, admin);
}

/*
 * wl_authz_member: whether the caller may act in this tenant and
 * application: an admin anywhere, any other role where it (or a role it
 * belongs to) is a member.  Caller is connected to SPI.
 */
bool
wl_authz_member(const char *tenant_id, const char *application_id)
{
	Datum		args[3];

	if (wl_authz_is_admin())
		return true;
	args[0] = ObjectIdGetDatum(GetOuterUserId());
	args[1] = CStringGetTextDatum(tenant_id);
	args[2] = CStringGetTextDatum(application_id);
	wl_store_run(P_MEMBER, args, NULL, 1, SPI_OK_SELECT);
	return SPI_processed > 0;
}

/* wl_authz_require_member raises WORKLOAD_UNAUTHORIZED unless wl_authz_member. */
void
wl_authz_require_member(const char *tenant_id, const char *application_id)
{
	if (!wl_authz_member(tenant_id, application_id))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("Role \"%s\" may not act in tenant \"%s\", application \"%s\".",
							GetUserNameFromId(GetOuterUserId(), false), tenant_id, application_id));
}

static void
membership_args(FunctionCallInfo fcinfo, Datum *args)
{
	char	   *role;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		wl_refuse(WL_E_INVALID, errdetail("role, tenant_id and application_id must not be NULL."));
	role = NameStr(*PG_GETARG_NAME(0));
	if (!OidIsValid(get_role_oid(role, true)))
		wl_refuse(WL_E_INVALID, errdetail("Role \"%s\" does not exist.", role));
	args[0] = PG_GETARG_DATUM(0);
	args[1] = CStringGetTextDatum(wl_payload_id_arg(PG_GETARG_TEXT_PP(1), "tenant_id"));
	args[2] = CStringGetTextDatum(wl_payload_id_arg(PG_GETARG_TEXT_PP(2), "application_id"));
}

/* workload_add_tenant_member(role, tenant_id, application_id): idempotent. */
PG_FUNCTION_INFO_V1(workload_add_tenant_member);
Datum
workload_add_tenant_member(PG_FUNCTION_ARGS)
{
	Datum		args[3];

	membership_args(fcinfo, args);
	SPI_connect();
	wl_store_run(P_MEMBER_PUT, args, NULL, 0, SPI_OK_INSERT);
	SPI_finish();
	PG_RETURN_VOID();
}

/* workload_remove_tenant_member(role, tenant_id, application_id): idempotent. */
PG_FUNCTION_INFO_V1(workload_remove_tenant_member);
Datum
workload_remove_tenant_member(PG_FUNCTION_ARGS)
{
	Datum		args[3];

	membership_args(fcinfo, args);
	SPI_connect();
	wl_store_run(P_MEMBER_DEL, args, NULL, 0, SPI_OK_DELETE);
	SPI_finish();
	PG_RETURN_VOID();
}
