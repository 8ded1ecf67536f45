/*
 * grants.c: what a signed grant allows (SPEC section 5).  Its shape, its
 * signature under a server key, its revocation and validity; whether an
 * authorization snapshot binds the requester, tenant and application and
 * covers the capabilities asked for; the run authority signed for each
 * workload; effective scopes (granted intersected with current).  Layer 3.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "args.h"
#include "authz.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "grants.h"
#include "guc.h"
#include "jsonb_util.h"
#include "keys.h"
#include "store_ops.h"

static bool verify(Jsonb *signed_grant, bool stored, const char **why, ArrayType **chain,
				   bool revocation);

static bool
covers(ArrayType *granted, ArrayType *needed)
{
	int			n;
	char	  **items;

	if (wl_array_contains(granted, "*"))
		return true;
	items = wl_array_items(needed, &n);
	for (int i = 0; i < n; i++)
	{
		if (!wl_array_contains(granted, items[i]))
			return false;
	}
	return true;
}

/*
 * wl_grant_current says whether the snapshot's grant is active and
 * within its validity window now; why names what failed.
 */
bool
wl_grant_current(Jsonb *snapshot, const char **why)
{
	JsonbContainer *grant = wl_json_get_object(&snapshot->root, "grant");
	char	   *status = wl_json_get_text(grant, "status");
	char	   *issued = wl_json_get_text(grant, "issued_at");
	char	   *expires = wl_json_get_text(grant, "expires_at");
	TimestampTz now = wl_now();
	TimestampTz ts;

	if (status == NULL || strcmp(status, "active") != 0)
		return (*why = "the grant is not active", false);
	if (issued == NULL || !wl_clock_parse_rfc3339(issued, &ts) || ts > now)
		return (*why = "the grant is not yet valid or has no valid issued_at", false);
	if (expires == NULL || !wl_clock_parse_rfc3339(expires, &ts) || ts <= now)
		return (*why = "the grant has expired or has no valid expires_at", false);
	return true;
}

static bool
text_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/*
 * bound_ok: whether the caller may present the grant: when it names a
 * database role in its subject attributes, only that role or a member of it
 * may (detail says why not).
 */
static bool
bound_ok(JsonbContainer *grant, char **detail)
{
	JsonbContainer *attrs = wl_json_get_object(wl_json_get_object(grant, "constraints"),
											   "subject_attributes");
	char	   *role = wl_json_get_text(attrs, "database_role");

	if (role != NULL && !wl_authz_caller_is(role))
	{
		*detail = psprintf("The grant may be presented only by database role \"%s\" or its members.",
						   role);
		return false;
	}
	return true;
}

/*
 * spec_snapshot_holds: whether the authorization snapshot holds (verify; a
 * snapshot the system presents, a compensation's run authority, is in
 * stored form) and the caller may present it (bound_ok); *chain its chain
 * of grant ids, *detail why not.  A compensation's chain also holds the
 * chain of the workload it undoes (spec->inherited_grants), whose own run
 * authority's lineage is not recorded: revoking any grant the original
 * derived from reaches its compensations at any depth.
 */
static bool
spec_snapshot_holds(const WlSpec *spec, ArrayType **chain, char **detail)
{
	JsonbContainer *grant = wl_json_get_object(&spec->authorization_snapshot->root, "grant");
	const char *why;
	bool		revoked;

	*chain = NULL;
	if (!verify(spec->authorization_snapshot, spec->stored_authority, &why, chain, true))
	{
		*detail = psprintf("The authorization snapshot does not hold: %s.", why);
		return false;
	}
	if (spec->inherited_grants != NULL)
	{
		*chain = wl_store_grants_chain(DatumGetArrayTypeP(DirectFunctionCall2(array_cat,
																			  PointerGetDatum(*chain),
																			  PointerGetDatum(spec->inherited_grants))),
									   &revoked);
		if (revoked)
		{
			*detail = psprintf("The authorization snapshot does not hold: a grant the workload it compensates derives from has been revoked.");
			return false;
		}
	}
	return spec->stored_authority || bound_ok(grant, detail);
}

/*
 * snapshot_fits raises WORKLOAD_UNAUTHORIZED unless the snapshot's grant
 * names the requester as its subject and the spec's tenant and application,
 * and its capabilities cover capability_snapshot: a caller can never
 * delegate a scope it does not hold.
 */
static void
snapshot_fits(const WlSpec *spec)
{
	JsonbContainer *grant = wl_json_get_object(&spec->authorization_snapshot->root, "grant");
	JsonbContainer *subject = wl_json_get_object(grant, "subject");
	ArrayType  *caps = wl_json_get_strings(grant, "capabilities");

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
 * wl_grant_check_snapshot raises WORKLOAD_UNAUTHORIZED unless the
 * authorization snapshot holds (spec_snapshot_holds) and fits the spec
 * (snapshot_fits).  Returns the grant's chain of grant ids.
 */
ArrayType *
wl_grant_check_snapshot(const WlSpec *spec)
{
	ArrayType  *chain;
	char	   *detail;

	if (!spec_snapshot_holds(spec, &chain, &detail))
		wl_refuse(WL_E_UNAUTHORIZED, errdetail_internal("%s", detail));
	snapshot_fits(spec);
	return chain;
}

/* One distinct snapshot a batch presented, and whether it held. */
struct WlGrantMemoEntry
{
	uint32		hash;
	Jsonb	   *snapshot;
	bool		stored;
	bool		holds;
	ArrayType  *chain;
	char	   *detail;
};

/*
 * wl_grant_check_snapshot_memo is wl_grant_check_snapshot for a batch of
 * specs: whether a snapshot holds (its signature, revocation, validity and
 * the caller's right to present it) is decided once per distinct snapshot
 * and kept in memo (in memo->cxt); whether it fits each spec is checked
 * for each.
 */
ArrayType *
wl_grant_check_snapshot_memo(const WlSpec *spec, WlGrantMemo *memo)
{
	Jsonb	   *snap = spec->authorization_snapshot;
	uint32		h = hash_bytes((const unsigned char *) snap, VARSIZE(snap));
	struct WlGrantMemoEntry *e = NULL;

	for (int i = 0; i < memo->n && e == NULL; i++)
	{
		struct WlGrantMemoEntry *x = &memo->e[i];

		if (x->hash == h && x->stored == spec->stored_authority &&
			VARSIZE(x->snapshot) == VARSIZE(snap) && memcmp(x->snapshot, snap, VARSIZE(snap)) == 0)
			e = x;
	}
	if (e == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(memo->cxt);

		if (memo->n == memo->size)
		{
			memo->size = memo->size == 0 ? 8 : memo->size * 2;
			memo->e = memo->e ? repalloc(memo->e, sizeof(*memo->e) * memo->size) :
				palloc(sizeof(*memo->e) * memo->size);
		}
		e = &memo->e[memo->n];
		e->hash = h;
		e->stored = spec->stored_authority;
		e->snapshot = palloc(VARSIZE(snap));
		memcpy(e->snapshot, snap, VARSIZE(snap));
		e->detail = NULL;
		e->holds = spec_snapshot_holds(spec, &e->chain, &e->detail);
		memo->n++;
		MemoryContextSwitchTo(old);
	}
	if (!e->holds)
		wl_refuse(WL_E_UNAUTHORIZED, errdetail_internal("%s", e->detail));
	snapshot_fits(spec);
	return e->chain;
}

/*
 * wl_grant_effective_scopes: granted intersected with current, where "*" on
 * either side stands for the other side's set.  An empty side gives empty.
 */
ArrayType *
wl_grant_effective_scopes(ArrayType *granted, ArrayType *current)
{
	int			ng;
	int			nc;
	char	  **g = wl_array_items(granted, &ng);
	char	  **c = wl_array_items(current, &nc);
	bool		gstar = wl_array_contains(granted, "*");
	bool		cstar = wl_array_contains(current, "*");
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

		if (!(gstar || cstar) && !wl_array_contains(current, from[i]))
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

/* ---- signed grants ---- */

static const char *const grant_fields[] = {
	"contract_version", "id", "issuer", "subject", "tenant_id", "application_id",
	"capabilities", "resources", "constraints", "issued_at", "expires_at",
	"parent_grant", "revision", "status", NULL
};
static const char *const principal_fields[] = {"kind", "id", NULL};
static const char *const signed_fields[] = {"grant", "key_id", "signature", NULL};
static const char *const stored_fields[] = {"grant", "key_id", "signature_sha256", NULL};
static const char *const constraint_fields[] = {"subject_attributes", NULL};

static bool
nonblank(const char *s)
{
	return s != NULL && !wl_text_blank(s, strlen(s));
}

static bool
principal_ok(JsonbContainer *p)
{
	char	   *unknown;

	return p != NULL && wl_json_keys_within(p, principal_fields, &unknown) &&
		wl_in_list(wl_subject_kinds, wl_json_get_text(p, "kind")) &&
		nonblank(wl_json_get_text(p, "id"));
}

/*
 * wl_grant_shape: whether a grant has exactly the fields of SPEC
 * section 5 with their types; *detail says what is wrong.
 */
bool
wl_grant_shape(JsonbContainer *g, char **detail)
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
		return (*detail = "Fields grant.id, grant.tenant_id and grant.application_id must be non-blank strings.", false);
	if (strchr(wl_json_get_text(g, "tenant_id"), ':') || strchr(wl_json_get_text(g, "application_id"), ':'))
		return (*detail = "Fields grant.tenant_id and grant.application_id must not contain \":\".", false);
	if (!principal_ok(wl_json_get_object(g, "issuer")) ||
		!principal_ok(wl_json_get_object(g, "subject")))
		return (*detail = "Fields grant.issuer and grant.subject must be {\"kind\": agent|human|service|workload, \"id\": text}.", false);
	if (wl_json_get_strings(g, "capabilities") == NULL)
		return (*detail = "Field grant.capabilities must be an array of strings.", false);
	if (wl_json_get(g, "resources") && wl_json_get_strings(g, "resources") == NULL)
		return (*detail = "Field grant.resources must be an array of strings.", false);
	if ((v = wl_json_get(g, "constraints")) != NULL && v->type != jbvNull)
	{
		c = wl_json_get_object(g, "constraints");
		if (c == NULL || !wl_json_keys_within(c, constraint_fields, &unknown) ||
			(wl_json_get(c, "subject_attributes") && !wl_json_get_object(c, "subject_attributes")))
			return (*detail = "Field grant.constraints must be {\"subject_attributes\": {...}}.", false);
	}
	if (!wl_json_get_text(g, "issued_at") ||
		!wl_clock_parse_rfc3339(wl_json_get_text(g, "issued_at"), &ts) ||
		!wl_json_get_text(g, "expires_at") ||
		!wl_clock_parse_rfc3339(wl_json_get_text(g, "expires_at"), &ts))
		return (*detail = "Fields grant.issued_at and grant.expires_at must be absolute RFC 3339 timestamps with an offset, such as \"2027-01-01T00:00:00Z\".", false);
	if ((v = wl_json_get(g, "parent_grant")) != NULL && v->type != jbvNull && v->type != jbvString)
		return (*detail = "Field grant.parent_grant must be a string or null.", false);
	if (!wl_json_get_int(g, "contract_version", &n) || !wl_json_get_int(g, "revision", &n))
		return (*detail = "Fields grant.contract_version and grant.revision must be integers.", false);
	if (!wl_in_list((const char *const[]) {"active", "suspended", "revoked", NULL},
				wl_json_get_text(g, "status")))
		return (*detail = "Field grant.status must be \"active\", \"suspended\" or \"revoked\".", false);
	return true;
}

/* wl_grant_sign builds {"grant": grant, "key_id": ..., "signature": HMAC of grant's text}. */
static Jsonb *
signed_form(Jsonb *grant, const char *key_id, const char *mac)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_jsonb(&b, "grant", grant);
	wl_json_str(&b, "key_id", key_id);
	wl_json_str(&b, "signature", mac);
	return wl_json_end(&b);
}

/* stored_form: {grant, key_id, signature_sha256}, what wl_grant_stored_form keeps */
static Jsonb *
stored_form(Jsonb *grant, const char *key_id, const char *signature)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_jsonb(&b, "grant", grant);
	wl_json_str(&b, "key_id", key_id);
	wl_json_str(&b, "signature_sha256", wl_sha256_hex(signature, strlen(signature)));
	return wl_json_end(&b);
}

Jsonb *
wl_grant_sign(Jsonb *grant)
{
	char	   *key_id;
	char	   *mac = wl_keys_mac_current(wl_jsonb_text(grant), &key_id);

	return signed_form(grant, key_id, mac);
}

/*
 * verify: whether a grant holds now: its shape, its signature under a known
 * key that is not retired (a bearer grant carries the signature; the stored
 * form, only the signature's SHA-256), neither it nor any grant it derives
 * from revoked, active and inside its validity window.  why says what
 * failed; *chain (when asked) is its chain of grant ids.
 */
static bool
verify(Jsonb *signed_grant, bool stored, const char **why, ArrayType **chain, bool revocation)
{
	JsonbContainer *root = &signed_grant->root;
	JsonbContainer *grant;
	const char *sig_field = stored ? "signature_sha256" : "signature";
	char	   *unknown;
	char	   *detail;
	char	   *key_id;
	char	   *signature;
	char	   *text;
	bool		revoked;
	ArrayType  *ids;

	if (!JsonContainerIsObject(root) ||
		!wl_json_keys_within(root, stored ? stored_fields : signed_fields, &unknown))
		return (*why = "it is not a signed grant {grant, key_id, signature}", false);
	grant = wl_json_get_object(root, "grant");
	key_id = wl_json_get_text(root, "key_id");
	signature = wl_json_get_text(root, sig_field);
	if (grant == NULL || key_id == NULL || signature == NULL)
		return (*why = "it is not a signed grant {grant, key_id, signature}", false);
	/*
	 * a stored grant had its shape checked when it was stored, and its MAC,
	 * checked next, says it is still that grant
	 */
	if (!stored && !wl_grant_shape(grant, &detail))
		return (*why = "the grant is malformed", false);
	text = wl_jsonb_text(JsonbValueToJsonb(wl_json_get(root, "grant")));
	if (!(stored ? wl_keys_mac_digest_check(key_id, text, signature, why) :
		  wl_keys_mac_check(key_id, text, signature, why)))
		return false;
	if (revocation)
	{
		ids = wl_store_grant_chain(wl_json_get_text(grant, "id"),
								   wl_json_get_text(grant, "parent_grant"), &revoked);
		if (chain)
			*chain = ids;
		if (revoked)
			return (*why = "the grant, or a grant it derives from, has been revoked", false);
	}
	return wl_grant_current(signed_grant, why);
}

/* wl_grant_verify: whether a signed grant, as a caller presents it, holds now (see verify). */
bool
wl_grant_verify(Jsonb *signed_grant, const char **why)
{
	return verify(signed_grant, false, why, NULL, true);
}

/* wl_grant_verify_stored: whether a grant as stored (wl_grant_stored_form) holds now. */
bool
wl_grant_verify_stored(Jsonb *stored_grant, const char **why)
{
	return verify(stored_grant, true, why, NULL, true);
}

/*
 * wl_grant_verify_stored_signature: wl_grant_verify_stored but for
 * revocation, which the caller has checked for a whole batch at once
 * (wl_store_grants_chain over every grant the batch names).
 */
bool
wl_grant_verify_stored_signature(Jsonb *stored_grant, const char **why)
{
	return verify(stored_grant, true, why, NULL, false);
}

/* revoked: whether the grant in a snapshot (either form), or one it derives from, is revoked. */
static bool
revoked(Jsonb *snapshot)
{
	JsonbContainer *grant = wl_json_get_object(&snapshot->root, "grant");
	bool		r;

	(void) wl_store_grant_chain(wl_json_get_text(grant, "id"),
								wl_json_get_text(grant, "parent_grant"), &r);
	return r;
}

/*
 * wl_grant_authority_revoked: whether a workload's authorization has been
 * revoked: its run authority, its snapshot grant, a grant they derive from,
 * or any grant of the chain stored with it at create, which holds the chain
 * of the workload a compensation undoes (SPEC section 5.1, "Revocation
 * reaches every descendant").
 */
bool
wl_grant_authority_revoked(const WlSpecRow *spec)
{
	bool		r = false;

	if (revoked(spec->run_authority) || revoked(spec->authorization_snapshot))
		return true;
	if (spec->grant_ids != NULL)
		(void) wl_store_grants_chain(spec->grant_ids, &r);
	return r;
}

/*
 * wl_grant_stored_form: a signed grant as it is kept: its grant and key_id,
 * and the SHA-256 of its signature instead of the signature, so that what is
 * stored verifies it but cannot be presented as it (SPEC section 5: a signed
 * grant is a bearer credential).
 */
Jsonb *
wl_grant_stored_form(Jsonb *signed_grant)
{
	char	   *signature = wl_json_get_text(&signed_grant->root, "signature");

	if (signature == NULL)
		return signed_grant;
	return stored_form(JsonbValueToJsonb(wl_json_get(&signed_grant->root, "grant")),
					   wl_json_get_text(&signed_grant->root, "key_id"), signature);
}

/*
 * wl_grant_sign_recorded signs a grant for a caller (workload_sign_grant)
 * and records its lineage (its parent, tenant and application), so that
 * revoking any grant it derives from reaches it.
 */
Jsonb *
wl_grant_sign_recorded(Jsonb *grant)
{
	JsonbContainer *g = &grant->root;

	wl_store_lineage_put(wl_json_get_text(g, "id"), wl_json_get_text(g, "parent_grant"),
						 wl_json_get_text(g, "tenant_id"), wl_json_get_text(g, "application_id"),
						 wl_now());
	return wl_grant_sign(grant);
}

/* run_authority_grant: the (unsigned) grant of wl_grant_run_authority */
static Jsonb *
run_authority_grant(const WlSpec *spec, const char *workload_id)
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
	wl_json_str(&attrs, "database_role", wl_authz_caller()->role);
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
				 wl_grant_effective_scopes(wl_json_get_strings(grant, "capabilities"),
										   spec->capability_snapshot));
	wl_json_strs(&b, "resources", construct_empty_array(TEXTOID));
	wl_json_jsonb(&b, "constraints", wl_json_end(&cons));
	wl_json_ts(&b, "issued_at", now);
	wl_json_ts(&b, "expires_at", now + (int64) wl_run_authority_ttl_s * USECS_PER_SEC);
	wl_json_str(&b, "parent_grant", wl_json_get_text(grant, "id"));
	wl_json_int(&b, "revision", 1);
	wl_json_str(&b, "status", "active");
	return wl_json_end(&b);
}

/*
 * wl_grant_run_authority signs, under the server key, the authority one
 * workload runs on: subject the workload, subject attributes naming the
 * requester and the database role, capabilities the effective scopes,
 * valid for workload.run_authority_ttl.
 */
Jsonb *
wl_grant_run_authority(const WlSpec *spec, const char *workload_id)
{
	return wl_grant_sign(run_authority_grant(spec, workload_id));
}

/*
 * wl_grant_run_authorities is wl_grant_run_authority for n workloads, all
 * signed under one read of the current key, and returned in the form they
 * are stored in (wl_grant_stored_form: the signature's SHA-256, never the
 * signature).
 */
Jsonb **
wl_grant_run_authorities(const WlSpec **specs, const char **workload_ids, int n)
{
	Jsonb	  **grants = palloc(sizeof(Jsonb *) * (n + 1));
	char	  **texts = palloc(sizeof(char *) * (n + 1));
	char	   *key_id;
	char	  **macs;

	for (int i = 0; i < n; i++)
	{
		grants[i] = run_authority_grant(specs[i], workload_ids[i]);
		texts[i] = wl_jsonb_text(grants[i]);
	}
	macs = wl_keys_mac_current_many(texts, n, &key_id);
	for (int i = 0; i < n; i++)
		grants[i] = stored_form(grants[i], key_id, macs[i]);
	return grants;
}

/* wl_grant_expires_at: a grant's (either form) expires_at; 0 when it has none that parses */
TimestampTz
wl_grant_expires_at(Jsonb *signed_grant)
{
	char	   *text;
	TimestampTz t;

	if (signed_grant == NULL || !JB_ROOT_IS_OBJECT(signed_grant))
		return 0;
	text = wl_json_get_text(wl_json_get_object(&signed_grant->root, "grant"), "expires_at");
	return text != NULL && wl_clock_parse_rfc3339(text, &t) ? t : 0;
}

/*
 * wl_grant_lapses_at: when a workload's authority lapses: the sooner of
 * its authorization snapshot's and its run authority's expires_at (0: it
 * does not).
 */
TimestampTz
wl_grant_lapses_at(Jsonb *snapshot, Jsonb *run_authority)
{
	TimestampTz a = wl_grant_expires_at(snapshot);
	TimestampTz b = wl_grant_expires_at(run_authority);

	if (a == 0 || (b != 0 && b < a))
		return b;
	return a;
}

/*
 * wl_grant_run_authority_holds: whether the run authority verifies and is
 * bound to this very workload, tenant and application (*detail says why
 * not, as a sentence); revocation too unless the caller checked it.
 */
bool
wl_grant_run_authority_holds(Jsonb *authority, const char *workload_id,
							 const char *tenant_id, const char *application_id, char **detail,
							 bool revocation)
{
	JsonbContainer *grant = wl_json_get_object(&authority->root, "grant");
	JsonbContainer *subject = wl_json_get_object(grant, "subject");
	const char *why;

	if (!(revocation ? wl_grant_verify_stored(authority, &why) :
		  wl_grant_verify_stored_signature(authority, &why)))
	{
		*detail = psprintf("The run authority does not hold: %s.", why);
		return false;
	}
	if (!text_eq(wl_json_get_text(subject, "kind"), "workload") ||
		!text_eq(wl_json_get_text(subject, "id"), workload_id) ||
		!text_eq(wl_json_get_text(grant, "tenant_id"), tenant_id) ||
		!text_eq(wl_json_get_text(grant, "application_id"), application_id))
	{
		*detail = psprintf("The run authority is not bound to workload \"%s\".", workload_id);
		return false;
	}
	return true;
}

