/*
 * bgworker.c: the tick worker, one per database where the extension is
 * installed, started by the launcher (bgw_launcher.c) when the library is in
 * shared_preload_libraries.  Every workload.tick_interval it runs a pass
 * of the tick and holds no logic of its own: each phase of the pass
 * (leases, cascades, schedules, sweeps) is one transaction calling
 * workload.tick_phase, so each tenant's lease recoveries and timeouts are
 * committed before anything slower runs.  When the extension is not
 * installed (any more) it ends cleanly and the launcher leaves the database
 * alone until the extension is created there; an error ends the process and
 * the launcher starts it again (worker_spi's shape).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "bgworker.h"
#include "bgw_shmem.h"
#include "guc.h"
#include "catalog.h"
#include "jsonb_util.h"

#define WL_LAUNCHER_RESTART_S 10

typedef enum WlPass
{
	WL_PASS_DONE,				/* the tick left nothing for now */
	WL_PASS_MORE,				/* the tick left work for another pass at once */
	WL_PASS_ABSENT				/* the extension is not installed here */
} WlPass;

/*
 * wl_bgworker_init registers the launcher and sets up what it shares with
 * the backends; only while shared_preload_libraries is processed.
 */
void
wl_bgworker_init(void)
{
	BackgroundWorker w;

	if (!process_shared_preload_libraries_in_progress)
		return;
	wl_bgw_shmem_init();
	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = WL_LAUNCHER_RESTART_S;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "workload");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "wl_bgw_launcher_main");
	snprintf(w.bgw_name, BGW_MAXLEN, "workload launcher");
	snprintf(w.bgw_type, BGW_MAXLEN, "workload launcher");
	w.bgw_main_arg = (Datum) 0;
	RegisterBackgroundWorker(&w);
}

/*
 * locked_api_schema: the API schema, with the extension locked against
 * DROP EXTENSION until this transaction ends; InvalidOid when it is not
 * installed, and *busy (InvalidOid too) when a DROP or ALTER EXTENSION holds
 * it.  DROP EXTENSION holds AccessExclusiveLock on the extension from its
 * start (get_object_address), so without this lock a pass that began while
 * a drop was under way would find the tables gone half-way and end the
 * worker with an error.  The pass never waits for it (on Citus a tick that
 * waited there was seen in a distributed deadlock with the coordinator's
 * DROP EXTENSION): it skips, and the next pass looks again.
 */
static Oid
locked_api_schema(bool *busy)
{
	Oid			extoid = get_extension_oid("workload", true);

	*busy = false;
	if (!OidIsValid(extoid))
		return InvalidOid;
	if (!ConditionalLockDatabaseObject(ExtensionRelationId, extoid, 0, AccessShareLock))
	{
		*busy = true;
		return InvalidOid;
	}
	if (get_extension_oid("workload", true) != extoid)
		return InvalidOid;
	return wl_catalog_api_schema();
}

/*
 * pass_lock_timeout_ms: how long a pass waits for a table lock before it
 * gives way, half of deadlock_timeout and at most 500 ms.  Rows the tick
 * works on are taken SKIP LOCKED, so only a table lock (DDL, LOCK TABLE)
 * makes it wait.  On Citus a worker node's DROP EXTENSION drops the shards
 * first and locks the extension after: a pass that began in between holds
 * the extension and waits on a shard, the DROP waits on the extension, and
 * the deadlock detector (local or Citus's, at deadlock_timeout or later)
 * then cancelled the operator's DROP.  A pass that gives way first lets
 * the DROP through; the next pass looks again.
 */
static int
pass_lock_timeout_ms(void)
{
	return Max(Min(DeadlockTimeout, 1000) / 2, 1);
}

/*
 * The phases of a pass (tick.c), each run by pass_once in a transaction of
 * its own: the leases every tenant waits on are committed before anything
 * slower runs.
 */
static const char *const tick_phases[] = {"leases", "cascades", "schedules", "sweeps", NULL};

/* phase_once runs workload.tick_phase(phase) once in its own transaction. */
static WlPass
phase_once(const char *phase)
{
	Oid			schema;
	bool		busy;
	WlPass		result = WL_PASS_ABSENT;
	char		timeout[32];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	snprintf(timeout, sizeof(timeout), "%dms", pass_lock_timeout_ms());
	(void) set_config_option("lock_timeout", timeout, PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	schema = locked_api_schema(&busy);
	if (busy)
		result = WL_PASS_DONE;	/* a DROP or ALTER EXTENSION is under way */
	else if (OidIsValid(schema))
	{
		char	   *sql = psprintf("SELECT workload.tick_phase(%s)", quote_literal_cstr(phase));
		bool		isnull;
		Datum		d;

		result = WL_PASS_DONE;
		pgstat_report_activity(STATE_RUNNING, sql);
		if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "workload tick: %s did not return one row", sql);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
		{
			JsonbValue *v = wl_json_get(&DatumGetJsonbP(d)->root, "more");

			if (v != NULL && v->type == jbvBool && v->val.boolean)
				result = WL_PASS_MORE;
		}
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return result;
}

/*
 * pass_once runs a pass: each phase in its own transaction, leases first;
 * WL_PASS_MORE when a phase left work.
 */
static WlPass
pass_once(void)
{
	WlPass		result = WL_PASS_DONE;

	for (int i = 0; tick_phases[i]; i++)
	{
		WlPass		p = phase_once(tick_phases[i]);

		if (p == WL_PASS_ABSENT)
			return p;
		if (p == WL_PASS_MORE)
			result = WL_PASS_MORE;
	}
	return result;
}

/*
 * run_pass runs a pass.  A pass that fails while the extension is being
 * dropped (its lock held: on Citus a worker's DROP EXTENSION first drops the
 * shards, which a pass that began may wait for and then find gone) or after
 * it was dropped ends quietly; one that gave way to a table lock
 * (pass_lock_timeout_ms) says so in the log and the next pass tries again;
 * any other error ends the worker, and the launcher starts it again.
 */
static WlPass
run_pass(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile WlPass result = WL_PASS_DONE;

	PG_TRY();
	{
		result = pass_once();
	}
	PG_CATCH();
	{
		ErrorData  *e;
		bool		busy;
		Oid			schema;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		StartTransactionCommand();
		schema = locked_api_schema(&busy);
		CommitTransactionCommand();
		MemoryContextSwitchTo(cxt);
		if (!busy && OidIsValid(schema) && e->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(e);
		if (!busy && OidIsValid(schema))
			ereport(LOG,
					(errmsg("workload tick: pass skipped, a lock it needs is held by another session"),
					 errdetail("%s", e->message),
					 errhint("The next pass, at workload.tick_interval, tries again.")));
		result = (busy || OidIsValid(schema)) ? WL_PASS_DONE : WL_PASS_ABSENT;
		FreeErrorData(e);
	}
	PG_END_TRY();
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
	return result;
}

/*
 * wl_bgworker_main: take this database's slot (another worker may hold it
 * already), connect, then run a pass, wait on the latch for
 * workload.tick_interval (at once again when the pass left work), reload
 * settings on SIGHUP; SIGTERM and postmaster death end it, and so does the
 * extension's absence.
 */
void
wl_bgworker_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	char		dbname[BGW_EXTRALEN];
	bool		ticking = false;

	strlcpy(dbname, MyBgworkerEntry->bgw_extra, sizeof(dbname));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	if (!wl_bgw_claim(dboid))
		proc_exit(0);			/* another worker serves this database */
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	for (;;)
	{
		WlPass		pass = run_pass();

		if (pass == WL_PASS_ABSENT)
		{
			if (ticking)
				ereport(LOG,
						(errmsg("workload tick stopped in database \"%s\": the extension was dropped",
								dbname)));
			wl_bgw_set_absent();
			proc_exit(0);
		}
		if (!ticking)
			ereport(LOG, (errmsg("workload tick started in database \"%s\"", dbname)));
		ticking = true;
		if (pass != WL_PASS_MORE)
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
