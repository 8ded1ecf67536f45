/*
 * create_many.c: workload_create_many's batch (SPEC section 4, "Scheduling
 * and bulk work").  Each item is checked on its own, in a subtransaction
 * that writes nothing: the spec, membership (once per tenant and
 * application), the authorization snapshot (each distinct one verified
 * once).  The keys already used are looked up in one statement; then each
 * item is existing, a conflict, or new.  The new workloads without
 * dependencies are written together, a few statements for the whole batch;
 * one with dependencies takes create.c's path in its own subtransaction.
 * A refused item writes nothing.  Layer 3.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/memutils.h"

#include "authz.h"
#include "clock.h"
#include "create.h"
#include "create_many.h"
#include "crypto.h"
#include "deadline.h"
#include "errors.h"
#include "grants.h"
#include "jsonb_util.h"
#include "keys.h"
#include "store_ops.h"
#include "transition.h"
#include "quota.h"

/* A tenant and application the batch named, and whether the caller may act in it. */
typedef struct Member
{
	char	   *tenant_id;
	char	   *application_id;
	bool		ok;
	char	   *channel;		/* its NOTIFY channel, once needed */
} Member;

typedef struct Batch
{
	WlCreateItem *items;
	int			n;
	WlNewWorkload *pending;		/* decided new, not yet written */
	int		   *pending_item;	/* the item each pending workload is */
	uint32	   *pending_key;	/* a hash of its tenant, application and key */
	int			npending;
	Member	   *members;
	int			nmembers;
	WlGrantMemo memo;
	TimestampTz now;
} Batch;

/* member: the batch's entry for a tenant and application, made (and decided) once */
static Member *
member(Batch *b, const char *tenant_id, const char *application_id)
{
	for (int i = 0; i < b->nmembers; i++)
	{
		if (strcmp(b->members[i].tenant_id, tenant_id) == 0 &&
			strcmp(b->members[i].application_id, application_id) == 0)
			return &b->members[i];
	}
	b->members[b->nmembers].tenant_id = pstrdup(tenant_id);
	b->members[b->nmembers].application_id = pstrdup(application_id);
	b->members[b->nmembers].ok = wl_authz_member(tenant_id, application_id);
	b->members[b->nmembers].channel = NULL;
	return &b->members[b->nmembers++];
}

static uint32
key_hash(const WlSpec *s)
{
	char	   *k = psprintf("%s:%s:%s", s->tenant_id, s->application_id, s->idempotency_key);

	return hash_bytes((const unsigned char *) k, strlen(k));
}

/*
 * pending_same_key: the pending workload created under this spec's key
 * earlier in the batch, or -1.
 */
static int
pending_same_key(Batch *b, const WlSpec *s, uint32 h)
{
	for (int i = 0; i < b->npending; i++)
	{
		const WlSpec *p = b->pending[i].spec;

		if (b->pending_key[i] == h && strcmp(p->idempotency_key, s->idempotency_key) == 0 &&
			strcmp(p->tenant_id, s->tenant_id) == 0 &&
			strcmp(p->application_id, s->application_id) == 0)
			return i;
	}
	return -1;
}

/*
 * check checks one item without writing: the spec, membership and the
 * snapshot; derives its id.  Raises the item's refusal.
 */
static void
check(Batch *b, WlCreateItem *it, Jsonb *spec_json)
{
	WlSpec	   *spec = &it->spec;

	wl_spec_parse(spec_json, spec);
	if (!member(b, spec->tenant_id, spec->application_id)->ok)
		wl_refuse(WL_E_UNAUTHORIZED,
				  errdetail("Role \"%s\" may not act in tenant \"%s\", application \"%s\".",
							wl_authz_caller()->role, spec->tenant_id, spec->application_id));
	it->chain = wl_grant_check_snapshot_memo(spec, &b->memo);
	it->input_hash = wl_jsonb_hash(spec->input);
	it->workload_id = wl_workload_id(spec->tenant_id, spec->application_id,
									 spec->idempotency_key, spec->definition_revision,
									 it->input_hash);
	it->outcome = WL_CREATE_CREATED;
}

/* refuse marks an item refused (nothing of it was written) */
static void
refuse(WlCreateItem *it, WlErr err)
{
	it->outcome = WL_CREATE_REFUSED;
	it->err = err;
	it->workload_id = NULL;
	it->doc = NULL;
	it->full = false;
}

/*
 * place decides a checked item by its key: found (the workload an earlier
 * call created under it, with its not_before) makes it existing, or a
 * conflict; so does an earlier item of this batch with the same key.  A
 * new item without dependencies joins the pending workloads; one with
 * dependencies is marked for create.c's path.
 */
static void
place(Batch *b, WlCreateItem *it, const char *found, TimestampTz found_not_before)
{
	WlSpec	   *spec = &it->spec;
	uint32		h;
	int			p;

	if (found != NULL)
	{
		if (wl_create_replays(spec, it->workload_id, found, found_not_before))
			it->outcome = WL_CREATE_EXISTING;
		else
			refuse(it, WL_E_IDEMPOTENCY_CONFLICT);
		return;
	}
	h = key_hash(spec);
	p = pending_same_key(b, spec, h);
	if (p >= 0)
	{
		const WlSpec *first = b->pending[p].spec;

		if (wl_create_replays(spec, it->workload_id, b->pending[p].workload_id,
							  first->has_not_before ? first->not_before : 0))
			it->outcome = WL_CREATE_EXISTING;
		else
			refuse(it, WL_E_IDEMPOTENCY_CONFLICT);
		return;
	}
	if (spec->ndeps > 0 || !wl_store_writes_batched())
	{
		it->full = true;
		return;
	}
	if (wl_quota_admit(spec->tenant_id, VARSIZE(spec->input), &(char *) {NULL}) != WL_OK)
	{
		refuse(it, WL_E_QUOTA_EXCEEDED);
		return;
	}
	memset(&b->pending[b->npending], 0, sizeof(WlNewWorkload));
	b->pending[b->npending].spec = spec;
	b->pending[b->npending].workload_id = it->workload_id;
	b->pending[b->npending].input_hash = it->input_hash;
	b->pending[b->npending].grant_ids = it->chain;	/* the snapshot's chain until flushed */
	b->pending_item[b->npending] = it - b->items;
	b->pending_key[b->npending] = h;
	b->npending++;
}

/* full_create creates an item with dependencies through create.c. */
static void
full_create(Batch *b, WlCreateItem *it, Jsonb *spec_json)
{
	it->doc = wl_create(&it->spec);
}

/* err_of: the refusal an error is, or WL_OK when it is not one of ours. */
static WlErr
err_of(ErrorData *e)
{
	for (int i = 1; i < WL_E_END; i++)
	{
		if (wl_errors[i].sqlerrcode == e->sqlerrcode)
			return (WlErr) i;
	}
	return WL_OK;
}

/* isolated's arguments, for wl_isolated */
typedef struct Isolated
{
	Batch	   *b;
	WlCreateItem *it;
	Jsonb	   *spec_json;
	void		(*fn) (Batch *, WlCreateItem *, Jsonb *);
} Isolated;

static void
isolated_run(void *arg)
{
	Isolated   *i = arg;

	i->fn(i->b, i->it, i->spec_json);
}

/*
 * isolated runs fn for one item in a subtransaction (wl_isolated).  An error
 * that is a refusal rolls the subtransaction back (whatever fn wrote is
 * gone) and marks the item refused; any other error is thrown on.
 */
static void
isolated(Batch *b, WlCreateItem *it, Jsonb *spec_json,
		 void (*fn) (Batch *, WlCreateItem *, Jsonb *))
{
	Isolated	i = {b, it, spec_json, fn};
	int			npending = b->npending;
	ErrorData  *e = wl_isolated(isolated_run, &i);
	WlErr		err;

	if (e == NULL)
		return;
	err = err_of(e);
	if (err == WL_OK)
		ReThrowError(e);
	FreeErrorData(e);
	b->npending = npending;
	refuse(it, err);
}

/* channel: the NOTIFY channel of a spec's tenant and application, made once */
static const char *
channel(Batch *b, const WlSpec *s)
{
	Member	   *m = member(b, s->tenant_id, s->application_id);

	if (m->channel == NULL)
		m->channel = wl_keys_channel(s->tenant_id, s->application_id);
	return m->channel;
}

/* recheck: an item whose key a concurrent create took: existing, or a conflict */
static void
recheck(Batch *b, WlCreateItem *it, Jsonb *spec_json)
{
	if (wl_create_existing(&it->spec, it->workload_id) == NULL)
		elog(ERROR, "workload \"%s\" not visible after create", it->workload_id);
	it->outcome = WL_CREATE_EXISTING;
}

/*
 * flush writes the pending workloads: each gets its creation sequence, its
 * run authority, READY due at the later of now and not_before, its
 * deadline; all are written together, then each wakes its channel.
 */
static void
flush(Batch *b)
{
	const char *role = wl_authz_caller()->role;
	int			n = b->npending;

	const WlSpec **specs;
	const char **ids;
	Jsonb	  **authorities;
	Jsonb	   *last_snap = NULL;
	Jsonb	   *last_stored = NULL;

	if (n == 0)
		return;
	specs = palloc(sizeof(WlSpec *) * n);
	ids = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		specs[i] = b->pending[i].spec;
		ids[i] = b->pending[i].workload_id;
	}
	authorities = wl_grant_run_authorities(specs, ids, n);
	for (int i = 0; i < n; i++)
	{
		WlNewWorkload *w = &b->pending[i];
		const WlSpec *s = w->spec;
		Jsonb	   *authority = authorities[i];

		w->seq = wl_store_next_seq();
		w->grant_ids = wl_create_grant_ids(authority, w->grant_ids);
		w->run_authority = authority;	/* already in stored form */
		/* a batch's items mostly present one snapshot: store its form once */
		if (last_snap == NULL || VARSIZE(last_snap) != VARSIZE(s->authorization_snapshot) ||
			memcmp(last_snap, s->authorization_snapshot, VARSIZE(last_snap)) != 0)
		{
			last_snap = s->authorization_snapshot;
			last_stored = wl_grant_stored_form(last_snap);
		}
		w->authorization_snapshot = last_stored;
		w->actor = psprintf("%s:%s", s->requested_kind, s->requested_id);
		w->first.state = WL_READY;
		w->first.authority_expires_at = wl_grant_lapses_at(s->authorization_snapshot, authority);
		w->first.created_at = w->first.state_entered_at = b->now;
		w->first.next_attempt_at = s->has_not_before && s->not_before > b->now ?
			s->not_before : b->now;
		w->first.timeouts = s->timeout_ms;
		wl_state_require(w->workload_id, WL_CREATED, WL_READY);
		wl_deadline_set(&w->first, WL_CREATED);
	}
	wl_store_create_many(b->pending, n, b->now, role);
	b->npending = 0;
	for (int i = 0; i < n; i++)
	{
		WlNewWorkload *w = &b->pending[i];
		WlCreateItem *it = &b->items[b->pending_item[i]];

		if (w->written)
		{
			wl_quota_written(w->spec->tenant_id, VARSIZE(w->spec->input));
			wl_transition_ready_notify(channel(b, w->spec), w->workload_id);
		}
		else
		{
			wl_quota_unadmit(w->spec->tenant_id, VARSIZE(w->spec->input));
			isolated(b, it, NULL, recheck);
		}
	}
}

/*
 * decide_all decides every item: each is checked on its own (spec,
 * membership, snapshot); the keys already used are looked up in one
 * statement; then each is placed by its key, in order.  Items with
 * dependencies are created as they come, after what is pending.
 */
static void
decide_all(Batch *b, Jsonb **specs)
{
	int			n = b->n;
	char	  **t = palloc(sizeof(char *) * (n + 1));
	char	  **a = palloc(sizeof(char *) * (n + 1));
	char	  **k = palloc(sizeof(char *) * (n + 1));
	char	  **found = palloc(sizeof(char *) * (n + 1));
	TimestampTz *found_nb = palloc(sizeof(TimestampTz) * (n + 1));
	int		   *checked = palloc(sizeof(int) * (n + 1));
	int			nchecked = 0;

	for (int i = 0; i < n; i++)
	{
		WlCreateItem *it = &b->items[i];

		memset(it, 0, sizeof(WlCreateItem));
		isolated(b, it, specs[i], check);
		if (it->err != WL_OK)
			continue;
		t[nchecked] = it->spec.tenant_id;
		a[nchecked] = it->spec.application_id;
		k[nchecked] = it->spec.idempotency_key;
		checked[nchecked++] = i;
	}
	wl_store_idempotent_many(t, a, k, nchecked, found, found_nb);
	for (int c = 0; c < nchecked; c++)
	{
		WlCreateItem *it = &b->items[checked[c]];

		place(b, it, found[c], found_nb[c]);
		if (it->full)
		{
			/* what it depends on may be pending: write that first */
			flush(b);
			isolated(b, it, specs[checked[c]], full_create);
		}
	}
	flush(b);
}

/* documents reads the documents of the items that stand, as they are now, in one statement */
static void
documents(WlCreateItem *items, int n)
{
	char	  **ids = palloc(sizeof(char *) * (n + 1));
	char	  **tenants = palloc(sizeof(char *) * (n + 1));
	int		   *doc_item = palloc(sizeof(int) * (n + 1));
	int			ndocs = 0;
	Jsonb	  **docs;

	for (int i = 0; i < n; i++)
	{
		if (items[i].err != WL_OK || items[i].doc != NULL)
			continue;
		ids[ndocs] = items[i].workload_id;
		tenants[ndocs] = items[i].spec.tenant_id;
		doc_item[ndocs++] = i;
	}
	docs = wl_store_documents(ids, tenants, ndocs);
	for (int k = 0; k < ndocs; k++)
	{
		if (docs[k] == NULL)
			elog(ERROR, "workload \"%s\" not visible after create", ids[k]);
		items[doc_item[k]].doc = docs[k];
	}
}

/*
 * wl_create_many decides and creates n specs (SPEC section 4): items[i]
 * says what became of specs[i].  Raises only what is not one item's
 * refusal.
 */
void
wl_create_many(Jsonb **specs, int n, WlCreateItem *items)
{
	Batch		b;

	memset(&b, 0, sizeof(b));
	b.items = items;
	b.n = n;
	b.memo.cxt = CurrentMemoryContext;
	b.now = wl_now();
	b.pending = palloc0(sizeof(WlNewWorkload) * (n + 1));
	b.pending_item = palloc0(sizeof(int) * (n + 1));
	b.pending_key = palloc0(sizeof(uint32) * (n + 1));
	b.members = palloc0(sizeof(Member) * (n + 1));
	decide_all(&b, specs);
	documents(items, n);
}
