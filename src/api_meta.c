/*
 * api_meta.c: SQL entry points that answer from the rules alone: the
 * transition table, the error table, the channel and id rules, the
 * deadline rule for the claim statement, and an event's evidence from the
 * columns it is kept in.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "api.h"
#include "args.h"
#include "authz.h"
#include "catalog.h"
#include "compat.h"
#include "crypto.h"
#include "deadline.h"
#include "errors.h"
#include "store_ops.h"

/*
 * workload_can_transition(from, to) answers from the same table the C code
 * enforces.  NULL is WORKLOAD_INVALID.
 */
PG_FUNCTION_INFO_V1(workload_can_transition);
Datum
workload_can_transition(PG_FUNCTION_ARGS)
{
	wl_args_require(fcinfo, "from_state", "to_state");
	PG_RETURN_BOOL(wl_state_allowed(wl_catalog_state_from_oid(PG_GETARG_OID(0)),
									wl_catalog_state_from_oid(PG_GETARG_OID(1))));
}

/* workload_transitions lists the table, one row per legal edge. */
PG_FUNCTION_INFO_V1(workload_transitions);
Datum
workload_transitions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n;
	const WlEdge *edges = wl_state_edges(&n);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = wl_catalog_state_datum(edges[i].from);
		values[1] = wl_catalog_state_datum(edges[i].to);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* workload.state_names() lists the C name table, for the test that compares it with the enum. */
PG_FUNCTION_INFO_V1(workload_state_names);
Datum
workload_state_names(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int i = 0; i < WL_STATE_COUNT; i++)
		wl_api_put_text(rsinfo, wl_state_name((WlState) i));
	return (Datum) 0;
}

/* workload_error_codes lists every refusal: token, SQLSTATE, primary message. */
PG_FUNCTION_INFO_V1(workload_error_codes);
Datum
workload_error_codes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = WL_OK + 1; i < WL_E_END; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(wl_errors[i].token);
		values[1] = CStringGetTextDatum(wl_errors[i].sqlstate);
		values[2] = CStringGetTextDatum(wl_errors[i].message);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * workload.claim_id_for(workload_id, fencing_token, worker_id): the claim id
 * rule, callable from the claim statement so the rule keeps one home.
 */
PG_FUNCTION_INFO_V1(workload_claim_id_for);
Datum
workload_claim_id_for(PG_FUNCTION_ARGS)
{
	wl_args_require(fcinfo, "workload_id", "fencing_token", "worker_id");
	PG_RETURN_TEXT_P(cstring_to_text(wl_claim_id(text_to_cstring(PG_GETARG_TEXT_PP(0)),
												 PG_GETARG_INT64(1),
												 text_to_cstring(PG_GETARG_TEXT_PP(2)))));
}

/*
 * workload.queue_key(tenant_id, application_id): the leading column of the
 * claim's index (wl_queue_key), for the index and the claim statement.
 */
PG_FUNCTION_INFO_V1(workload_queue_key);
Datum
workload_queue_key(PG_FUNCTION_ARGS)
{
	text	   *tenant;
	text	   *application;

	wl_args_require(fcinfo, "tenant_id", "application_id");
	tenant = PG_GETARG_TEXT_PP(0);
	application = PG_GETARG_TEXT_PP(1);
	PG_RETURN_INT64(wl_queue_key(VARDATA_ANY(tenant), VARSIZE_ANY_EXHDR(tenant),
								 VARDATA_ANY(application), VARSIZE_ANY_EXHDR(application)));
}

/*
 * workload.member_role(role_oid, role): the role a membership names
 * (wl_authz_member_role), for the statements that check membership.
 */
PG_FUNCTION_INFO_V1(workload_member_role);
Datum
workload_member_role(PG_FUNCTION_ARGS)
{
	Oid			role;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	role = wl_authz_member_role(PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)));
	if (!OidIsValid(role))
		PG_RETURN_NULL();
	PG_RETURN_OID(role);
}

/* workload.attempt_id_for(workload_id, attempt): the attempt id rule, for the claim statement. */
PG_FUNCTION_INFO_V1(workload_attempt_id_for);
Datum
workload_attempt_id_for(PG_FUNCTION_ARGS)
{
	wl_args_require(fcinfo, "workload_id", "attempt");
	PG_RETURN_TEXT_P(cstring_to_text(wl_attempt_id(text_to_cstring(PG_GETARG_TEXT_PP(0)),
												   PG_GETARG_INT32(1))));
}

/* workload.event_type(to_state): the event type of a transition into a state (SPEC section 6). */
PG_FUNCTION_INFO_V1(workload_event_type);
Datum
workload_event_type(PG_FUNCTION_ARGS)
{
	wl_args_require(fcinfo, "to_state");
	PG_RETURN_TEXT_P(cstring_to_text(wl_state_event_type(wl_catalog_state_from_oid(PG_GETARG_OID(0)))));
}

/*
 * workload.event_evidence(evidence, fencing_token, attempt): an event's
 * evidence as it was given, from the columns workload.events keeps it in.
 */
PG_FUNCTION_INFO_V1(workload_event_evidence);
Datum
workload_event_evidence(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(wl_store_event_evidence(PG_GETARG_JSONB_P(0),
											  !PG_ARGISNULL(1), PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1),
											  !PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2)));
}

/*
 * workload.claim_deadline(created_at, claimed_at, claim_ms, execution_ms,
 * overall_ms, start): the deadline rule (deadline.c) for a row the claim
 * statement moves to CLAIMED (or, with start, on to RUNNING).  NULL when no
 * timeout applies.
 */
PG_FUNCTION_INFO_V1(workload_claim_deadline);
Datum
workload_claim_deadline(PG_FUNCTION_ARGS)
{
	WlRow		row;

	wl_args_require(fcinfo, "created_at", "claimed_at");
	memset(&row, 0, sizeof(row));
	row.state = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5) ? WL_RUNNING : WL_CLAIMED;
	row.created_at = PG_GETARG_TIMESTAMPTZ(0);
	row.state_entered_at = PG_GETARG_TIMESTAMPTZ(1);
	row.timeouts.claim_ms = PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2);
	row.timeouts.execution_ms = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3);
	row.timeouts.overall_ms = PG_ARGISNULL(4) ? 0 : PG_GETARG_INT64(4);
	wl_deadline_set(&row, row.state == WL_RUNNING ? WL_CLAIMED : WL_READY);
	if (!row.has_deadline)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(row.deadline_at);
}
