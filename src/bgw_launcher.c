/*
 * bgw_launcher.c: the launcher background worker.  Connected to no
 * database, it reads pg_database and keeps one tick worker (bgworker.c)
 * per database where the extension is installed: at its start it starts
 * one in every database that accepts connections and is not a template
 * (a worker that finds no extension ends at once, and the launcher
 * remembers that); afterwards it is woken through shared memory
 * (bgw_shmem.c) when a transaction that created the extension or a
 * database commits, when a worker ends, and on SIGHUP.  A worker that ends
 * for another reason (an error, pg_terminate_backend) is started again
 * after WL_BGW_RESTART_S, if its database still exists.  workload.database,
 * when set, limits the databases served.  A reload makes it try every
 * database again (for an extension it was not told about: one created by
 * PREPARE TRANSACTION and COMMIT PREPARED).
 */
#include "postgres.h"

#include <signal.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "bgworker.h"
#include "bgw_shmem.h"
#include "compat.h"
#include "guc.h"

#define WL_BGW_RESTART_S 10			/* before a stopped worker is started again */
#define WL_BGW_IDLE_MS (60 * 1000)	/* longest sleep: a scan of pg_database */
#define WL_BGW_MAX_TAKE 256

typedef struct WlDb
{
	Oid			dboid;
	char		name[NAMEDATALEN];
	BackgroundWorkerHandle *handle; /* the worker this launcher started */
	bool		eligible;		/* in the last scan, and not filtered out */
	bool		absent;			/* its worker found no extension */
	bool		requested;		/* a commit asked for it since its last start */
	bool		warned;			/* could not start a worker; said so */
	TimestampTz restart_at;		/* 0: no restart pending */
} WlDb;

static List *dbs = NIL;			/* of WlDb *, in TopMemoryContext */

static WlDb *
find_db(Oid dboid)
{
	ListCell   *lc;

	foreach(lc, dbs)
	{
		WlDb	   *db = (WlDb *) lfirst(lc);

		if (db->dboid == dboid)
			return db;
	}
	return NULL;
}

/* in_filter: whether workload.database (empty: every database) names it */
static bool
in_filter(const char *name)
{
	char	   *raw;
	List	   *names;
	ListCell   *lc;
	bool		found = false;

	if (wl_tick_databases == NULL || wl_tick_databases[0] == '\0')
		return true;
	raw = pstrdup(wl_tick_databases);
	if (!SplitGUCList(raw, ',', &names))
		return false;			/* the check hook refuses this */
	foreach(lc, names)
		if (strcmp((const char *) lfirst(lc), name) == 0)
			found = true;
	return found;
}

/*
 * scan_databases marks which databases a worker may serve: those that
 * accept connections, are not templates (a connected worker would make
 * CREATE DATABASE from them fail), are valid, and pass the filter.  New
 * ones get an entry (autovacuum's get_database_list).
 */
static void
scan_databases(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	ListCell   *lc;

	foreach(lc, dbs)
		((WlDb *) lfirst(lc))->eligible = false;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	pgstat_report_activity(STATE_RUNNING, "workload launcher: reading pg_database");
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database d = (Form_pg_database) GETSTRUCT(tup);
		WlDb	   *db;

		if (!d->datallowconn || d->datistemplate || database_is_invalid_form(d) ||
			!in_filter(NameStr(d->datname)))
			continue;
		db = find_db(d->oid);
		if (db == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			db = palloc0(sizeof(WlDb));
			db->dboid = d->oid;
			dbs = lappend(dbs, db);
			MemoryContextSwitchTo(old);
		}
		strlcpy(db->name, NameStr(d->datname), NAMEDATALEN);
		db->eligible = true;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

static bool
start_worker(WlDb *db)
{
	BackgroundWorker w;
	MemoryContext old;
	bool		ok;

	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = BGW_NEVER_RESTART;	/* the launcher decides */
	snprintf(w.bgw_library_name, BGW_MAXLEN, "workload");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "wl_bgworker_main");
	snprintf(w.bgw_name, BGW_MAXLEN, "workload tick for database %s", db->name);
	snprintf(w.bgw_type, BGW_MAXLEN, "workload tick");
	strlcpy(w.bgw_extra, db->name, BGW_EXTRALEN);
	w.bgw_main_arg = ObjectIdGetDatum(db->dboid);
	w.bgw_notify_pid = MyProcPid;
	old = MemoryContextSwitchTo(TopMemoryContext);
	ok = RegisterDynamicBackgroundWorker(&w, &db->handle);
	MemoryContextSwitchTo(old);
	if (!ok)
	{
		db->handle = NULL;
		if (!db->warned)
			ereport(WARNING,
					(errmsg("could not start the workload tick worker for database \"%s\"", db->name),
					 errhint("Raise max_worker_processes; the launcher tries again every %d seconds.",
							 WL_BGW_RESTART_S)));
		db->warned = true;
		return false;
	}
	db->warned = false;
	return true;
}

/* is_alive: a worker started by us that has not stopped, or any that holds a slot */
static bool
is_alive(WlDb *db)
{
	pid_t		pid;

	if (db->handle != NULL && GetBackgroundWorkerPid(db->handle, &pid) != BGWH_STOPPED)
		return true;
	return wl_bgw_worker_pid(db->dboid) != 0;
}

static void
stop_worker(WlDb *db)
{
	pid_t		pid = wl_bgw_worker_pid(db->dboid);

	if (db->handle != NULL)
		TerminateBackgroundWorker(db->handle);
	else if (pid != 0)
		(void) kill(pid, SIGTERM);
}

/*
 * serve looks after one database and returns how soon (ms) it needs the
 * launcher again; *forget when its entry can go (the database is gone or
 * filtered out, and its worker has ended).
 */
static long
serve(WlDb *db, TimestampTz now, bool *forget)
{
	WlBgwExit	e;

	*forget = false;
	if (is_alive(db))
	{
		if (!db->eligible)
			stop_worker(db);
		return WL_BGW_IDLE_MS;
	}
	e = wl_bgw_take_exit(db->dboid);
	if (db->handle != NULL)
	{
		pfree(db->handle);
		db->handle = NULL;
		if (e == WL_BGW_EXIT_NONE)
			e = WL_BGW_EXIT_STOPPED;	/* it ended before it took a slot */
	}
	if (e == WL_BGW_EXIT_ABSENT)
		db->absent = true;
	else if (e == WL_BGW_EXIT_STOPPED && db->restart_at == 0)
		db->restart_at = TimestampTzPlusMilliseconds(now, WL_BGW_RESTART_S * 1000);
	if (!db->eligible)
	{
		*forget = true;
		return WL_BGW_IDLE_MS;
	}
	if (db->absent && !db->requested)
		return WL_BGW_IDLE_MS;
	if (db->restart_at > now)
		return (long) ((db->restart_at - now) / 1000) + 1;
	if (!start_worker(db))
		return WL_BGW_RESTART_S * 1000L;
	db->absent = false;
	db->requested = false;
	db->restart_at = 0;
	return WL_BGW_IDLE_MS;
}

/*
 * launcher_pass: one look at every database; returns the next wait in ms.
 * With `again`, databases known to lack the extension are tried again too.
 */
static long
launcher_pass(bool again)
{
	Oid			req[WL_BGW_MAX_TAKE];
	int			nreq;
	bool		all;
	long		wait = WL_BGW_IDLE_MS;
	TimestampTz now;
	ListCell   *lc;

	wl_bgw_take_requests(req, lengthof(req), &nreq, &all);
	all = all || again;
	scan_databases();
	foreach(lc, dbs)
	{
		WlDb	   *db = (WlDb *) lfirst(lc);

		if (all)
			db->requested = true;
		for (int i = 0; i < nreq; i++)
			if (req[i] == db->dboid)
				db->requested = true;
	}
	now = GetCurrentTimestamp();
	foreach(lc, dbs)
	{
		WlDb	   *db = (WlDb *) lfirst(lc);
		bool		forget;

		wait = Min(wait, serve(db, now, &forget));
		if (forget)
		{
			dbs = foreach_delete_current(dbs, lc);
			pfree(db);
		}
	}
	return Max(wait, 1);
}

/*
 * wl_bgw_launcher_main: SIGHUP reloads the settings and looks at every
 * database again, those known to lack the extension included; SIGTERM
 * and postmaster death end it (bgw_restart_time brings it back after an
 * error or pg_terminate_backend; the tick workers go on meanwhile).
 */
void
wl_bgw_launcher_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	if (!wl_bgw_attach_launcher())
		elog(ERROR, "workload launcher: shared memory is not set up");
	ereport(LOG, (errmsg("workload launcher started")));

	for (;;)
	{
		long		wait;
		bool		reloaded = false;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			reloaded = true;
		}
		wait = launcher_pass(reloaded);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait, PG_WAIT_EXTENSION);
	}
}
