/*
 * saga.c: compensation (sagas, SPEC section 7).  An undo step is bound to
 * the digest of its workload's authorization snapshot; compensating creates
 * one workload per step through the one create path, chained by
 * dependencies so they run in reverse order of registration.  Layer 3.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "authz.h"
#include "create.h"
#include "crypto.h"
#include "errors.h"
#include "fence.h"
#include "grants.h"
#include "jsonb_util.h"
#include "payload.h"
#include "saga.h"
#include "spec.h"
#include "store_ops.h"

/* covered: whether the run authority's capabilities include capability. */
static bool
covered(Jsonb *authority, const char *capability)
{
	ArrayType  *caps = wl_json_get_strings(wl_json_get_object(&authority->root, "grant"),
										   "capabilities");

	return caps != NULL && (wl_array_contains(caps, capability) ||
							wl_array_contains(caps, "*"));
}

static void
require_covered(const char *workload_id, Jsonb *authority, const char *capability)
{
	if (!covered(authority, capability))
		wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
				  errdetail("The run authority of workload \"%s\" does not cover capability \"%s\".",
							workload_id, capability),
				  errhint("A compensation's capability must be in the workload's capability_snapshot and its grant."));
}

/*
 * wl_saga_add records an undo step for the fenced workload, bound to the
 * digest of its authorization snapshot; returns the step.  Refuses a
 * capability the run authority does not cover
 * (WORKLOAD_COMPENSATION_UNAUTHORIZED), a workload already compensated
 * (WORKLOAD_TRANSITION_DENIED), more than WL_MAX_ARRAY_ITEMS steps, and the
 * fence codes.
 */
Jsonb *
wl_saga_add(const WlFence *fence, const char *capability, Jsonb *input)
{
	WlRow		row;
	WlSpecRow	spec;
	WlStep	   *steps;
	int			n;

	wl_fence_lock(fence, &row);
	wl_store_spec_read(&row, &spec);
	require_covered(row.workload_id, spec.run_authority, capability);
	steps = wl_store_steps(&row, &n);
	if (n > 0 && steps[0].compensation_id != NULL)
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" has already been compensated.", row.workload_id));
	if (n >= WL_MAX_ARRAY_ITEMS)
		wl_refuse(WL_E_INVALID, errdetail("Workload \"%s\" has %d compensation steps; the limit is %d.",
										  row.workload_id, n, WL_MAX_ARRAY_ITEMS));
	return wl_store_step_put(&row, n + 1, capability, input, wl_jsonb_hash(input),
							 wl_jsonb_hash(spec.authorization_snapshot));
}

/*
 * compensation_spec: the spec of the workload that undoes one step: same
 * tenant, application and environment, requested by the original workload
 * under its run authority, the step's capability as definition and only
 * capability, and (when given) a dependency on the compensation that must
 * succeed first.
 */
static Jsonb *
compensation_spec(const WlRow *row, const WlSpecRow *spec, const WlStep *s, const char *after)
{
	WlJson		b;
	WlJson		who;
	JsonbParseState *st = NULL;
	JsonbValue	v;
	Datum		cap = CStringGetTextDatum(s->capability);

	wl_json_begin(&who);
	wl_json_str(&who, "kind", "workload");
	wl_json_str(&who, "id", row->workload_id);
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	if (after)
	{
		WlJson		d;

		wl_json_begin(&d);
		wl_json_str(&d, "workload_id", after);
		wl_json_str(&d, "required_state", "SUCCEEDED");
		v.type = jbvBinary;
		v.val.binary.data = &wl_json_end(&d)->root;
		pushJsonbValue(&st, WJB_ELEM, &v);
	}
	wl_json_begin(&b);
	wl_json_str(&b, "tenant_id", row->tenant_id);
	wl_json_str(&b, "application_id", row->application_id);
	wl_json_str(&b, "environment", spec->environment);
	wl_json_str(&b, "definition_id", s->capability);
	wl_json_str(&b, "definition_revision", "compensation");
	wl_json_str(&b, "trigger", "compensation");
	wl_json_jsonb(&b, "input", s->input);
	wl_json_jsonb(&b, "requested_by", wl_json_end(&who));
	wl_json_jsonb(&b, "authorization_snapshot", spec->run_authority);
	wl_json_strs(&b, "capability_snapshot",
				 construct_array(&cap, 1, TEXTOID, -1, false, TYPALIGN_INT));
	wl_json_int(&b, "priority", spec->priority);
	wl_json_str(&b, "idempotency_key",
				psprintf("compensation:%s:%d", row->workload_id, s->step));
	wl_json_jsonb(&b, "dependencies", JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_ARRAY, NULL)));
	return wl_json_end(&b);
}

/*
 * wl_saga_compensate returns the compensation workload ids of a workload,
 * in the order they run: one per step, the last registered first, each
 * depending on the success of the one before, made now where they do not
 * exist yet.  Only FAILED, DEAD_LETTER and CANCELLED workloads (else
 * WORKLOAD_TRANSITION_DENIED); every step must be bound to the workload's
 * authorization digest and covered by its run authority, which must still
 * hold (else WORKLOAD_COMPENSATION_UNAUTHORIZED, and nothing is created).
 */
char **
wl_saga_compensate(const char *workload_id, const char *actor, int *count)
{
	WlRow		row;
	WlSpecRow	spec;
	WlStep	   *steps;
	char	   *digest;
	const char *why;
	char	   *after = NULL;
	char	  **ids;
	int			n;

	wl_authz_lock_or_refuse(workload_id, &row);
	if (!wl_state_is_compensable(row.state))
		wl_refuse(WL_E_TRANSITION_DENIED,
				  errdetail("Workload \"%s\" is %s; only FAILED, DEAD_LETTER and CANCELLED workloads are compensated.",
							workload_id, wl_state_name(row.state)));
	wl_store_spec_read(&row, &spec);
	digest = wl_jsonb_hash(spec.authorization_snapshot);
	steps = wl_store_steps(&row, &n);
	for (int i = 0; i < n; i++)
	{
		if (!wl_hex_equal(steps[i].digest, digest))
			wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
					  errdetail("Compensation step %d of workload \"%s\" is not bound to its authorization.",
								steps[i].step, workload_id));
	}
	if (n > 0 && steps[n - 1].compensation_id == NULL)
	{
		if (!wl_grant_verify_stored(spec.run_authority, &why))
			wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
					  errdetail("The run authority of workload \"%s\" no longer holds: %s.",
								workload_id, why));
		if (wl_grant_authority_revoked(&spec))
			wl_refuse(WL_E_COMPENSATION_UNAUTHORIZED,
					  errdetail("A grant the authorization of workload \"%s\" derives from has been revoked.",
								workload_id));
		for (int i = 0; i < n; i++)
			require_covered(workload_id, spec.run_authority, steps[i].capability);
	}
	ids = palloc(sizeof(char *) * (n + 1));
	*count = 0;
	for (int i = n - 1; i >= 0; i--)
	{
		if (steps[i].compensation_id == NULL)
		{
			WlSpec		cs;

			wl_spec_parse_stored(compensation_spec(&row, &spec, &steps[i], after), &cs);
			cs.inherited_grants = spec.grant_ids;
			steps[i].compensation_id =
				wl_json_get_text(&wl_create(&cs)->root, "workload_id");
			wl_store_step_bind(&row, steps[i].step, steps[i].compensation_id, actor);
		}
		ids[(*count)++] = steps[i].compensation_id;
		after = steps[i].compensation_id;
	}
	return ids;
}
