/*
 * claim_resume.c: where a session's next claim in a queue starts.  Layer 3.
 *
 * A claim deletes the queue rows it takes.  While any session holds an
 * older snapshot, those rows cannot be removed and their index entries
 * cannot be marked dead, so a claim that scans the queue from its start
 * steps over (and fetches from the heap) every entry claimed since that
 * snapshot: the longer the snapshot is held, the slower each claim.
 *
 * So each session remembers, per tenant, application and capability set,
 * a point in each priority it claimed from (up to WL_RESUME_POINTS
 * priorities): the queue key (created_at, seq) of the last workload it took
 * there.  Its next claim scans the queue in order, but each
 * of those priorities only after its point, and every other priority from
 * its start: it steps over the entries other sessions claimed since its
 * last claim there, not every entry claimed since the snapshot.  With the
 * library preloaded, the sessions of the server also share a front per
 * queue, capability set and priority (the furthest workload any of them
 * claimed there; fronts_* below): a point is raised to it before each
 * claim, so the claim does not step over what the others claimed since
 * either (with many sessions claiming, most of the entries a claim would
 * otherwise read).  A claim moves
 * the front as it takes each workload (front_taken), and a claim from
 * points that meets rows in flight asks it again (front_now) and goes on
 * from it when it has moved past them: on 2 cores, a claim's scan waits
 * for a core often enough that the claims which started meanwhile took
 * hundreds of rows after its point (bench/queue_walk.sh counts the queue
 * entries a claim reads).
 *
 * The order this keeps (SPEC section 5.1): a claim never takes a workload
 * while a claimable one of higher priority, or an older one of the same
 * priority, is left behind it, except rows other claimers hold.  A point
 * only ever passes rows the claim saw taken or held; a row that becomes
 * claimable behind it (a retry, which keeps its created_at; a released,
 * expired or rolled-back claim; a dependency met; a not_before or backoff
 * come due) is told to every session through the server's ready record
 * (store_ready.c), read after the claim's snapshot is taken: the points of
 * its priority are lowered to just before it, and the scan from the points
 * never jumps past it.  A row the scan steps over that may become claimable
 * with nobody telling (not due yet, a dependency in a state it may leave)
 * keeps the point before it (the claim's stops).  The record is shared
 * memory, so without the library preloaded there are no points: every
 * claim scans from the start of its queue.  A claim also scans from the
 * start
 *   - one claim in workload.claim_full_scan_every (64) of the session in
 *     that queue (1: every claim); not while a session of the server began
 *     one in that queue (and capability set) less than
 *     workload.claim_full_scan_interval (100 ms) ago: the first claim due
 *     after it makes the next (full_stamp),
 *   - whenever the scan from the points finds fewer than max_items (the
 *     rest of the batch is then claimed by a full scan in the same call,
 *     and the batch comes back best first),
 *   - when the record lost what it was told before this session read it,
 *     or more rows were told than a claim lowers its points for,
 *   - after the session's transaction or subtransaction aborts,
 *   - on the session's first claim there (and with other capabilities),
 *     and after the extension was created again.
 * A full scan never moves a point back past what it passed, so the work per
 * claim stays bounded by what other sessions claimed since this one's last
 * claim in the same priority, plus what was told, plus one full scan in
 * claim_full_scan_every.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "claim_resume.h"
#include "clock.h"
#include "guc.h"

/* queues a session remembers points in (the least recently used is forgotten) */
#define WL_RESUME_SLOTS 8
/* priorities a slot remembers a point in (the least recently moved is forgotten) */
#define WL_RESUME_POINTS 8

typedef struct ResumePoint
{
	WlQueueKey	key;
	uint64		used;			/* 0: unused */
} ResumePoint;

typedef struct ResumeSlot
{
	char	   *tenant_id;		/* NULL: unused */
	char	   *application_id;
	uint32		caps_hash;
	ResumePoint points[WL_RESUME_POINTS];
	int			since_full;		/* claims since the last full scan */
	uint64		used;			/* for least recently used */
	bool		has_base;		/* front_base below is computed */
	uint64		front_base;		/* the tag of its queue in the shared fronts */
	uint64		ready_seen;		/* the last entry of the server's record it settled (store_ready.c) */
} ResumeSlot;

static ResumeSlot slots[WL_RESUME_SLOTS];

/*
 * The fronts the sessions of this server share (only with the library in
 * shared_preload_libraries): per queue, capability set and priority, the
 * furthest workload any session claimed there.  A direct-mapped table of
 * tags (a hash of database, extension schema, tenant, application,
 * capabilities and priority, keyed by a random seed drawn at start-up, so
 * no tenant can aim at another's slot); two queues on one slot take it
 * from each other and only lose the hint.
 */
#define WL_FRONT_SLOTS 1024
#define WL_FRONT_TRANCHE "workload claim fronts"

typedef struct FrontSlot
{
	uint64		tag;			/* 0: unused */
	WlQueueKey	key;
} FrontSlot;

/*
 * ... and per queue and capability set, when a session of the server last
 * scanned it from the start (full_stamp): a direct-mapped table of tags too
 */
typedef struct FullSlot
{
	uint64		tag;			/* 0: unused */
	TimestampTz at;
} FullSlot;

typedef struct FrontShared
{
	LWLock	   *lock;
	uint64		seed;
	FrontSlot	slots[WL_FRONT_SLOTS];
	FullSlot	fulls[WL_FRONT_SLOTS];
} FrontShared;

static FrontShared *fronts = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static uint64 use_clock;
static bool callbacks_registered;
static uint64 points_generation;	/* the catalog generation the points belong to */

/*
 * forget every point: after an abort, the rows it claimed are back in the
 * queue; and each slot's front tag, which names the extension's schema
 */
static void
forget_all(void)
{
	for (int i = 0; i < WL_RESUME_SLOTS; i++)
	{
		memset(slots[i].points, 0, sizeof(slots[i].points));
		slots[i].has_base = false;
		slots[i].ready_seen = 0;
	}
}

static void
on_xact(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		forget_all();
}

static void
on_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget_all();
}

static uint32
caps_hash(ArrayType *caps)
{
	if (caps == NULL)
		return 0;
	return hash_bytes((const unsigned char *) VARDATA_ANY(caps), VARSIZE_ANY_EXHDR(caps));
}

/* the slot of this queue and capability set, taking the least recently used one if new */
static ResumeSlot *
slot_for(const char *tenant_id, const char *application_id, ArrayType *caps)
{
	uint32		h = caps_hash(caps);
	ResumeSlot *victim = &slots[0];

	if (!callbacks_registered)
	{
		RegisterXactCallback(on_xact, NULL);
		RegisterSubXactCallback(on_subxact, NULL);
		callbacks_registered = true;
	}
	/* the extension made again: its sequence starts over, the points mean nothing */
	if (points_generation != wl_catalog_generation())
	{
		forget_all();
		points_generation = wl_catalog_generation();
	}
	for (int i = 0; i < WL_RESUME_SLOTS; i++)
	{
		ResumeSlot *s = &slots[i];

		if (s->tenant_id && s->caps_hash == h && strcmp(s->tenant_id, tenant_id) == 0
			&& strcmp(s->application_id, application_id) == 0)
		{
			s->used = ++use_clock;
			return s;
		}
		if (s->used < victim->used)
			victim = s;
	}
	if (victim->tenant_id)
	{
		pfree(victim->tenant_id);
		pfree(victim->application_id);
	}
	victim->tenant_id = MemoryContextStrdup(TopMemoryContext, tenant_id);
	victim->application_id = MemoryContextStrdup(TopMemoryContext, application_id);
	victim->caps_hash = h;
	memset(victim->points, 0, sizeof(victim->points));
	victim->since_full = 0;
	victim->has_base = false;
	victim->ready_seen = 0;
	victim->used = ++use_clock;
	return victim;
}

static void
fronts_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(FrontShared));
	RequestNamedLWLockTranche(WL_FRONT_TRANCHE, 1);
}

static void
fronts_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fronts = ShmemInitStruct(WL_FRONT_TRANCHE, sizeof(FrontShared), &found);
	if (!found)
	{
		memset(fronts, 0, sizeof(FrontShared));
		fronts->lock = &(GetNamedLWLockTranche(WL_FRONT_TRANCHE))->lock;
		if (!pg_strong_random(&fronts->seed, sizeof(fronts->seed)))
			fronts->seed = (uint64) GetCurrentTimestamp() ^ (uint64) MyProcPid;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* wl_claim_resume_init: the shared fronts, when the library is preloaded; else nothing. */
void
wl_claim_resume_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fronts_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fronts_startup;
}

/*
 * the tag of slot s's queue (database, extension, tenant, application,
 * capabilities), computed once a slot (a slot is forgotten when the
 * extension is made again)
 */
static uint64
front_base(ResumeSlot *s)
{
	uint64		h;

	if (s->has_base)
		return s->front_base;
	h = fronts->seed ^ ((uint64) MyDatabaseId << 32) ^ wl_catalog_store_schema();
	h = hash_bytes_extended((const unsigned char *) s->tenant_id, strlen(s->tenant_id), h);
	h = hash_bytes_extended((const unsigned char *) s->application_id,
							strlen(s->application_id), h);
	s->front_base = hash_combine64(h, s->caps_hash);
	s->has_base = true;
	return s->front_base;
}

static uint64
front_tag(uint64 base, int priority)
{
	return hash_combine64(base, hash_bytes_uint32((uint32) priority)) | 1;
}

/* raise each of the n points (of slot s's queue) to its priority's shared front */
static void
fronts_raise(ResumeSlot *s, WlQueueKey *points, int n)
{
	uint64		base;

	if (fronts == NULL || n == 0)
		return;
	base = front_base(s);
	LWLockAcquire(fronts->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		uint64		tag = front_tag(base, points[i].priority);
		FrontSlot  *f = &fronts->slots[tag % WL_FRONT_SLOTS];

		if (f->tag == tag && wl_queue_key_cmp(&f->key, &points[i]) > 0)
			points[i] = f->key;
	}
	LWLockRelease(fronts->lock);
}

/*
 * move the shared fronts of slot s's queue up to the n claimed workloads
 * (never back); c is best first, so the last of each priority is the
 * furthest, and only it is looked at
 */
static void
fronts_publish(ResumeSlot *s, const WlClaimed *c, int n)
{
	uint64		base;

	if (fronts == NULL || n == 0)
		return;
	base = front_base(s);
	LWLockAcquire(fronts->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		uint64		tag;
		FrontSlot  *f;

		if (i + 1 < n && c[i + 1].key.priority == c[i].key.priority)
			continue;
		tag = front_tag(base, c[i].key.priority);
		f = &fronts->slots[tag % WL_FRONT_SLOTS];

		if (f->tag != tag)
		{
			f->tag = tag;
			f->key = c[i].key;
		}
		else if (wl_queue_key_cmp(&c[i].key, &f->key) > 0)
			f->key = c[i].key;
	}
	LWLockRelease(fronts->lock);
}

/*
 * front_taken: a workload the claim of slot arg took, told as the claim
 * takes it (WlClaimRequest.on_take): the shared front of its priority moves
 * up to it at once, not when the claim ends, so that a claim that starts
 * meanwhile starts after it instead of stepping over it (at 64 sessions
 * claiming 10 at a time on 2 cores, a claim's scan is often descheduled
 * halfway, and the claims that started meanwhile passed over the rows it
 * had taken: 8.7 rows in flight a job, 1.2 at 16 sessions)
 */

static void
front_taken(void *arg, const WlQueueKey *key)
{
	fronts_publish((ResumeSlot *) arg, &(WlClaimed) {.key = *key}, 1);
}

/* front_now: the shared front of priority p in the queue of slot arg (WlClaimRequest.front) */
static bool
front_now(void *arg, int p, WlQueueKey *key)
{
	uint64		tag = front_tag(front_base((ResumeSlot *) arg), p);
	FrontSlot  *f = &fronts->slots[tag % WL_FRONT_SLOTS];
	bool		found;

	LWLockAcquire(fronts->lock, LW_SHARED);
	found = f->tag == tag;
	if (found)
		*key = f->key;
	LWLockRelease(fronts->lock);
	return found;
}

/*
 * full_stamp: whether a claim of slot s's queue that is due to scan it from
 * the start by the count (claim_full_scan_every) should (made: the claim
 * has scanned from the start, as planned or not; the time is only taken):
 * not when a session of the server began one there less than
 * workload.claim_full_scan_interval ago; if it should, the time is taken for it at once, so that of the
 * sessions that come due together one scans.  A scan from the start walks
 * the index entries of every row claimed since the queue's last VACUUM, and
 * while a snapshot is held it fetches each of their rows: each session came
 * to one every 64 claims, and while a snapshot is held the claims would
 * read several times the queue entries a job they read with this
 * (bench/held_scan.sh measures both).  What became
 * claimable behind the points since that scan is taken by the next, made by
 * the first claim due after the interval.
 */
static bool
full_stamp(ResumeSlot *s, bool made)
{
	uint64		tag;
	FullSlot   *f;
	TimestampTz now;
	bool		due;

	if (fronts == NULL)
		return true;
	tag = front_base(s) | 1;
	f = &fronts->fulls[tag % WL_FRONT_SLOTS];
	now = GetCurrentTimestamp();
	LWLockAcquire(fronts->lock, LW_EXCLUSIVE);
	due = made || f->tag != tag
		|| TimestampDifferenceExceeds(f->at, now, wl_claim_full_scan_interval_ms);
	if (due)
	{
		f->tag = tag;
		f->at = now;
	}
	LWLockRelease(fronts->lock);
	return due;
}

/* the two batches as one, best first */
static WlClaimed *
merged(WlClaimed *a, int na, WlClaimed *b, int nb)
{
	WlClaimed  *all = palloc0(sizeof(WlClaimed) * (na + nb + 1));

	memcpy(all, a, sizeof(WlClaimed) * na);
	memcpy(all + na, b, sizeof(WlClaimed) * nb);
	qsort(all, na + nb, sizeof(WlClaimed), wl_claimed_cmp);
	return all;
}

/* points_cmp: best priority first */
static int
points_cmp(const void *a, const void *b)
{
	return wl_queue_key_cmp(a, b);
}

/* the slot's points, best priority first (n set; none: NULL) */
static WlQueueKey *
points_of(const ResumeSlot *s, int *n)
{
	WlQueueKey *pt = palloc(sizeof(WlQueueKey) * WL_RESUME_POINTS);

	*n = 0;
	for (int i = 0; i < WL_RESUME_POINTS; i++)
	{
		if (s->points[i].used)
			pt[(*n)++] = s->points[i].key;
	}
	if (*n == 0)
		return NULL;
	qsort(pt, *n, sizeof(WlQueueKey), points_cmp);
	return pt;
}

/* move the point of c's priority up to c (never back); a new one replaces the least recently moved */
static void
move_point(ResumeSlot *s, const WlQueueKey *c)
{
	ResumePoint *victim = &s->points[0];

	for (int i = 0; i < WL_RESUME_POINTS; i++)
	{
		ResumePoint *p = &s->points[i];

		if (p->used && p->key.priority == c->priority)
		{
			if (wl_queue_key_cmp(c, &p->key) > 0)
			{
				p->key = *c;
				p->used = ++use_clock;
			}
			return;
		}
		if (p->used < victim->used)
			victim = p;
	}
	victim->key = *c;
	victim->used = ++use_clock;
}

/* before: the key just before k (a claim after it reaches k) */
static WlQueueKey
before(const WlQueueKey *k)
{
	WlQueueKey	b = *k;

	b.seq--;
	return b;
}

/*
 * lower puts each of the n points (its priority's) just before the least
 * key of that priority in keys[] that is not after it: the rows told
 * claimable there are scanned again.
 */
static void
lower(WlQueueKey *points, int n, const WlQueueKey *keys, int nkeys)
{
	for (int i = 0; i < n; i++)
	{
		for (int k = 0; k < nkeys; k++)
		{
			if (keys[k].priority == points[i].priority && wl_queue_key_cmp(&keys[k], &points[i]) <= 0)
				points[i] = before(&keys[k]);
		}
	}
}

/* lower_slot is lower for the slot's own points */
static void
lower_slot(ResumeSlot *s, const WlQueueKey *keys, int nkeys)
{
	for (int i = 0; i < WL_RESUME_POINTS; i++)
	{
		if (s->points[i].used)
			lower(&s->points[i].key, 1, keys, nkeys);
	}
}

/*
 * after a claim that took n rows (full: from the start of the queue): each
 * point moves up to the furthest row taken in its priority, never past a
 * row the claim stepped over that may become claimable without a
 * transaction telling (stops: not due yet, a dependency not in its state)
 */
static void
remember(ResumeSlot *s, const WlClaimed *c, int n, bool full, const WlQueueKey *stops,
		 int nstops)
{
	if (full)
		s->since_full = 0;
	else
		s->since_full++;
	if (n == 0 && full)
		memset(s->points, 0, sizeof(s->points));
	for (int i = 0; i < n; i++)
	{
		WlQueueKey	k = c[i].key;

		for (int j = 0; j < nstops; j++)
		{
			if (stops[j].priority == k.priority && wl_queue_key_cmp(&stops[j], &k) <= 0)
				k = before(&stops[j]);
		}
		move_point(s, &k);
	}
}

/* the rows told claimable a claim reads at most (more: it scans from the start) */
#define WL_LOWERED_MAX 64

/*
 * wl_claim_queue runs the claim of up to r->max_items workloads of r's
 * queue from this session's points there, or from the start of the queue
 * (see the top of this file for when), and moves the points.
 */
int
wl_claim_queue(WlClaimRequest *r, WlClaimed **out)
{
	const char *app = r->application_id ? r->application_id : "";
	ResumeSlot *s = slot_for(r->tenant_id, app, r->capabilities);
	int			want = r->max_items;
	WlQueueKey *points;
	WlQueueKey	lowered[WL_LOWERED_MAX];
	int			nlowered = 0;
	bool		lost = false;
	WlQueueKey *stops = NULL;
	int			nstops = 0;
	int			n;
	bool		full;

	/*
	 * Without the record of rows made claimable that the server's sessions
	 * share (the library not preloaded), a claim cannot know what became
	 * claimable behind its points: every claim scans from the start.
	 */
	if (fronts == NULL || !wl_store_ready_here())
	{
		r->points = NULL;
		return wl_store_claim(r, out);
	}
	/*
	 * The snapshot first, then what the record tells: a row the snapshot
	 * sees claimable was told before it was taken (store_ready.c).
	 */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	(void) wl_store_ready_read(r->tenant_id, app, GetActiveSnapshot(), wl_now(), &s->ready_seen,
							   lowered, WL_LOWERED_MAX, &nlowered, &lost);
	lower_slot(s, lowered, nlowered);
	points = points_of(s, &r->npoints);
	full = points == NULL || lost
		|| (s->since_full >= wl_claim_full_scan_every - 1
			&& (wl_claim_full_scan_every == 1 || wl_claim_full_scan_interval_ms <= 0
				|| full_stamp(s, false)));
	if (!full)
	{
		fronts_raise(s, points, r->npoints);
		lower(points, r->npoints, lowered, nlowered);
	}
	r->points = full ? NULL : points;
	r->snapshot = GetActiveSnapshot();
	r->lowered = lowered;
	r->nlowered = nlowered;
	r->stops = NULL;
	r->nstops = 0;
	r->on_take = front_taken;
	r->front = front_now;
	r->front_arg = s;
	n = wl_store_claim(r, out);
	PopActiveSnapshot();
	r->snapshot = NULL;
	full = full || r->scanned_from_start;
	stops = r->stops;
	nstops = r->nstops;
	if (!full && n < want)
	{
		WlClaimed  *more;
		int			m;

		r->points = NULL;
		r->max_items = want - n;
		r->stops = NULL;
		r->nstops = 0;
		m = wl_store_claim(r, &more);
		r->max_items = want;
		if (m > 0)
			*out = merged(*out, n, more, m);
		n += m;
		full = true;
		if (r->nstops > 0)
		{
			stops = stops ? repalloc(stops, sizeof(WlQueueKey) * (nstops + r->nstops)) :
				palloc(sizeof(WlQueueKey) * r->nstops);
			memcpy(stops + nstops, r->stops, sizeof(WlQueueKey) * r->nstops);
			nstops += r->nstops;
		}
	}
	r->points = NULL;
	r->lowered = NULL;
	r->nlowered = 0;
	r->on_take = NULL;
	r->front = NULL;
	if (full)
		(void) full_stamp(s, true);
	/*
	 * A claim without a plan told the front of each row as it took it
	 * (front_taken, no further than its stops); the statement, which knows
	 * nothing of the rows it stepped over, moves no front.
	 */
	remember(s, *out, n, full, stops, nstops);
	return n;
}
