/*
 * store_ready.c: what the server's sessions tell each other of queue rows
 * that became claimable, so that a claim that starts from its session's
 * points in a queue (claim_resume.c) never passes over one of them (SPEC
 * section 5.1: the claim order holds for every claim in every session).
 * Shared memory, so only with the library preloaded (else claims do not
 * start from points at all).  Layer 2: it keeps and tells, it decides
 * nothing.
 *
 * A row becomes claimable when the transaction that inserts (or unblocks)
 * its queue row commits, or when a transaction that had taken or locked it
 * (a claim) ends without deleting it.  Per queue (tenant and application;
 * a direct-mapped table of tags, keyed by a random seed), the server keeps
 * a ring of entries (queue key, transaction).  A claim lowers its point in
 * the key's priority to just before the key once its snapshot sees the
 * transaction committed (an entry of a returned row applies at once), and
 * keeps looking at an entry until then; each session remembers the last
 * entry it has settled.  An entry is published before its transaction
 * commits (XACT_EVENT_PRE_COMMIT) and a claim reads the ring after its
 * snapshot is taken, so a row the snapshot sees was always told first.
 * An entry overwritten before a session read it makes it scan from the
 * start, once its snapshot sees the entry's transaction ended; overwritten
 * before its transaction ended, it makes every session scan from the start
 * until its snapshot sees it ended (the floor).  A row returned by a claim's rollback is told after the rollback
 * (there is no callback before it): a claim whose snapshot falls in that
 * instant may pass over it once, as it passes over rows another claim
 * holds.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "catalog.h"
#include "store.h"
#include "store_ops.h"

#define READY_SLOTS 512			/* queues the server keeps a record of */
#define READY_RING 128			/* entries a queue keeps */
#define READY_TRANCHE "workload ready queues"

typedef struct ReadyEntry
{
	uint64		gen;			/* 0: empty */
	WlQueueKey	key;
	TransactionId xid;			/* the transaction whose commit makes the row claimable */
	bool		returned;		/* the row is claimable already (a claim returned it) */
	TimestampTz due;			/* not before then (0: at once) */
} ReadyEntry;

typedef struct ReadySlot
{
	uint64		tag;			/* the queue (0: unused) */
	uint64		gen;			/* the newest entry's */
	uint64		dropped;		/* the newest entry overwritten */
	TransactionId dropped_xmax; /* the newest transaction of those that told a commit */
	uint64		floor_gen;		/* entries overwritten before their transaction ended, */
	TransactionId floor_xmax;	/* and the newest of those transactions; */
	TimestampTz floor_due_min;	/* ... or before they were due, between these */
	TimestampTz floor_due_max;
	ReadyEntry	ring[READY_RING];
} ReadySlot;

typedef struct ReadyShared
{
	uint64		seed;
	LWLockPadded *locks;		/* one per slot */
	ReadySlot	slots[READY_SLOTS];
} ReadyShared;

static ReadyShared *ready = NULL;
static shmem_request_hook_type prev_request = NULL;
static shmem_startup_hook_type prev_startup = NULL;

static void
ready_request(void)
{
	if (prev_request)
		prev_request();
	RequestAddinShmemSpace(sizeof(ReadyShared));
	RequestNamedLWLockTranche(READY_TRANCHE, READY_SLOTS);
}

static void
ready_startup(void)
{
	bool		found;

	if (prev_startup)
		prev_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ready = ShmemInitStruct(READY_TRANCHE, sizeof(ReadyShared), &found);
	if (!found)
	{
		memset(ready, 0, sizeof(ReadyShared));
		if (!pg_strong_random(&ready->seed, sizeof(ready->seed)))
			ready->seed = (uint64) GetCurrentTimestamp() ^ (uint64) MyProcPid;
	}
	ready->locks = GetNamedLWLockTranche(READY_TRANCHE);
	LWLockRelease(AddinShmemInitLock);
}

/* wl_store_ready_init: the shared record, when the library is preloaded; else nothing. */
void
wl_store_ready_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_request = shmem_request_hook;
	shmem_request_hook = ready_request;
	prev_startup = shmem_startup_hook;
	shmem_startup_hook = ready_startup;
}

/* wl_store_ready_here: whether the server keeps the record (the library is preloaded) */
bool
wl_store_ready_here(void)
{
	return ready != NULL;
}

/* queue_tag: a queue of this database and extension, never 0 */
static uint64
queue_tag(const char *tenant_id, const char *application_id)
{
	uint64		h = ready->seed ^ ((uint64) MyDatabaseId << 32) ^ wl_catalog_store_schema();

	h = hash_bytes_extended((const unsigned char *) tenant_id, strlen(tenant_id), h);
	h = hash_bytes_extended((const unsigned char *) application_id, strlen(application_id), h);
	return h | 1;
}

static LWLock *
slot_lock(uint64 tag)
{
	return &ready->locks[tag % READY_SLOTS].lock;
}

/*
 * slot_take: the queue's slot, taken over if another queue had it (the
 * caller holds its lock exclusively).  What was told of this queue there
 * before is lost: every session scans from the start once (its *seen is
 * before dropped), and while a transaction that was running when the slot
 * changed hands may still commit a row it told (the floor, up to the
 * newest transaction id then), until its snapshot sees it ended.  A slot
 * never used lost nothing.
 */
static ReadySlot *
slot_take(uint64 tag)
{
	ReadySlot  *s = &ready->slots[tag % READY_SLOTS];

	if (s->tag != tag)
	{
		uint64		gen = s->gen;
		bool		used = gen != 0;

		memset(s, 0, sizeof(*s));
		s->tag = tag;
		s->gen = s->dropped = gen + 1;
		if (used)
		{
			TransactionId newest = XidFromFullTransactionId(ReadNextFullTransactionId());

			TransactionIdRetreat(newest);
			s->floor_gen = s->gen;
			s->floor_xmax = newest;
		}
	}
	return s;
}

/* publish puts an entry in the ring (the caller holds the slot's lock exclusively) */
static void
publish(ReadySlot *s, const WlQueueKey *key, TransactionId xid, bool returned, TimestampTz due)
{
	ReadyEntry *e = &s->ring[(s->gen + 1) % READY_RING];

	if (e->gen != 0)
	{
		bool		told_commit = !e->returned && TransactionIdIsValid(e->xid);
		bool		committing = told_commit && TransactionIdIsInProgress(e->xid);
		bool		not_due = e->due != 0;	/* it may not be due yet: kept as such */

		if (committing || not_due)
		{
			s->floor_gen = Max(s->floor_gen, e->gen);
			if (committing && (!TransactionIdIsValid(s->floor_xmax) ||
							   TransactionIdFollows(e->xid, s->floor_xmax)))
				s->floor_xmax = e->xid;
			if (e->due != 0)
			{
				s->floor_due_min = s->floor_due_min == 0 ? e->due : Min(s->floor_due_min, e->due);
				s->floor_due_max = Max(s->floor_due_max, e->due);
			}
		}
		else
		{
			s->dropped = Max(s->dropped, e->gen);
			/* ended, but a snapshot taken a moment ago may see it running still */
			if (told_commit && (!TransactionIdIsValid(s->dropped_xmax) ||
								TransactionIdFollows(e->xid, s->dropped_xmax)))
				s->dropped_xmax = e->xid;
		}
	}
	e->gen = ++s->gen;
	e->key = *key;
	e->xid = xid;
	e->returned = returned;
	e->due = due;
}

/*
 * What this transaction tells the others: rows it made claimable (told
 * before it commits), rows a claim of it took (told if it rolls back) or
 * locked and left (told when it ends), per queue.
 */
typedef struct Told
{
	uint64		tag;
	WlQueueKey	key;
	TimestampTz due;			/* claimable from then on (0: at once) */
	bool		taken;			/* a claim took it (else it became claimable, or was left) */
	bool		left;			/* a claim locked it and left it */
} Told;

static List *told = NIL;		/* of Told *, in TopTransactionContext */
static bool callbacks = false;

static void
tell_pre_commit(void)
{
	ListCell   *lc;
	TransactionId xid = GetTopTransactionIdIfAny();

	foreach(lc, told)
	{
		Told	   *t = lfirst(lc);

		if (t->taken || t->left)
			continue;
		LWLockAcquire(slot_lock(t->tag), LW_EXCLUSIVE);
		publish(slot_take(t->tag), &t->key, xid, false, t->due);
		LWLockRelease(slot_lock(t->tag));
	}
}

/* tell_end: the transaction ended (committed: whether it did): the rows its claims returned */
static void
tell_end(bool committed)
{
	ListCell   *lc;
	TransactionId xid = GetTopTransactionIdIfAny();

	foreach(lc, told)
	{
		Told	   *t = lfirst(lc);

		if (!t->left && !(t->taken && !committed))
			continue;
		LWLockAcquire(slot_lock(t->tag), LW_EXCLUSIVE);
		publish(slot_take(t->tag), &t->key, xid, true, t->due);
		LWLockRelease(slot_lock(t->tag));
	}
}

static void
on_xact(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			tell_pre_commit();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			tell_end(true);
			told = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			tell_end(false);
			told = NIL;
			break;
		case XACT_EVENT_PREPARE:
			told = NIL;
			break;
		default:
			break;
	}
}

static void
ready_note(const char *tenant_id, const char *application_id, const WlQueueKey *key, TimestampTz due,
	 bool taken, bool left)
{
	MemoryContext old;
	Told	   *t;

	if (ready == NULL)
		return;
	if (!callbacks)
	{
		RegisterXactCallback(on_xact, NULL);
		callbacks = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	t = palloc0(sizeof(Told));
	t->tag = queue_tag(tenant_id, application_id);
	t->key = *key;
	t->due = due;
	t->taken = taken;
	t->left = left;
	told = lappend(told, t);
	MemoryContextSwitchTo(old);
}

/*
 * wl_store_ready_claimable: this transaction made a row of the queue
 * claimable, from due on (not due yet when the claims see it: 0, at once),
 * told as it commits.
 */
void
wl_store_ready_claimable(const char *tenant_id, const char *application_id,
						 const WlQueueKey *key, TimestampTz due)
{
	ready_note(tenant_id, application_id, key, due, false, false);
}

/*
 * wl_store_ready_recheck: a claim stepped over a row of the queue that may
 * become claimable without a transaction making it so (a dependency it
 * requires in a state that dependency may leave again): every claim looks
 * at it again once due has come.  Told now.
 */
void
wl_store_ready_recheck(const char *tenant_id, const char *application_id, const WlQueueKey *key,
					   TimestampTz due)
{
	uint64		tag;

	if (ready == NULL)
		return;
	tag = queue_tag(tenant_id, application_id);
	LWLockAcquire(slot_lock(tag), LW_EXCLUSIVE);
	publish(slot_take(tag), key, InvalidTransactionId, true, due);
	LWLockRelease(slot_lock(tag));
}

/*
 * wl_store_ready_taken: a claim of this transaction took a row of the queue
 * (left: locked it and left it), told if the transaction rolls back (left:
 * when it ends), when the row is claimable again.
 */
void
wl_store_ready_taken(const char *tenant_id, const char *application_id, const WlQueueKey *key,
					 bool left)
{
	ready_note(tenant_id, application_id, key, 0, !left, left);
}

/* seen: whether the claim's snapshot sees transaction xid committed */
static bool
seen_committed(TransactionId xid, Snapshot snap)
{
	if (TransactionIdIsCurrentTransactionId(xid))
		return true;
	return !XidInMVCCSnapshot(xid, snap) && TransactionIdDidCommit(xid);
}

/* ended: whether the claim's snapshot sees transaction xid ended (either way) */
static bool
ended(TransactionId xid, Snapshot snap)
{
	return !TransactionIdIsCurrentTransactionId(xid) && !XidInMVCCSnapshot(xid, snap);
}

/*
 * all_ended: whether the claim's snapshot sees every transaction up to xid
 * ended (none in progress, xid itself before its xmax)
 */
static bool
all_ended(TransactionId xid, Snapshot snap)
{
	if (!TransactionIdPrecedes(xid, snap->xmax))
		return false;
	for (uint32 i = 0; i < snap->xcnt; i++)
	{
		if (TransactionIdPrecedesOrEquals(snap->xip[i], xid))
			return false;
	}
	return true;
}

/*
 * wl_store_ready_read: what a claim of the queue with snapshot snap must
 * know before it starts from points, after *seen (the last entry this
 * session settled; 0: none, and it scans from the start).  Each key of a
 * row that became claimable since, which snap sees, goes to lower[] (at
 * most max; more make *full); *full when the claim must scan from the start
 * (the record lost entries this session had not read, or the floor holds).
 * *seen moves past every entry settled (its row seen claimable, or its
 * transaction rolled back).  Returns false when the server keeps no record.
 */
bool
wl_store_ready_read(const char *tenant_id, const char *application_id, Snapshot snap,
					TimestampTz now, uint64 *seen, WlQueueKey *lower, int max, int *nlower,
					bool *full)
{
	uint64		tag;
	ReadySlot  *s;
	uint64		settled_to;
	bool		unsettled = false;

	*nlower = 0;
	*full = false;
	if (ready == NULL)
		return false;
	tag = queue_tag(tenant_id, application_id);
	LWLockAcquire(slot_lock(tag), LW_SHARED);
	s = &ready->slots[tag % READY_SLOTS];
	if (s->tag != tag)
	{
		/*
		 * Nothing told of this queue yet, or another queue has the slot
		 * (what was told of this one is lost): the slot is taken for it, and
		 * this claim scans from the start (*seen is before the slot's
		 * dropped); from then on the record answers.
		 */
		LWLockRelease(slot_lock(tag));
		LWLockAcquire(slot_lock(tag), LW_EXCLUSIVE);
		s = slot_take(tag);
	}
	settled_to = s->gen;
	if (*seen < s->dropped || *seen == 0)
	{
		*full = true;
		/* settled by a scan whose snapshot sees all of them ended */
		if (TransactionIdIsValid(s->dropped_xmax) && !all_ended(s->dropped_xmax, snap))
		{
			unsettled = true;
			settled_to = Min(settled_to, s->dropped - 1);
		}
	}
	if (s->floor_gen > *seen)
	{
		bool		committing = TransactionIdIsValid(s->floor_xmax) &&
			!all_ended(s->floor_xmax, snap);
		bool		coming_due = s->floor_due_max != 0 && now < s->floor_due_max;
		bool		none_due = !TransactionIdIsValid(s->floor_xmax) && s->floor_due_min != 0 &&
			now < s->floor_due_min;

		/*
		 * rows it lost may be visible, or due, now: from the start, with
		 * every snapshot until all are (settled then, by a scan whose
		 * snapshot sees every one)
		 */
		if (!none_due)
			*full = true;
		if (committing || coming_due)
		{
			unsettled = true;
			settled_to = Min(settled_to, s->floor_gen - 1);
		}
	}
	for (uint64 g = Max(*seen + 1, s->gen >= READY_RING ? s->gen - READY_RING + 1 : 1);
		 g <= s->gen; g++)
	{
		ReadyEntry *e = &s->ring[g % READY_RING];
		bool		applies;

		if (e->gen != g)
			continue;
		if (e->due != 0 && e->due > now)
		{
			/* not due yet: looked at again next time */
			if (!unsettled)
				settled_to = Min(settled_to, g - 1);
			unsettled = true;
			continue;
		}
		if (e->returned)
			applies = true;
		else if (seen_committed(e->xid, snap))
			applies = true;
		else if (ended(e->xid, snap))
			applies = false;	/* rolled back: nothing became claimable */
		else
		{
			/* still committing as far as snap sees: looked at again next time */
			if (!unsettled)
				settled_to = Min(settled_to, g - 1);
			unsettled = true;
			continue;
		}
		if (applies)
		{
			if (*nlower < max)
				lower[(*nlower)++] = e->key;
			else
				*full = true;
		}
	}
	LWLockRelease(slot_lock(tag));
	*seen = Max(*seen, settled_to);
	return true;
}
