/*
 * tick.c: workload_tick, one maintenance pass, and workload.tick_phase, one
 * phase of it (the background worker commits each phase on its own), and
 * their answer.  recovery.c, transition.c and schedule_tick.c do the work.
 * Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api.h"
#include "catalog.h"
#include "jsonb_util.h"
#include "pass.h"
#include "recovery.h"
#include "schedule.h"
#include "transition.h"

/*
 * The phases of a pass, in the order they run, each with the steps its
 * cascades may take and a budget of time (0: none; its steps stop when it
 * is spent, and what is left waits for the next pass).  Leases come first
 * and commit on their own in the background worker: every tenant waits on
 * them, and nothing slower (a cascade, a schedule, a sweep) runs before
 * them; their rows are bounded (recovery.c), their time is not.
 */
typedef enum WlPhase
{
	WL_PHASE_LEASES,
	WL_PHASE_CASCADES,
	WL_PHASE_SCHEDULES,
	WL_PHASE_SWEEPS,
	WL_PHASE_COUNT
} WlPhase;

static const char *const phase_names[WL_PHASE_COUNT] = {"leases", "cascades", "schedules", "sweeps"};
static const int phase_budget_ms[WL_PHASE_COUNT] = {0, 1000, 1000, 1000};
static const int phase_cascade_steps[WL_PHASE_COUNT] = {1000, 5000, 0, 0};

#define WL_CASCADES_A_PASS 1000	/* workloads whose left cascades one pass takes up */

/* errors_json: the failed steps of a pass, as a JSON array. */
static Jsonb *
errors_json(List *errors)
{
	JsonbParseState *st = NULL;
	ListCell   *lc;

	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, errors)
	{
		WlStepError *e = lfirst(lc);
		WlJson		b;
		JsonbValue	v;

		wl_json_begin(&b);
		wl_json_str(&b, "workload_id", e->workload_id);
		wl_json_str(&b, "sqlstate", e->sqlstate);
		wl_json_str(&b, "message", e->message);
		v.type = jbvBinary;
		v.val.binary.data = &wl_json_end(&b)->root;
		pushJsonbValue(&st, WJB_ELEM, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_ARRAY, NULL));
}

/* run_phase runs one phase, in the pass this backend is in, as the tick's single runner. */
static void
run_phase(WlPhase phase, WlTickReport *r, WlScheduleReport *sr)
{
	uint64		steps;
	uint64		left;
	bool		more = false;
	uint64		failed = 0;

	wl_pass_budget(phase_budget_ms[phase]);
	wl_transition_cascade_budget(phase_cascade_steps[phase]);
	switch (phase)
	{
		case WL_PHASE_LEASES:
			wl_recovery_leases_phase(r);
			break;
		case WL_PHASE_CASCADES:
			r->cascaded += wl_transition_cascades_left(WL_CASCADES_A_PASS, "workload.tick", &more,
													   &failed);
			r->failed += failed;
			r->more = r->more || more;
			break;
		case WL_PHASE_SCHEDULES:
			wl_schedule_tick(sr);
			break;
		case WL_PHASE_SWEEPS:
			wl_recovery_sweeps_phase(r);
			break;
		default:
			elog(ERROR, "unknown maintenance phase %d", (int) phase);
	}
	wl_transition_cascade_spent(&steps, &left);
	wl_transition_cascade_budget(-1);
	r->cascade_steps += steps;
	r->cascades_left += left;
	r->more = r->more || left > 0;
}

/* answer: what a pass (or a phase of it) did, as workload_tick answers it */
static Jsonb *
answer(bool ran, const WlTickReport *r, const WlScheduleReport *sr)
{
	WlJson		b;

	wl_json_begin(&b);
	wl_json_bool(&b, "skipped", !ran);
	wl_json_int(&b, "recovered", r->recovered);
	wl_json_int(&b, "queue_timed_out", r->queue);
	wl_json_int(&b, "claim_timed_out", r->claim);
	wl_json_int(&b, "execution_timed_out", r->execution);
	wl_json_int(&b, "heartbeat_timed_out", r->heartbeat);
	wl_json_int(&b, "overall_timed_out", r->overall);
	wl_json_int(&b, "schedules_woken", r->woken);
	wl_json_int(&b, "waits_expired", r->expired);
	wl_json_int(&b, "revoked_dead_lettered", r->revoked);
	wl_json_int(&b, "failed", r->failed);
	wl_json_int(&b, "deferred", r->deferred);
	wl_json_int(&b, "held", r->held);
	wl_json_int(&b, "cascades_taken_up", r->cascaded);
	wl_json_int(&b, "cascade_steps", r->cascade_steps);
	wl_json_int(&b, "cascades_left", r->cascades_left);
	wl_json_jsonb(&b, "errors", errors_json(r->errors));
	wl_json_int(&b, "schedule_slots_fired", sr->fired);
	wl_json_int(&b, "schedule_slots_skipped", sr->skipped);
	wl_json_int(&b, "schedule_slots_failed", sr->failed);
	wl_json_int(&b, "schedules_failed", sr->broken);
	wl_json_int(&b, "schedule_grants_expiring", sr->grants_expiring);
	wl_json_bool(&b, "more", r->more || sr->more);
	return wl_json_end(&b);
}

/*
 * run: phases from..to of a pass as the tick's single runner (false, doing
 * nothing, when another tick runs), in a maintenance pass: no lock another
 * session holds is waited for (pass.c).
 */
static bool
run(WlPhase from, WlPhase to, WlTickReport *r, WlScheduleReport *sr)
{
	bool		ran;

	memset(r, 0, sizeof(*r));
	memset(sr, 0, sizeof(*sr));
	wl_pass_begin(0);
	ran = wl_catalog_tick_lock();
	for (int p = from; ran && p <= to; p++)
		run_phase((WlPhase) p, r, sr);
	wl_pass_end();
	return ran;
}

/*
 * workload_tick() -> jsonb: one maintenance pass, every phase in the
 * caller's transaction, as a single runner (a second concurrent call
 * returns at once with "skipped": true): expired leases, silent heartbeats
 * and every row whose deadline has come, in fair order between tenants, at
 * most 1000 rows of each; the cascades earlier passes left; the due slots of
 * schedules (schedule_tick.c); the work of revoked grants.  Each phase has a
 * budget of time and steps, and "more": true says work was left for the
 * next pass.  A row another session holds is never waited for: it is
 * counted in "held" and left for a later pass.  A workload whose step
 * fails is skipped, counted in "failed" and listed in "errors" (the first
 * 20), and the pass goes on; the tick's next passes in this session pass it
 * over for a while ("deferred", recovery.c).
 */
PG_FUNCTION_INFO_V1(workload_tick);
Datum
workload_tick(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlTickReport r;
	WlScheduleReport sr;
	bool		ran;
	Jsonb	   *result;

	wl_api_begin(fcinfo, &api);
	ran = run(WL_PHASE_LEASES, WL_PHASE_SWEEPS, &r, &sr);
	result = wl_api_transfer(answer(ran, &r, &sr));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(result);
}

/*
 * workload.tick_phase(phase text) -> jsonb: one phase of workload_tick
 * ("leases", "cascades", "schedules" or "sweeps"), for the background
 * worker, which runs each in a transaction of its own so that the leases a
 * phase recovered are committed before anything slower runs.  Only the
 * extension's owner may call it.
 */
PG_FUNCTION_INFO_V1(workload_tick_phase);
Datum
workload_tick_phase(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlTickReport r;
	WlScheduleReport sr;
	char	   *name;
	int			phase = -1;
	bool		ran;
	Jsonb	   *result;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"phase\" must not be NULL."));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	for (int i = 0; i < WL_PHASE_COUNT; i++)
	{
		if (strcmp(name, phase_names[i]) == 0)
			phase = i;
	}
	if (phase < 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"phase\" must be leases, cascades, schedules or sweeps."));
	wl_api_begin(fcinfo, &api);
	ran = run((WlPhase) phase, (WlPhase) phase, &r, &sr);
	result = wl_api_transfer(answer(ran, &r, &sr));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(result);
}
