/*
 * authz.c: what a grant allows.  The authorization snapshot must bind the
 * requester, tenant and application and cover the capabilities asked for;
 * effective scopes are granted intersected with current.  Reads only.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "authz.h"
#include "clock.h"
#include "errors.h"

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
		return (*why = "The grant is not active", false);
	if (issued == NULL || !wl_clock_parse(issued, &ts) || ts > now)
		return (*why = "The grant is not yet valid or has no valid issued_at", false);
	if (expires == NULL || !wl_clock_parse(expires, &ts) || ts <= now)
		return (*why = "The grant has expired or has no valid expires_at", false);
	return true;
}

static bool
text_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/*
 * wl_authz_check_snapshot raises WORKLOAD_UNAUTHORIZED unless the
 * authorization snapshot's grant names the requester as its subject, the
 * spec's tenant and application, is current, and covers capability_snapshot.
 */
void
wl_authz_check_snapshot(const WlSpec *spec)
{
	JsonbContainer *grant = wl_json_get_object(&spec->authorization_snapshot->root, "grant");
	JsonbContainer *subject = wl_json_get_object(grant, "subject");
	ArrayType  *caps = wl_json_get_strings(grant, "capabilities");
	const char *why;

	if (!text_eq(wl_json_get_text(subject, "kind"), spec->requested_kind) ||
		!text_eq(wl_json_get_text(subject, "id"), spec->requested_id))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("The grant's subject is not the requester."));
	if (!text_eq(wl_json_get_text(grant, "tenant_id"), spec->tenant_id) ||
		!text_eq(wl_json_get_text(grant, "application_id"), spec->application_id))
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("The grant is for another tenant or application."));
	if (!wl_authz_grant_current(spec->authorization_snapshot, &why))
		wl_refuse(WL_E_UNAUTHORIZED, errdetail("%s.", why));
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
