/*
 * quota.c: per-tenant quotas (SPEC section 5.1), each a setting, unlimited
 * (0) by default: workloads not final (workload.max_active_per_tenant),
 * bytes of inputs, checkpoints and results stored
 * (workload.max_stored_kb_per_tenant), and schedules
 * (workload.max_schedules_per_tenant).  Over a quota a create (or a new
 * schedule) is WORKLOAD_QUOTA_EXCEEDED; a worker's calls are never refused
 * for one (what they store is counted).  With no quota set in any session
 * of the server, nothing here costs anything.
 *
 * A tenant's use is counted once, by reading its rows, and then kept as
 * work happens: with the library preloaded, in memory the server's sessions
 * share (a fixed table of tenants; one it has no room for is counted each
 * time), changed when each transaction commits, by every session once any
 * session has counted a tenant (whatever quotas each session has itself);
 * without it, counted for each create.  A count is forgotten when rows are
 * purged.  Bytes are the
 * values' sizes before compression.  Creates in flight together may pass a
 * quota by as many as they are.  Layer 3.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "errors.h"
#include "guc.h"
#include "quota.h"
#include "store_ops.h"

#define WL_QUOTA_TENANTS 4096	/* tenants whose use the server keeps in memory */
#define WL_QUOTA_TRANCHE "workload quotas"

/* a tenant of a database: a hash of both (no padding, so it may be compared and hashed as bytes) */
typedef uint64 QuotaKey;

typedef struct QuotaUse
{
	QuotaKey	key;
	Oid			database;
	int64		active;			/* workloads not final */
	int64		bytes;			/* bytes stored */
} QuotaUse;

typedef struct QuotaShared
{
	LWLock	   *lock;
	pg_atomic_uint32 counted;	/* tenants whose use is kept (0: nobody counts) */
} QuotaShared;

static QuotaShared *shared = NULL;
static HTAB *uses = NULL;
static shmem_request_hook_type prev_request = NULL;
static shmem_startup_hook_type prev_startup = NULL;

/* This transaction's changes to tenants' use, applied when it commits. */
typedef struct QuotaDelta
{
	QuotaKey	key;
	int64		active;
	int64		bytes;
	int			level;			/* the subtransaction it was made in */
} QuotaDelta;

static List *deltas = NIL;		/* of QuotaDelta *, in TopTransactionContext */
/* ... and those of workloads admitted but not yet written (a batch's) */
static List *unwritten = NIL;
static bool callbacks = false;

static void
quota_request(void)
{
	if (prev_request)
		prev_request();
	RequestAddinShmemSpace(MAXALIGN(sizeof(QuotaShared)) +
						   hash_estimate_size(WL_QUOTA_TENANTS, sizeof(QuotaUse)));
	RequestNamedLWLockTranche(WL_QUOTA_TRANCHE, 1);
}

static void
quota_startup(void)
{
	HASHCTL		ctl = {.keysize = sizeof(QuotaKey), .entrysize = sizeof(QuotaUse)};
	bool		found;

	if (prev_startup)
		prev_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct(WL_QUOTA_TRANCHE, sizeof(QuotaShared), &found);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche(WL_QUOTA_TRANCHE))->lock;
		pg_atomic_init_u32(&shared->counted, 0);
	}
	uses = ShmemInitHash("workload quota uses", WL_QUOTA_TENANTS, WL_QUOTA_TENANTS, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	LWLockRelease(AddinShmemInitLock);
}

/* wl_quota_init: the shared counts, when the library is preloaded; else nothing. */
void
wl_quota_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_request = shmem_request_hook;
	shmem_request_hook = quota_request;
	prev_startup = shmem_startup_hook;
	shmem_startup_hook = quota_startup;
}

/* quotas_set: whether this session has a quota to enforce */
static bool
quotas_set(void)
{
	return wl_max_active_per_tenant > 0 || wl_max_stored_kb_per_tenant > 0;
}

/*
 * counting: whether this session's changes must be told to the shared
 * counts: once any session has counted a tenant, every session keeps the
 * counts, whatever quotas it has itself (quotas set for some roles or
 * databases only, or turned off and on again, leave no count behind)
 */
static bool
counting(void)
{
	return quotas_set() || (uses != NULL && pg_atomic_read_u32(&shared->counted) > 0);
}

static QuotaKey
key_of(const char *tenant_id)
{
	return hash_bytes_extended((const unsigned char *) tenant_id, strlen(tenant_id),
							   (uint64) MyDatabaseId);
}

static void
on_xact(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event == XACT_EVENT_COMMIT && uses != NULL && deltas != NIL)
	{
		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		foreach(lc, deltas)
		{
			QuotaDelta *d = lfirst(lc);
			QuotaUse   *u = hash_search(uses, &d->key, HASH_FIND, NULL);

			if (u != NULL)
			{
				u->active = Max(u->active + d->active, 0);
				u->bytes = Max(u->bytes + d->bytes, 0);
			}
		}
		LWLockRelease(shared->lock);
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
	{
		deltas = NIL;			/* their memory goes with the transaction */
		unwritten = NIL;
	}
}

static void
quota_on_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		foreach(lc, deltas)
		{
			if (((QuotaDelta *) lfirst(lc))->level >= level)
				deltas = foreach_delete_current(deltas, lc);
		}
		foreach(lc, unwritten)
		{
			if (((QuotaDelta *) lfirst(lc))->level >= level)
				unwritten = foreach_delete_current(unwritten, lc);
		}
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		/* what a committed subtransaction changed now belongs to its parent */
		foreach(lc, deltas)
		{
			QuotaDelta *d = lfirst(lc);

			if (d->level >= level)
				d->level = level - 1;
		}
		foreach(lc, unwritten)
		{
			QuotaDelta *d = lfirst(lc);

			if (d->level >= level)
				d->level = level - 1;
		}
	}
}

/* add: a change to the tenant's use, onto the list */
static void
add(List **list, const char *tenant_id, int64 active, int64 bytes)
{
	MemoryContext old;
	QuotaDelta *d;

	if (!callbacks)
	{
		RegisterXactCallback(on_xact, NULL);
		RegisterSubXactCallback(quota_on_subxact, NULL);
		callbacks = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	d = palloc(sizeof(QuotaDelta));
	d->key = key_of(tenant_id);
	d->active = active;
	d->bytes = bytes;
	d->level = GetCurrentTransactionNestLevel();
	*list = lappend(*list, d);
	MemoryContextSwitchTo(old);
}

/*
 * quota_note: this transaction changes the tenant's use by (active, bytes), which
 * the shared count takes when it commits
 */
static void
quota_note(const char *tenant_id, int64 active, int64 bytes)
{
	if (uses != NULL)
		add(&deltas, tenant_id, active, bytes);
}

/* sum: what a list changes of the tenant's use */
static void
sum(List *list, QuotaKey key, int64 *active, int64 *bytes)
{
	ListCell   *lc;

	*active = *bytes = 0;
	foreach(lc, list)
	{
		QuotaDelta *d = lfirst(lc);

		if (d->key == key)
		{
			*active += d->active;
			*bytes += d->bytes;
		}
	}
}

/* use_of: the tenant's use as committed (counted now when the server keeps none) */
static void
use_of(const char *tenant_id, QuotaKey key, int64 *active, int64 *bytes)
{
	QuotaUse   *u = NULL;
	bool		found = false;

	if (uses != NULL)
	{
		LWLockAcquire(shared->lock, LW_SHARED);
		u = hash_search(uses, &key, HASH_FIND, NULL);
		if (u != NULL)
		{
			*active = u->active;
			*bytes = u->bytes;
			found = true;
		}
		LWLockRelease(shared->lock);
	}
	if (found)
		return;
	wl_store_tenant_use(tenant_id, active, bytes);
	if (uses == NULL)
		return;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	u = hash_search(uses, &key, HASH_ENTER_NULL, &found);
	if (u != NULL && !found)
	{
		u->database = MyDatabaseId;
		u->active = *active;
		u->bytes = *bytes;
		pg_atomic_fetch_add_u32(&shared->counted, 1);
	}
	LWLockRelease(shared->lock);
}

/*
 * wl_quota_admit: whether one more workload of the tenant, storing bytes
 * of input, is within its quotas (WL_OK, and it is counted) or not
 * (WL_E_QUOTA_EXCEEDED; *detail says which).
 */
WlErr
wl_quota_admit(const char *tenant_id, int64 bytes, char **detail)
{
	QuotaKey	key;
	int64		active;
	int64		stored;
	int64		more_active;
	int64		more_bytes;

	if (!quotas_set())
	{
		if (counting())
			quota_note(tenant_id, 1, bytes);
		return WL_OK;
	}
	key = key_of(tenant_id);
	use_of(tenant_id, key, &active, &stored);
	/*
	 * on top of the shared count, this transaction's changes; on top of a
	 * count of the rows, which sees what this transaction wrote, only the
	 * workloads it admitted and has not written yet
	 */
	sum(uses != NULL ? deltas : unwritten, key, &more_active, &more_bytes);
	if (wl_max_active_per_tenant > 0 && active + more_active + 1 > wl_max_active_per_tenant)
	{
		*detail = psprintf("Tenant \"%s\" has %lld workloads not final; workload.max_active_per_tenant is %d.",
						   tenant_id, (long long) (active + more_active),
						   wl_max_active_per_tenant);
		return WL_E_QUOTA_EXCEEDED;
	}
	if (wl_max_stored_kb_per_tenant > 0 &&
		stored + more_bytes + bytes > (int64) wl_max_stored_kb_per_tenant * 1024)
	{
		*detail = psprintf("Tenant \"%s\" stores %lld bytes; workload.max_stored_kb_per_tenant is %d kB.",
						   tenant_id, (long long) (stored + more_bytes), wl_max_stored_kb_per_tenant);
		return WL_E_QUOTA_EXCEEDED;
	}
	quota_note(tenant_id, 1, bytes);
	add(&unwritten, tenant_id, 1, bytes);
	return WL_OK;
}

/* wl_quota_written: the workload admitted for the tenant has been written. */
void
wl_quota_written(const char *tenant_id, int64 bytes)
{
	if (quotas_set())
		add(&unwritten, tenant_id, -1, -bytes);
}

/* wl_quota_require is wl_quota_admit raising WORKLOAD_QUOTA_EXCEEDED. */
void
wl_quota_require(const char *tenant_id, int64 bytes)
{
	char	   *detail;

	if (wl_quota_admit(tenant_id, bytes, &detail) != WL_OK)
		wl_refuse(WL_E_QUOTA_EXCEEDED, errdetail_internal("%s", detail),
				  errhint("Finish, cancel or purge the tenant's workloads, or raise the quota."));
}

/* wl_quota_unadmit takes back a workload admitted but not made (a concurrent create made it). */
void
wl_quota_unadmit(const char *tenant_id, int64 bytes)
{
	if (!counting())
		return;
	quota_note(tenant_id, -1, -bytes);
	add(&unwritten, tenant_id, -1, -bytes);
}

/* wl_quota_finished: a workload of the tenant reached a final state. */
void
wl_quota_finished(const char *tenant_id)
{
	if (counting())
		quota_note(tenant_id, -1, 0);
}

/* wl_quota_stored: the tenant stored bytes more (a checkpoint, a result). */
void
wl_quota_stored(const char *tenant_id, int64 bytes)
{
	if (bytes != 0 && counting())
		quota_note(tenant_id, 0, bytes);
}

/* wl_quota_forget: rows were purged: every count of this database is made again when next needed. */
void
wl_quota_forget(void)
{
	HASH_SEQ_STATUS it;
	QuotaUse   *u;

	if (uses == NULL)
		return;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&it, uses);
	while ((u = hash_seq_search(&it)) != NULL)
	{
		if (u->database == MyDatabaseId)
		{
			(void) hash_search(uses, &u->key, HASH_REMOVE, NULL);
			pg_atomic_fetch_sub_u32(&shared->counted, 1);
		}
	}
	LWLockRelease(shared->lock);
}

/*
 * wl_quota_require_schedule raises WORKLOAD_QUOTA_EXCEEDED when the tenant
 * has workload.max_schedules_per_tenant schedules besides the one named
 * (which a call may replace).
 */
void
wl_quota_require_schedule(const char *tenant_id, const char *application_id,
						  const char *schedule_id)
{
	int64		n;

	if (wl_max_schedules_per_tenant <= 0)
		return;
	n = wl_store_tenant_schedules(tenant_id, application_id, schedule_id);
	if (n >= wl_max_schedules_per_tenant)
		wl_refuse(WL_E_QUOTA_EXCEEDED,
				  errdetail("Tenant \"%s\" has %lld schedules; workload.max_schedules_per_tenant is %d.",
							tenant_id, (long long) n, wl_max_schedules_per_tenant),
				  errhint("Drop one of the tenant's schedules, or raise the quota."));
}
