/*
 * create.c: the one create path, for workload_create and for compensation
 * workloads.  Checks membership and the authorization snapshot, derives the
 * id, and inserts the workload (CREATED, then READY, or CANCELLED when a
 * dependency can never be met) or returns the one its idempotency key
 * already created.  Layer 3.
 */
#include "postgres.h"

#include "authz.h"
#include "clock.h"
#include "create.h"
#include "crypto.h"
#include "errors.h"
#include "grants.h"
#include "jsonb_util.h"
#include "store_ops.h"
#include "transition.h"

/*
 * existing_for_key returns the document of the workload already created with
 * this idempotency key, NULL when there is none; a different input or
 * revision under the same key is WORKLOAD_IDEMPOTENCY_CONFLICT.
 */
static Jsonb *
existing_for_key(const WlSpec *spec, const char *workload_id)
{
	char	   *found = wl_store_idempotent(spec->tenant_id, spec->application_id,
											spec->idempotency_key);

	if (found == NULL)
		return NULL;
	if (strcmp(found, workload_id) != 0)
		wl_refuse(WL_E_IDEMPOTENCY_CONFLICT,
				  errdetail("Idempotency key \"%s\" already created workload \"%s\".",
							spec->idempotency_key, found));
	return wl_store_document(found, false, NULL);
}

/*
 * dependency_states locks each dependency FOR KEY SHARE and returns its
 * state; one outside this tenant and application is WORKLOAD_NOT_FOUND, as
 * if it did not exist.
 */
static WlState *
dependency_states(const WlSpec *spec)
{
	WlState    *states = palloc(sizeof(WlState) * (spec->ndeps + 1));

	for (int i = 0; i < spec->ndeps; i++)
	{
		if (!wl_store_dependency_state(spec->dep_ids[i], spec->tenant_id,
									   spec->application_id, &states[i]))
			wl_refuse(WL_E_NOT_FOUND,
					  errdetail("Dependency \"%s\" does not exist in this tenant and application.",
								spec->dep_ids[i]));
	}
	return states;
}

/*
 * create_new inserts the row and its dependencies and records CREATED, then
 * READY; a dependency already final in another state than the one required
 * means the workload can never run, so it goes from CREATED straight to
 * CANCELLED, with the reason, and no worker is woken for it.
 */
static void
create_new(const WlSpec *spec, const char *workload_id, const WlState *dep_now)
{
	WlRow		row;
	char	   *actor = psprintf("%s:%s", spec->requested_kind, spec->requested_id);

	wl_store_row_put(spec, workload_id, wl_now());
	for (int i = 0; i < spec->ndeps; i++)
		wl_store_dependency_put(workload_id, spec->dep_ids[i], spec->dep_states[i]);
	if (!wl_store_lock(workload_id, NULL, &row))
		elog(ERROR, "workload \"%s\" vanished after insert", workload_id);
	wl_transition_created(&row, actor);
	for (int i = 0; i < spec->ndeps; i++)
	{
		if (wl_state_is_final(dep_now[i]) && dep_now[i] != spec->dep_states[i])
		{
			WlJson		b;

			wl_json_begin(&b);
			wl_json_str(&b, "cause", "dependency_unreachable");
			wl_json_str(&b, "dependency", spec->dep_ids[i]);
			wl_json_str(&b, "dependency_state", wl_state_name(dep_now[i]));
			wl_transition(&row, WL_CANCELLED, actor, wl_json_end(&b));
			return;
		}
	}
	wl_transition(&row, WL_READY, actor, NULL);
}

/*
 * wl_create creates the workload a parsed spec describes, or returns the one
 * its idempotency key already created.  Raises WORKLOAD_UNAUTHORIZED,
 * WORKLOAD_IDEMPOTENCY_CONFLICT, WORKLOAD_NOT_FOUND (dependency).
 */
Jsonb *
wl_create(const WlSpec *spec)
{
	char	   *input_hash = wl_jsonb_hash(spec->input);
	char	   *workload_id = wl_workload_id(spec->tenant_id, spec->application_id,
											 spec->idempotency_key,
											 spec->definition_revision, input_hash);
	Jsonb	   *doc;

	wl_authz_require_member(spec->tenant_id, spec->application_id);
	wl_grant_check_snapshot(spec);
	doc = existing_for_key(spec, workload_id);
	if (doc == NULL)
	{
		WlState    *dep_now = dependency_states(spec);

		if (wl_store_spec_put(spec, workload_id, input_hash, wl_authz_caller()->role,
							  wl_grant_run_authority(spec, workload_id)))
			create_new(spec, workload_id, dep_now);
		doc = existing_for_key(spec, workload_id);
		if (doc == NULL)
			elog(ERROR, "workload \"%s\" not visible after create", workload_id);
	}
	return doc;
}
