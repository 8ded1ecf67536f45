/*
 * bgworker.c: the background worker that runs workload_tick() every
 * workload.tick_interval, one per database in workload.database, when the
 * library is in shared_preload_libraries.  It holds no logic of its own:
 * each pass is one transaction calling the SQL-callable tick.  An error
 * ends the process and bgw_restart_time brings it back (worker_spi's shape).
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"

#include "bgworker.h"
#include "guc.h"
#include "catalog.h"
#include "jsonb_util.h"

#define WL_BGW_RESTART_S 10

/*
 * wl_bgworker_init registers one worker per database named in
 * workload.database; only while shared_preload_libraries is processed.
 */
void
wl_bgworker_init(void)
{
	char	   *raw;
	List	   *names;
	ListCell   *lc;

	if (!process_shared_preload_libraries_in_progress)
		return;
	raw = pstrdup(wl_tick_databases ? wl_tick_databases : "");
	if (!SplitGUCList(raw, ',', &names))
	{
		ereport(WARNING,
				(errmsg("invalid list syntax in \"workload.database\"; no workload tick worker started")));
		return;
	}
	foreach(lc, names)
	{
		const char *db = (const char *) lfirst(lc);
		BackgroundWorker w;

		if (db[0] == '\0' || strlen(db) >= Min(NAMEDATALEN, BGW_EXTRALEN))
		{
			ereport(WARNING,
					(errmsg("invalid database name \"%s\" in \"workload.database\"", db)));
			continue;
		}
		memset(&w, 0, sizeof(w));
		w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		w.bgw_start_time = BgWorkerStart_RecoveryFinished;
		w.bgw_restart_time = WL_BGW_RESTART_S;
		snprintf(w.bgw_library_name, BGW_MAXLEN, "workload");
		snprintf(w.bgw_function_name, BGW_MAXLEN, "wl_bgworker_main");
		snprintf(w.bgw_name, BGW_MAXLEN, "workload tick for database %s", db);
		snprintf(w.bgw_type, BGW_MAXLEN, "workload tick");
		strlcpy(w.bgw_extra, db, BGW_EXTRALEN);
		w.bgw_main_arg = (Datum) 0;
		RegisterBackgroundWorker(&w);
	}
}

/*
 * run_pass runs workload_tick() once in its own transaction and returns its
 * "more" (work was left for another pass at once).  When the extension is
 * not installed in this database it does nothing and says so once.
 */
static bool
run_pass(const char *dbname, bool *said_missing)
{
	Oid			schema;
	bool		more = false;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	schema = wl_catalog_api_schema();
	if (!OidIsValid(schema))
	{
		if (!*said_missing)
			ereport(LOG,
					(errmsg("workload tick: extension \"workload\" is not installed in database \"%s\"; waiting for it",
							dbname)));
		*said_missing = true;
	}
	else
	{
		char	   *sql = psprintf("SELECT %s.workload_tick()",
								   quote_identifier(get_namespace_name(schema)));
		bool		isnull;
		Datum		d;

		*said_missing = false;
		pgstat_report_activity(STATE_RUNNING, sql);
		if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "workload tick: %s did not return one row", sql);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
		{
			JsonbValue *v = wl_json_get(&DatumGetJsonbP(d)->root, "more");

			more = v != NULL && v->type == jbvBool && v->val.boolean;
		}
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
	return more;
}

/*
 * wl_bgworker_main: connect to the database in bgw_extra, then run a pass,
 * wait on the latch for workload.tick_interval (at once again when the
 * pass left work), reload settings on SIGHUP; SIGTERM and postmaster death
 * end it.
 */
void
wl_bgworker_main(Datum arg)
{
	char		dbname[BGW_EXTRALEN];
	bool		said_missing = false;

	strlcpy(dbname, MyBgworkerEntry->bgw_extra, sizeof(dbname));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(dbname, NULL, 0);
	ereport(LOG, (errmsg("workload tick started in database \"%s\"", dbname)));

	for (;;)
	{
		bool		more = run_pass(dbname, &said_missing);

		if (!more)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 wl_tick_interval_ms, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}
