/*
 * guc.c: every workload.* setting.  Defined from _PG_init whether or not the
 * library is preloaded, then the prefix is reserved.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "clock.h"
#include "compat.h"
#include "guc.h"

static char *clock_override_text = NULL;
int			wl_run_authority_ttl_s = 86400;
char	   *wl_tick_databases = NULL;
int			wl_tick_interval_ms = 1000;
int			wl_claim_full_scan_every = 64;
int			wl_claim_full_scan_interval_ms = 100;
int			wl_max_active_per_tenant = 0;
int			wl_max_stored_kb_per_tenant = 0;
int			wl_max_schedules_per_tenant = 0;
int			wl_schedule_grant_warning_s = 7 * 86400;
bool		wl_statement_path = false;

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

static bool
check_database_list(char **newval, void **extra, GucSource source)
{
	char	   *raw;
	List	   *names;
	bool		ok;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	raw = pstrdup(*newval);
	ok = SplitGUCList(raw, ',', &names);
	list_free(names);
	pfree(raw);
	if (!ok)
		GUC_check_errdetail("workload.database must be a comma-separated list of database names.");
	return ok;
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

	DefineCustomStringVariable("workload.database",
							   "Limits the databases the background workers run workload_tick in.",
							   "A comma-separated list of database names; empty (the default) "
							   "means every database where the extension is installed.",
							   &wl_tick_databases,
							   "",
							   PGC_SIGHUP,
							   GUC_LIST_INPUT,
							   check_database_list, NULL, NULL);

	DefineCustomIntVariable("workload.tick_interval",
							"How often the background worker runs workload_tick.",
							NULL,
							&wl_tick_interval_ms,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("workload.statement_path",
							 "Runs every call through its SQL statements, never the direct paths.",
							 "The claim, the fenced calls and the appends that write "
							 "tables without a plan (store_claim_direct.c, store_fenced.c, "
							 "store_direct.c) give way to the statements that state the "
							 "same rules; slower, and for proving the two the same.",
							 &wl_statement_path,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("workload.claim_full_scan_every",
							"How often a session's claim scans its queue from the start.",
							"Other claims start after the last workload the session claimed "
							"there (claim_resume.c); 1 scans from the start every time.",
							&wl_claim_full_scan_every,
							64, 1, 1000000,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("workload.claim_full_scan_interval",
							"How long a claim that would scan its queue from the start "
							"passes over that scan after another session's.",
							"With the library preloaded, a scan from the start that any "
							"session of the server made in the queue within this time "
							"stands for this claim's (claim_resume.c); 0 never passes over one.",
							&wl_claim_full_scan_interval_ms,
							100, 0, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("workload.max_active_per_tenant",
							"Workloads not final a tenant may have; a create past it is refused.",
							"0 (the default) sets no limit.",
							&wl_max_active_per_tenant,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("workload.max_stored_kb_per_tenant",
							"Bytes of inputs, checkpoints and results a tenant may store; a create past it is refused.",
							"0 (the default) sets no limit.",
							&wl_max_stored_kb_per_tenant,
							0, 0, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("workload.max_schedules_per_tenant",
							"Schedules a tenant may have; a new schedule past it is refused.",
							"0 (the default) sets no limit.",
							&wl_max_schedules_per_tenant,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("workload.schedule_grant_warning",
							"How long before a schedule's grant expires the schedule warns of it.",
							"workload_schedules marks it grant_expiring from then on, and the "
							"tick records a schedule.grant_expiring event; 0 never warns.",
							&wl_schedule_grant_warning_s,
							7 * 86400, 0, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("workload");
}
