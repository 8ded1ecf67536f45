/*
 * tick.c: workload_tick, one maintenance pass (recovery.c does the work),
 * and its answer.  Layer 4.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/jsonb.h"

#include "api.h"
#include "jsonb_util.h"
#include "recovery.h"
#include "schedule.h"

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

/*
 * workload_tick() -> jsonb: one maintenance pass, as a single runner (a
 * second concurrent call returns at once with "skipped": true).  Recovers
 * expired leases, times out silent heartbeats, then acts on every row whose
 * deadline has come (timeouts, schedule waits, overdue waits); at most
 * 1000 rows of each, with "more": true when some were left; then fires
 * the due slots of schedules (schedule_tick.c).  A workload
 * whose step fails is skipped, counted in "failed" and listed in "errors"
 * (the first 20), and the pass goes on; the tick's next passes in this
 * session pass it over for a while ("deferred", recovery.c).
 */
PG_FUNCTION_INFO_V1(workload_tick);
Datum
workload_tick(PG_FUNCTION_ARGS)
{
	WlApi		api;
	WlTickReport r;
	WlScheduleReport sr;
	bool		ran;
	WlJson		b;
	Jsonb	   *answer;

	memset(&r, 0, sizeof(r));
	memset(&sr, 0, sizeof(sr));
	wl_api_begin(fcinfo, &api);
	ran = wl_recovery_tick(&r);
	if (ran)
		wl_schedule_tick(&sr);
	wl_json_begin(&b);
	wl_json_bool(&b, "skipped", !ran);
	wl_json_int(&b, "recovered", r.recovered);
	wl_json_int(&b, "queue_timed_out", r.queue);
	wl_json_int(&b, "claim_timed_out", r.claim);
	wl_json_int(&b, "execution_timed_out", r.execution);
	wl_json_int(&b, "heartbeat_timed_out", r.heartbeat);
	wl_json_int(&b, "overall_timed_out", r.overall);
	wl_json_int(&b, "schedules_woken", r.woken);
	wl_json_int(&b, "waits_expired", r.expired);
	wl_json_int(&b, "revoked_dead_lettered", r.revoked);
	wl_json_int(&b, "failed", r.failed);
	wl_json_int(&b, "deferred", r.deferred);
	wl_json_jsonb(&b, "errors", errors_json(r.errors));
	wl_json_int(&b, "schedule_slots_fired", sr.fired);
	wl_json_int(&b, "schedule_slots_skipped", sr.skipped);
	wl_json_int(&b, "schedule_slots_failed", sr.failed);
	wl_json_int(&b, "schedules_failed", sr.broken);
	wl_json_bool(&b, "more", r.more || sr.more);
	answer = wl_api_transfer(wl_json_end(&b));
	wl_api_end(&api);
	PG_RETURN_JSONB_P(answer);
}
