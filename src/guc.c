/*
 * guc.c: every workload.* setting.  Defined from _PG_init whether or not the
 * library is preloaded, then the prefix is reserved.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "clock.h"
#include "compat.h"
#include "guc.h"

static char *clock_override_text = NULL;
int			wl_run_authority_ttl_s = 86400;
char	   *wl_tick_databases = NULL;
int			wl_tick_interval_ms = 1000;

static bool
check_clock_override(char **newval, void **extra, GucSource source)
{
	TimestampTz ts;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!wl_clock_parse(*newval, &ts))
	{
		GUC_check_errdetail("workload.clock_override must be a timestamptz or empty.");
		return false;
	}
	return true;
}

static void
assign_clock_override(const char *newval, void *extra)
{
	wl_clock_set_override(newval);
}

/* wl_guc_init defines the settings; called once from _PG_init. */
void
wl_guc_init(void)
{
	DefineCustomStringVariable("workload.clock_override",
							   "Replaces the server clock for workload decisions (tests only).",
							   "A timestamptz as text; empty means the real clock.",
							   &clock_override_text,
							   "",
							   PGC_SUSET,
							   0,
							   check_clock_override,
							   assign_clock_override,
							   NULL);

	DefineCustomIntVariable("workload.run_authority_ttl",
							"How long the run authority signed at create stays valid.",
							NULL,
							&wl_run_authority_ttl_s,
							86400, 60, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	/*
	 * PostgreSQL allows a PGC_POSTMASTER setting to be defined only while
	 * shared_preload_libraries is processed; that is also the only time the
	 * background worker reads it.
	 */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomStringVariable("workload.database",
								   "Databases the background worker runs workload_tick in.",
								   "A comma-separated list of database names, one worker each; "
								   "empty starts none.",
								   &wl_tick_databases,
								   "postgres",
								   PGC_POSTMASTER,
								   GUC_LIST_INPUT,
								   NULL, NULL, NULL);

	DefineCustomIntVariable("workload.tick_interval",
							"How often the background worker runs workload_tick.",
							NULL,
							&wl_tick_interval_ms,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("workload");
}
