/*
 * bgw_shmem.c: what the launcher, the tick workers and the other backends
 * share, and the hooks that wake the launcher (TimescaleDB's scheduler
 * shape, on a smaller scale).
 *
 * - One slot per running tick worker: its database, its pid, and how it
 *   ended (the extension was absent, or anything else), so that there is
 *   never more than one worker per database and the launcher knows whether
 *   to start it again.
 * - A queue of databases the launcher should look at: a transaction that
 *   created the extension, or a database, adds one when it commits (not
 *   before: a worker started earlier would not see the extension yet), and
 *   so does every COMMIT PREPARED (a prepared transaction may have made it).
 * - DROP DATABASE, ALTER DATABASE ... RENAME / SET TABLESPACE and CREATE
 *   DATABASE ... TEMPLATE stop that database's worker first, since they
 *   fail while another process is connected to it (the launcher starts it
 *   again after WL_BGW_RESTART_S if the database is still served).  An
 *   ALTER DATABASE (IS_TEMPLATE, ALLOW_CONNECTIONS) asks the launcher to
 *   look at the database again when it commits.
 *
 * Everything here exists only when the library is in
 * shared_preload_libraries; otherwise `shared` stays NULL and the hooks are
 * not installed.
 */
#include "postgres.h"

#include <signal.h>

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/utility.h"

#include "bgw_shmem.h"

#define WL_BGW_MAX_REQUESTS 64
#define WL_BGW_XACT_DBS 8		/* databases one transaction may ask about */

typedef struct WlBgwSlot
{
	Oid			dboid;			/* InvalidOid: free */
	pid_t		pid;			/* the running worker; 0 when none */
	WlBgwExit	exit;
} WlBgwSlot;

typedef struct WlBgwShared
{
	slock_t		mutex;			/* protects everything below */
	Latch	   *launcher_latch; /* NULL while no launcher runs */
	bool		all;			/* look at every database again */
	int			nrequests;
	Oid			requests[WL_BGW_MAX_REQUESTS];
	int			nslots;
	WlBgwSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} WlBgwShared;

static WlBgwShared *shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

/* what this backend's transaction created, for its commit */
static bool xact_created_extension = false;
static bool xact_wake_for_extension = false;
static int	xact_ndbs = 0;		/* > WL_BGW_XACT_DBS: ask about every one */
static Oid	xact_dbs[WL_BGW_XACT_DBS];

/* the slot this process holds, when it is a tick worker */
static int	my_slot = -1;
static bool my_absent = false;

/* one slot per possible background worker: tick workers never outnumber them */
static Size
shared_size(void)
{
	return add_size(offsetof(WlBgwShared, slots),
					mul_size(max_worker_processes, sizeof(WlBgwSlot)));
}

static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_size());
}

static void
shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("workload background workers", shared_size(), &found);
	if (!found)
	{
		memset(shared, 0, shared_size());
		SpinLockInit(&shared->mutex);
		shared->nslots = max_worker_processes;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* request asks the launcher to look at a database (InvalidOid: at all of them). */
static void
request(Oid dboid)
{
	Latch	   *latch;

	if (shared == NULL)
		return;
	SpinLockAcquire(&shared->mutex);
	if (!OidIsValid(dboid) || shared->nrequests >= WL_BGW_MAX_REQUESTS)
		shared->all = true;
	else
	{
		int			i;

		for (i = 0; i < shared->nrequests; i++)
			if (shared->requests[i] == dboid)
				break;
		if (i == shared->nrequests)
			shared->requests[shared->nrequests++] = dboid;
	}
	latch = shared->launcher_latch;
	SpinLockRelease(&shared->mutex);
	if (latch)
		SetLatch(latch);
}

/* stop_worker_of sends SIGTERM to the tick worker of a database, if one runs. */
static void
stop_worker_of(Oid dboid)
{
	pid_t		pid = wl_bgw_worker_pid(dboid);

	if (pid != 0)
		(void) kill(pid, SIGTERM);
}

static void
object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_POST_CREATE && classId == ExtensionRelationId)
		xact_created_extension = true;
	else if ((access == OAT_POST_CREATE || access == OAT_POST_ALTER) &&
			 classId == DatabaseRelationId)
	{
		if (xact_ndbs < WL_BGW_XACT_DBS)
			xact_dbs[xact_ndbs] = objectId;
		xact_ndbs = Min(xact_ndbs + 1, WL_BGW_XACT_DBS + 1);
	}
	else if (access == OAT_DROP && classId == DatabaseRelationId)
		stop_worker_of(objectId);
}

/* option_value: the string value of a CREATE/ALTER DATABASE option, or NULL */
static const char *
option_value(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (strcmp(d->defname, name) == 0 && d->arg != NULL)
			return defGetString(d);
	}
	return NULL;
}

/*
 * process_utility stops the worker of a database before a command that
 * needs nobody else connected to it: ALTER DATABASE ... RENAME and SET
 * TABLESPACE, CREATE DATABASE ... TEMPLATE.  The command waits up to 5
 * seconds for other processes to leave (CountOtherDBBackends).
 */
static void
process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *node = pstmt->utilityStmt;
	const char *db = NULL;

	if (IsA(node, RenameStmt) && ((RenameStmt *) node)->renameType == OBJECT_DATABASE)
		db = ((RenameStmt *) node)->subname;
	else if (IsA(node, AlterDatabaseStmt) &&
			 option_value(((AlterDatabaseStmt *) node)->options, "tablespace") != NULL)
		db = ((AlterDatabaseStmt *) node)->dbname;
	else if (IsA(node, CreatedbStmt))
		db = option_value(((CreatedbStmt *) node)->options, "template");
	if (db != NULL)
		stop_worker_of(get_database_oid(db, true));

	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	/*
	 * A prepared transaction (Citus commits DDL on its workers in two phases)
	 * may have created the extension: COMMIT PREPARED runs no commit hook of
	 * the session that prepared it, and runs in the same database, so the
	 * launcher is asked to look at this one once it has committed.
	 */
	if (IsA(node, TransactionStmt) &&
		((TransactionStmt *) node)->kind == TRANS_STMT_COMMIT_PREPARED)
		request(MyDatabaseId);
}

/*
 * xact_callback: before commit, whether the extension this transaction
 * created is ours (its row is visible only to us until then); after the
 * commit, the requests.
 */
static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (xact_created_extension)
				xact_wake_for_extension = OidIsValid(get_extension_oid("workload", true));
			break;
		case XACT_EVENT_COMMIT:
			if (xact_wake_for_extension)
				request(MyDatabaseId);
			if (xact_ndbs > WL_BGW_XACT_DBS)
				request(InvalidOid);
			else
				for (int i = 0; i < xact_ndbs; i++)
					request(xact_dbs[i]);
			/* FALLTHROUGH */
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			xact_created_extension = false;
			xact_wake_for_extension = false;
			xact_ndbs = 0;
			break;
		default:
			break;
	}
}

/* wl_bgw_shmem_init installs the hooks; only while preloading. */
void
wl_bgw_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shmem_startup;
	prev_object_access_hook = object_access_hook;
	object_access_hook = object_access;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = process_utility;
	RegisterXactCallback(xact_callback, NULL);
}

static void
detach_launcher(int code, Datum arg)
{
	SpinLockAcquire(&shared->mutex);
	if (shared->launcher_latch == MyLatch)
		shared->launcher_latch = NULL;
	SpinLockRelease(&shared->mutex);
}

/*
 * wl_bgw_attach_launcher makes this process the one the hooks wake, and
 * asks it to look at every database first.
 */
bool
wl_bgw_attach_launcher(void)
{
	if (shared == NULL)
		return false;
	SpinLockAcquire(&shared->mutex);
	shared->launcher_latch = MyLatch;
	shared->all = true;
	SpinLockRelease(&shared->mutex);
	before_shmem_exit(detach_launcher, (Datum) 0);
	return true;
}

/* wl_bgw_take_requests empties the queue into dbs (at most max) and *all. */
void
wl_bgw_take_requests(Oid *dbs, int max, int *n, bool *all)
{
	SpinLockAcquire(&shared->mutex);
	*all = shared->all || shared->nrequests > max;
	*n = Min(shared->nrequests, max);
	memcpy(dbs, shared->requests, *n * sizeof(Oid));
	shared->all = false;
	shared->nrequests = 0;
	SpinLockRelease(&shared->mutex);
}

/* wl_bgw_worker_pid: the pid of the tick worker serving a database, or 0. */
pid_t
wl_bgw_worker_pid(Oid dboid)
{
	pid_t		pid = 0;

	if (shared == NULL)
		return 0;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < shared->nslots; i++)
		if (shared->slots[i].dboid == dboid && shared->slots[i].pid != 0)
			pid = shared->slots[i].pid;
	SpinLockRelease(&shared->mutex);
	return pid;
}

/*
 * wl_bgw_take_exit: how the last tick worker of a database ended, once
 * (the slot is freed); RUNNING while one runs, NONE when none ran.
 */
WlBgwExit
wl_bgw_take_exit(Oid dboid)
{
	WlBgwExit	e = WL_BGW_EXIT_NONE;

	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < shared->nslots; i++)
	{
		WlBgwSlot  *s = &shared->slots[i];

		if (s->dboid != dboid)
			continue;
		if (s->pid != 0)
		{
			e = WL_BGW_EXIT_RUNNING;
			break;
		}
		e = s->exit;
		s->dboid = InvalidOid;
		s->exit = WL_BGW_EXIT_NONE;
	}
	SpinLockRelease(&shared->mutex);
	return e;
}

static void
release_slot(int code, Datum arg)
{
	Latch	   *latch;

	SpinLockAcquire(&shared->mutex);
	if (shared->slots[my_slot].pid == MyProcPid)
	{
		shared->slots[my_slot].pid = 0;
		shared->slots[my_slot].exit = my_absent ? WL_BGW_EXIT_ABSENT : WL_BGW_EXIT_STOPPED;
	}
	latch = shared->launcher_latch;
	SpinLockRelease(&shared->mutex);
	if (latch)
		SetLatch(latch);
}

/*
 * wl_bgw_claim makes this process the tick worker of a database; false
 * when another one serves it already.  The slot is released, with how the
 * worker ended, when the process exits for any reason.
 */
bool
wl_bgw_claim(Oid dboid)
{
	int			same = -1;
	int			fresh = -1;
	int			idle = -1;
	int			mine;

	if (shared == NULL)
		return false;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < shared->nslots; i++)
	{
		WlBgwSlot  *s = &shared->slots[i];

		if (s->dboid == dboid && s->pid != 0)
		{
			SpinLockRelease(&shared->mutex);
			return false;
		}
		if (s->pid != 0)
			continue;
		if (s->dboid == dboid)
			same = i;
		else if (!OidIsValid(s->dboid) && fresh < 0)
			fresh = i;
		else if (idle < 0)
			idle = i;
	}
	/* this database's old slot, else a free one, else one whose end nobody read */
	mine = same >= 0 ? same : fresh >= 0 ? fresh : idle;
	if (mine >= 0)
	{
		shared->slots[mine].dboid = dboid;
		shared->slots[mine].pid = MyProcPid;
		shared->slots[mine].exit = WL_BGW_EXIT_RUNNING;
	}
	SpinLockRelease(&shared->mutex);
	if (mine < 0)
		return false;
	my_slot = mine;
	before_shmem_exit(release_slot, (Datum) 0);
	return true;
}

/* wl_bgw_set_absent: this worker ends because the extension is not installed. */
void
wl_bgw_set_absent(void)
{
	my_absent = true;
}
