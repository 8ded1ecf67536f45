/*
 * schedule.h: schedules (SPEC section 4, "Scheduling and bulk work"):
 * schedule.c keeps them for the API, schedule_tick.c fires their due slots.
 * Layer 3.
 */
#ifndef WL_SCHEDULE_H
#define WL_SCHEDULE_H

#include "datatype/timestamp.h"
#include "utils/jsonb.h"

#include "store_ops.h"

/* A schedule as workload_schedule asks for it. */
typedef struct WlScheduleRequest
{
	char	   *tenant_id;
	char	   *application_id;
	char	   *schedule_id;
	char	   *cron;
	Jsonb	   *template;
	char	   *timezone;
	char	   *overlap;
	char	   *catch_up;
} WlScheduleRequest;

/* What one tick did with the schedules. */
typedef struct WlScheduleReport
{
	int64		fired;			/* workloads made */
	int64		skipped;		/* slots skipped by overlap */
	int64		failed;			/* slots whose workload could not be made */
	int64		broken;			/* schedules whose pass failed as a whole */
	int64		grants_expiring;	/* schedules whose grant's expiry was warned of */
	bool		more;			/* it stopped at its limit with due slots left */
} WlScheduleReport;

extern void wl_schedule_check_request(const WlScheduleRequest *req);
extern Jsonb *wl_schedule_put(const WlScheduleRequest *req);
extern Jsonb *wl_schedule_set_grant(const char *tenant_id, const char *application_id,
									const char *schedule_id, Jsonb *grant);
extern Jsonb *wl_schedule_pause(const char *tenant_id, const char *application_id,
								const char *schedule_id);
extern Jsonb *wl_schedule_resume(const char *tenant_id, const char *application_id,
								 const char *schedule_id);
extern void wl_schedule_drop(const char *tenant_id, const char *application_id,
							 const char *schedule_id);
extern Jsonb **wl_schedule_list(const char *tenant_id, const char *application_id, int *n);
extern Jsonb *wl_schedule_spec(const WlSchedule *s, Jsonb *template, TimestampTz slot);
extern void wl_schedule_tick(WlScheduleReport *r);

#endif
