/*
 * api_create.c: workload_create.  Validates the spec, checks the
 * authorization snapshot binds the requester, derives the id, and inserts
 * or returns the existing workload for the same idempotency key.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/jsonb.h"

#include "authz.h"
#include "clock.h"
#include "create.h"
#include "crypto.h"
#include "errors.h"
#include "payload.h"
#include "store.h"

#define WL_CONTRACT_VERSION 1

/*
 * existing_for_key returns the document of the workload already created with
 * this idempotency key, NULL when there is none; a different input or
 * revision under the same key is WORKLOAD_IDEMPOTENCY_CONFLICT.
 */
static Jsonb *
existing_for_key(const WlSpec *spec, const char *workload_id)
{
	Datum		args[3];
	SPITupleTable *t;
	char	   *found;

	args[0] = CStringGetTextDatum(spec->tenant_id);
	args[1] = CStringGetTextDatum(spec->application_id);
	args[2] = CStringGetTextDatum(spec->idempotency_key);
	t = wl_store_run(P_IDEM, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return NULL;
	found = wl_store_text(t, 0, 1);
	if (strcmp(found, workload_id) != 0)
		wl_refuse(WL_E_IDEMPOTENCY_CONFLICT,
				  errdetail("Idempotency key \"%s\" already created workload \"%s\".",
							spec->idempotency_key, found));
	return wl_store_document(found, false);
}

/*
 * dependency_states locks each dependency FOR KEY SHARE (so it cannot be
 * purged under us) and returns its state; one outside this tenant and
 * application is WORKLOAD_NOT_FOUND, as if it did not exist.
 */
static WlState *
dependency_states(const WlSpec *spec)
{
	WlState    *states = palloc(sizeof(WlState) * (spec->ndeps + 1));

	for (int i = 0; i < spec->ndeps; i++)
	{
		Datum		args[3];
		SPITupleTable *t;

		args[0] = CStringGetTextDatum(spec->dep_ids[i]);
		args[1] = CStringGetTextDatum(spec->tenant_id);
		args[2] = CStringGetTextDatum(spec->application_id);
		t = wl_store_run(P_DEP_STATE, args, NULL, 1, SPI_OK_SELECT);
		if (SPI_processed == 0)
			wl_refuse(WL_E_NOT_FOUND,
					  errdetail("Dependency \"%s\" does not exist in this tenant and application.",
								spec->dep_ids[i]));
		states[i] = wl_state_from_name(wl_store_text(t, 0, 1));
	}
	return states;
}

/* insert_spec writes the spec row; false when a concurrent create won the key. */
static bool
insert_spec(const WlSpec *spec, const char *workload_id, const char *input_hash)
{
	Datum		a[25];
	char		nulls[25];

	memset(nulls, ' ', sizeof(nulls));
	a[0] = CStringGetTextDatum(workload_id);
	a[1] = CStringGetTextDatum(spec->tenant_id);
	a[2] = CStringGetTextDatum(spec->application_id);
	a[3] = CStringGetTextDatum(spec->idempotency_key);
	a[4] = CStringGetTextDatum(spec->environment);
	a[5] = CStringGetTextDatum(spec->definition_id);
	a[6] = CStringGetTextDatum(spec->definition_revision);
	a[7] = CStringGetTextDatum(spec->trigger);
	a[8] = JsonbPGetDatum(spec->input);
	a[9] = CStringGetTextDatum(input_hash);
	a[10] = JsonbPGetDatum(spec->requested_by);
	a[11] = JsonbPGetDatum(spec->authorization_snapshot);
	a[12] = PointerGetDatum(spec->connection_scopes);
	a[13] = Int32GetDatum(spec->max_attempts);
	a[14] = Int64GetDatum(spec->initial_delay_ms);
	a[15] = Int64GetDatum(spec->max_delay_ms);
	a[16] = CStringGetTextDatum(spec->backoff);
	a[17] = PointerGetDatum(spec->retry_on);
	a[18] = JsonbPGetDatum(spec->timeouts);
	a[19] = JsonbPGetDatum(spec->dependencies);
	a[20] = JsonbPGetDatum(spec->completion_criteria);
	a[21] = PointerGetDatum(spec->governing_snapshots);
	if (spec->governing_snapshots == NULL)
		nulls[21] = 'n';
	a[22] = Int32GetDatum(WL_CONTRACT_VERSION);
	a[23] = wl_authz_caller_name();
	a[24] = JsonbPGetDatum(wl_authz_run_authority(spec, workload_id));
	wl_store_run(P_SPEC_PUT, a, nulls, 0, SPI_OK_INSERT);
	return SPI_processed == 1;
}

/* timeout_arg: timeouts.<key> in ms as a parameter, NULL when absent. */
static Datum
timeout_arg(const WlSpec *spec, const char *key, char *null)
{
	int64		ms;

	if (!wl_json_get_int(&spec->timeouts->root, key, &ms))
	{
		*null = 'n';
		return (Datum) 0;
	}
	*null = ' ';
	return Int64GetDatum(ms);
}

static void
insert_row(const WlSpec *spec, const char *workload_id)
{
	static const char *const timeout_keys[] = {
		"queue_ms", "claim_ms", "execution_ms", "heartbeat_ms", "overall_ms"
	};
	Datum		a[13];
	char		nulls[13];

	a[0] = CStringGetTextDatum(workload_id);
	a[1] = CStringGetTextDatum(spec->tenant_id);
	a[2] = CStringGetTextDatum(spec->application_id);
	a[3] = Int32GetDatum(spec->priority);
	a[4] = PointerGetDatum(spec->capability_snapshot);
	a[5] = BoolGetDatum(spec->ndeps > 0);
	a[6] = TimestampTzGetDatum(wl_now());
	memset(nulls, ' ', sizeof(nulls));
	for (int i = 0; i < lengthof(timeout_keys); i++)
		a[7 + i] = timeout_arg(spec, timeout_keys[i], &nulls[7 + i]);
	a[12] = BoolGetDatum(JsonContainerSize(&spec->completion_criteria->root) > 0);
	wl_store_run(P_ROW_PUT, a, nulls, 0, SPI_OK_INSERT);
	for (int i = 0; i < spec->ndeps; i++)
	{
		Datum		d[3];

		d[0] = CStringGetTextDatum(workload_id);
		d[1] = CStringGetTextDatum(spec->dep_ids[i]);
		d[2] = wl_store_state_datum(spec->dep_states[i]);
		wl_store_run(P_DEP_PUT, d, NULL, 0, SPI_OK_INSERT);
	}
}

/*
 * create_new records CREATED, then READY; a dependency already final in
 * another state than the one required means the workload can never run, so
 * it goes from CREATED straight to CANCELLED, with the reason, and no
 * worker is woken for it.
 */
static void
create_new(const WlSpec *spec, const char *workload_id, const WlState *dep_now)
{
	WlRow		row;
	char	   *actor = psprintf("%s:%s", spec->requested_kind, spec->requested_id);

	insert_row(spec, workload_id);
	if (!wl_store_lock(workload_id, &row))
		elog(ERROR, "workload \"%s\" vanished after insert", workload_id);
	wl_store_event(&row, WL_CREATED, false, WL_CREATED, actor, NULL);
	for (int i = 0; i < spec->ndeps; i++)
	{
		if (wl_state_is_final(dep_now[i]) && dep_now[i] != spec->dep_states[i])
		{
			WlJson		b;

			wl_json_begin(&b);
			wl_json_str(&b, "cause", "dependency_unreachable");
			wl_json_str(&b, "dependency", spec->dep_ids[i]);
			wl_json_str(&b, "dependency_state", wl_state_name(dep_now[i]));
			wl_store_transition(&row, WL_CANCELLED, actor, wl_json_end(&b));
			return;
		}
	}
	wl_store_transition(&row, WL_READY, actor, NULL);
}

/*
 * wl_create_workload creates the workload a parsed spec describes, or
 * returns the one its idempotency key already created: the one create path,
 * for workload_create and for compensation workloads.  Raises
 * WORKLOAD_UNAUTHORIZED, WORKLOAD_IDEMPOTENCY_CONFLICT, WORKLOAD_NOT_FOUND
 * (dependency).  Caller is connected to SPI; the document is in SPI memory.
 */
Jsonb *
wl_create_workload(const WlSpec *spec)
{
	char	   *input_hash = wl_jsonb_hash(spec->input);
	char	   *workload_id = wl_workload_id(spec->tenant_id, spec->application_id,
											 spec->idempotency_key,
											 spec->definition_revision, input_hash);
	Jsonb	   *doc;

	wl_authz_require_member(spec->tenant_id, spec->application_id);
	wl_authz_check_snapshot(spec);
	doc = existing_for_key(spec, workload_id);
	if (doc == NULL)
	{
		WlState    *dep_now = dependency_states(spec);

		if (insert_spec(spec, workload_id, input_hash))
			create_new(spec, workload_id, dep_now);
		doc = existing_for_key(spec, workload_id);
		if (doc == NULL)
			elog(ERROR, "workload \"%s\" not visible after create", workload_id);
	}
	return doc;
}

/*
 * workload_create(spec jsonb) -> jsonb: the workload document.  Same
 * (tenant, application, idempotency_key) with the same input and revision
 * returns the existing workload unchanged.
 */
PG_FUNCTION_INFO_V1(workload_create);
Datum
workload_create(PG_FUNCTION_ARGS)
{
	WlSpec		spec;
	Jsonb	   *doc;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("spec must not be NULL."));
	wl_payload_parse_spec(PG_GETARG_JSONB_P(0), &spec);
	SPI_connect();
	doc = wl_store_transfer(wl_create_workload(&spec));
	SPI_finish();
	PG_RETURN_JSONB_P(doc);
}
