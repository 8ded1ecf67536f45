/*
 * create.c: the one create path, for workload_create and for compensation
 * workloads.  Checks membership and the authorization snapshot, derives the
 * id, and inserts the workload (CREATED, then READY, or CANCELLED when a
 * dependency can never be met) or returns the one its idempotency key
 * already created.  Layer 3.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "authz.h"
#include "clock.h"
#include "create.h"
#include "crypto.h"
#include "deadline.h"
#include "errors.h"
#include "grants.h"
#include "jsonb_util.h"
#include "store_ops.h"
#include "transition.h"
#include "quota.h"

/*
 * wl_create_existing returns the id of the workload already created with
 * this idempotency key, NULL when there is none; a different input,
 * revision or not_before under the same key is
 * WORKLOAD_IDEMPOTENCY_CONFLICT.
 */
char *
wl_create_existing(const WlSpec *spec, const char *workload_id)
{
	TimestampTz not_before;
	char	   *found = wl_store_idempotent(spec->tenant_id, spec->application_id,
											spec->idempotency_key, &not_before);

	if (found == NULL || wl_create_replays(spec, workload_id, found, not_before))
		return found;
	if (strcmp(found, workload_id) != 0)
		wl_refuse(WL_E_IDEMPOTENCY_CONFLICT,
				  errdetail("Idempotency key \"%s\" already created workload \"%s\".",
							spec->idempotency_key, found));
	wl_refuse(WL_E_IDEMPOTENCY_CONFLICT,
			  errdetail("Idempotency key \"%s\" already created workload \"%s\" with another not_before.",
						spec->idempotency_key, found));
	return NULL;				/* not reached */
}

/*
 * wl_create_replays: whether a spec whose id is workload_id replays the
 * workload found under its key (created with not_before; 0: none): the same
 * id (tenant, application, key, revision, input) and the same not_before.
 */
bool
wl_create_replays(const WlSpec *spec, const char *workload_id, const char *found,
				  TimestampTz not_before)
{
	return strcmp(found, workload_id) == 0 &&
		not_before == (spec->has_not_before ? spec->not_before : 0);
}

/* existing_for_key: the document of wl_create_existing's workload, or NULL. */
static Jsonb *
existing_for_key(const WlSpec *spec, const char *workload_id)
{
	char	   *found = wl_create_existing(spec, workload_id);

	return found ? wl_store_document(found, false, NULL) : NULL;
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
 * CANCELLED, with the reason, and no worker is woken for it.  The row is
 * written once, in the state CREATED leads to, with that state's deadline;
 * both events are appended.
 */
static void
create_new(const WlSpec *spec, const char *workload_id, int64 seq, const WlState *dep_now,
		   TimestampTz lapses)
{
	WlRow		first;
	WlRow		row;
	char	   *actor = psprintf("%s:%s", spec->requested_kind, spec->requested_id);
	TimestampTz now = wl_now();
	Jsonb	   *why = NULL;

	memset(&first, 0, sizeof(first));
	first.state = WL_READY;
	first.authority_expires_at = lapses;
	for (int i = 0; i < spec->ndeps; i++)
	{
		if (wl_state_is_final(dep_now[i]) && dep_now[i] != spec->dep_states[i])
		{
			WlJson		b;

			wl_json_begin(&b);
			wl_json_str(&b, "cause", "dependency_unreachable");
			wl_json_str(&b, "dependency", spec->dep_ids[i]);
			wl_json_str(&b, "dependency_state", wl_state_name(dep_now[i]));
			why = wl_json_end(&b);
			first.state = WL_CANCELLED;
			break;
		}
	}
	wl_state_require(workload_id, WL_CREATED, first.state);
	first.created_at = first.state_entered_at = first.next_attempt_at = now;
	if (spec->has_not_before && spec->not_before > now)
		first.next_attempt_at = spec->not_before;
	first.timeouts = spec->timeout_ms;
	wl_deadline_set(&first, WL_CREATED);
	/* the dependencies first: the row's queue row is blocked while one is unmet */
	for (int i = 0; i < spec->ndeps; i++)
		wl_store_dependency_put(spec->tenant_id, workload_id, spec->dep_ids[i],
								spec->dep_states[i]);
	wl_store_row_put(spec, workload_id, seq, now, &first, &row);
	wl_transition_created(&row, actor);
	wl_transition_applied(&row, WL_CREATED, actor, why);
}

/*
 * wl_create_grant_ids: the workload's authorization chain: its run
 * authority (the grant id in authority) and the snapshot's chain.
 */
ArrayType *
wl_create_grant_ids(Jsonb *authority, ArrayType *chain)
{
	const char *run_authority_id = wl_json_get_text(wl_json_get_object(&authority->root, "grant"),
													"id");
	int			n;
	char	  **ids = wl_array_items(chain, &n);
	Datum	   *d = palloc(sizeof(Datum) * (n + 2));

	d[0] = CStringGetTextDatum(run_authority_id);
	for (int i = 0; i < n; i++)
		d[i + 1] = CStringGetTextDatum(ids[i]);
	return wl_array_of(d, NULL, n + 1, TEXTOID);
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
	ArrayType  *chain;

	wl_authz_require_member(spec->tenant_id, spec->application_id);
	chain = wl_grant_check_snapshot(spec);
	doc = existing_for_key(spec, workload_id);
	if (doc == NULL)
	{
		WlState    *dep_now = dependency_states(spec);
		Jsonb	   *authority = wl_grant_run_authority(spec, workload_id);
		WlSpec		kept = *spec;
		int64		seq = wl_store_next_seq();
		ArrayType  *ids = wl_create_grant_ids(authority, chain);

		wl_quota_require(spec->tenant_id, VARSIZE(spec->input));
		/* what is stored verifies the grants but is no bearer credential */
		kept.authorization_snapshot = wl_grant_stored_form(spec->authorization_snapshot);
		if (wl_store_spec_put(&kept, workload_id, seq, input_hash, wl_authz_caller()->role,
							  wl_grant_stored_form(authority), ids))
		{
			create_new(spec, workload_id, seq, dep_now,
					   wl_grant_lapses_at(spec->authorization_snapshot, authority));
			wl_quota_written(spec->tenant_id, VARSIZE(spec->input));
		}
		else
			wl_quota_unadmit(spec->tenant_id, VARSIZE(spec->input));
		doc = existing_for_key(spec, workload_id);
		if (doc == NULL)
			elog(ERROR, "workload \"%s\" not visible after create", workload_id);
	}
	return doc;
}
