/*
 * store_sql.h: the plan table shared by store.c (which prepares and runs the
 * plans) and store_sql.c (which holds their text).  Internal to the store.
 */
#ifndef WL_STORE_SQL_H
#define WL_STORE_SQL_H

#include "store.h"

#define ST ((Oid) 1)			/* placeholder: the workload_state type */
#define STA ((Oid) 2)			/* placeholder: its array type */
#define MAX_ARGS 25

/*
 * The advisory lock that makes workload_tick a single runner ('workload' in
 * ASCII, as a bigint).  Defined here and nowhere else.
 */
#define WL_TICK_LOCK_KEY "8606223218634613092"

typedef struct WlPlanDef
{
	const char *sql;
	int			nargs;
	Oid			types[MAX_ARGS];
} WlPlanDef;

extern const WlPlanDef wl_plan_defs[P_COUNT];

#endif
