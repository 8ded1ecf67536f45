/*
 * store_meta.c: typed wrappers over the statements that read documents and
 * lists, keep the key material, revocations and tenant members, and scan
 * for maintenance work (expired leases, due deadlines, silent heartbeats,
 * retention).  Layer 2.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_ops.h"

static Datum
name_arg(const char *s)
{
	return DirectFunctionCall1(namein, CStringGetDatum(s));
}

/*
 * wl_store_document: the workload document (full adds attempts,
 * checkpoints, result, events, waits, compensations), or NULL when there is
 * none who may see.
 */
Jsonb *
wl_store_document(const char *workload_id, bool full, const WlCaller *who)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', 'n', 'n'};
	SPITupleTable *t;
	Jsonb	   *doc = NULL;
	const char *tenant = wl_store_tenant_of(workload_id);

	/* on Citus: read on the tenant's node only (none: there is no such workload) */
	if (tenant == NULL && wl_store_citus())
		return NULL;
	args[0] = CStringGetTextDatum(workload_id);
	args[1] = BoolGetDatum(who == NULL || who->admin);
	args[2] = name_arg(who && who->role ? who->role : "");
	if (tenant)
	{
		args[3] = CStringGetTextDatum(tenant);
		nulls[3] = ' ';
	}
	args[4] = wl_store_touch_arg(who, tenant, &nulls[4]);
	t = wl_store_run(full ? P_DOC_FULL : P_DOC, args, nulls, 1, SPI_OK_SELECT);
	if (SPI_processed > 0)
		doc = wl_store_jsonb(t, 0, 1);
	SPI_freetuptable(t);
	return doc;
}

/* wl_store_list: documents of one tenant and application (state NULL: any), best first. */
Jsonb **
wl_store_list(const char *tenant_id, const char *application_id, const WlState *state,
			  int lim, int *n)
{
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	SPITupleTable *t;
	Jsonb	  **docs;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	if (state)
		args[2] = wl_catalog_state_datum(*state);
	else
		nulls[2] = 'n';
	args[3] = Int32GetDatum(lim);
	t = wl_store_run(P_LIST, args, nulls, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	docs = palloc(sizeof(Jsonb *) * (*n + 1));
	for (int i = 0; i < *n; i++)
		docs[i] = wl_store_jsonb(t, i, 1);
	SPI_freetuptable(t);
	return docs;
}

/* wl_store_history: a workload's events in order. */
WlEventRow *
wl_store_history(const char *workload_id, int *n)
{
	Datum		args[2];
	char		nulls[2] = {' ', 'n'};
	SPITupleTable *t;
	WlEventRow *ev;
	const char *tenant = wl_store_tenant_of(workload_id);

	args[0] = CStringGetTextDatum(workload_id);
	if (tenant)
	{
		args[1] = CStringGetTextDatum(tenant);
		nulls[1] = ' ';
	}
	t = wl_store_run(P_HISTORY, args, nulls, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	ev = palloc0(sizeof(WlEventRow) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		bool		isnull;
		Datum		d;

		ev[i].sequence = wl_store_int(t, i, 1);
		ev[i].event_type = wl_store_text(t, i, 2);
		d = wl_store_datum(t, i, 3, &isnull);
		ev[i].has_from = !isnull;
		if (!isnull)
			ev[i].from = wl_catalog_state_from_oid(DatumGetObjectId(d));
		ev[i].to = wl_catalog_state_from_oid(DatumGetObjectId(wl_store_datum(t, i, 4, &isnull)));
		ev[i].actor = wl_store_text(t, i, 5);
		ev[i].at = wl_store_ts(t, i, 6, &isnull);
		ev[i].evidence = wl_store_jsonb(t, i, 7);
	}
	SPI_freetuptable(t);
	return ev;
}

/* wl_store_stats: what an operator looks at first, for one tenant and application. */
Jsonb *
wl_store_stats(const char *tenant_id, const char *application_id, TimestampTz now)
{
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', 'n'};
	SPITupleTable *t;
	Jsonb	   *stats;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = TimestampTzGetDatum(now);
	args[3] = (Datum) 0;
	t = wl_store_run(P_STATS, args, nulls, 1, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "workload statistics returned no row");
	stats = wl_store_jsonb(t, 0, 1);
	SPI_freetuptable(t);
	return stats;
}

/* ---- key material ---- */

static void
key_read(SPITupleTable *t, WlKey *k, int secret_col, int retired_col)
{
	bool		isnull;

	k->secret = DatumGetByteaPCopy(wl_store_datum(t, 0, secret_col, &isnull));
	k->retired = retired_col > 0 && wl_store_bool(t, 0, retired_col);
}

/* wl_store_key_current: the newest key that is not retired, or false. */
bool
wl_store_key_current(WlKey *k)
{
	SPITupleTable *t = wl_store_run(P_KEY_CURRENT, NULL, NULL, 1, SPI_OK_SELECT);
	bool		found = SPI_processed > 0;

	if (found)
	{
		k->key_id = wl_store_text(t, 0, 1);
		key_read(t, k, 2, 0);
	}
	SPI_freetuptable(t);
	return found;
}

/* wl_store_key_get: the key key_id (retired or not), or false. */
bool
wl_store_key_get(const char *key_id, WlKey *k)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		found;

	args[0] = CStringGetTextDatum(key_id);
	t = wl_store_run(P_KEY_GET, args, NULL, 1, SPI_OK_SELECT);
	found = SPI_processed > 0;
	if (found)
	{
		k->key_id = pstrdup(key_id);
		key_read(t, k, 1, 2);
	}
	SPI_freetuptable(t);
	return found;
}

void
wl_store_key_put(const char *key_id, bytea *secret, TimestampTz at)
{
	Datum		args[3];

	args[0] = CStringGetTextDatum(key_id);
	args[1] = PointerGetDatum(secret);
	args[2] = TimestampTzGetDatum(at);
	wl_store_run(P_KEY_PUT, args, NULL, 0, SPI_OK_INSERT);
}

/* wl_store_key_retire retires a key that is not retired yet; false when there is none. */
bool
wl_store_key_retire(const char *key_id, TimestampTz at)
{
	Datum		args[2];

	args[0] = CStringGetTextDatum(key_id);
	args[1] = TimestampTzGetDatum(at);
	wl_store_run(P_KEY_RETIRE, args, NULL, 0, SPI_OK_UPDATE);
	return SPI_processed == 1;
}

/* wl_store_keys_other: how many keys other than key_id are not retired. */
int64
wl_store_keys_other(const char *key_id)
{
	Datum		args[1];
	SPITupleTable *t;
	int64		n;

	args[0] = CStringGetTextDatum(key_id);
	t = wl_store_run(P_KEY_OTHERS, args, NULL, 1, SPI_OK_SELECT);
	n = wl_store_int(t, 0, 1);
	SPI_freetuptable(t);
	return n;
}

/*
 * wl_store_grant_chain: the grant, its parent and every grant they derive
 * from by the recorded lineage (sorted ids), and whether any is revoked.
 */
ArrayType *
wl_store_grant_chain(const char *grant_id, const char *parent, bool *revoked)
{
	Datum		d[2];
	bool		nl[2] = {false, parent == NULL};

	d[0] = CStringGetTextDatum(grant_id);
	d[1] = parent ? CStringGetTextDatum(parent) : (Datum) 0;
	return wl_store_grants_chain(wl_array_of(d, nl, 2, TEXTOID), revoked);
}

/*
 * wl_store_grants_chain: the grants ids (a text array), and every grant they
 * derive from by the recorded lineage (sorted ids), and whether any is
 * revoked.
 */
ArrayType *
wl_store_grants_chain(ArrayType *ids, bool *revoked)
{
	Datum		args[1];
	SPITupleTable *t;
	ArrayType  *chain;

	args[0] = PointerGetDatum(ids);
	t = wl_store_run(P_GRANT_CHAIN, args, NULL, 1, SPI_OK_SELECT);
	*revoked = wl_store_bool(t, 0, 1);
	chain = wl_store_array(t, 0, 2);
	SPI_freetuptable(t);
	return chain;
}

/* wl_store_lineage_put records a grant's parent (and tenant); a grant id already known keeps its record. */
void
wl_store_lineage_put(const char *grant_id, const char *parent, const char *tenant_id,
					 const char *application_id, TimestampTz at)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	args[0] = CStringGetTextDatum(grant_id);
	args[1] = parent ? CStringGetTextDatum(parent) : (Datum) 0;
	nulls[1] = parent ? ' ' : 'n';
	args[2] = CStringGetTextDatum(tenant_id);
	args[3] = CStringGetTextDatum(application_id);
	args[4] = TimestampTzGetDatum(at);
	/*
	 * on Citus a write to a reference table is a two-phase commit on every
	 * node: a grant already recorded (the common case: one grant creates
	 * many workloads) is read from this node's copy and not written again
	 */
	if (wl_store_citus())
	{
		SPITupleTable *t = wl_store_run(P_CITUS_LINEAGE_HAS, args, NULL, 1, SPI_OK_SELECT);
		bool		known = SPI_processed > 0;

		SPI_freetuptable(t);
		if (known)
			return;
	}
	wl_store_run(P_LINEAGE_PUT, args, nulls, 0, SPI_OK_INSERT);
}

void
wl_store_revoke(const char *grant_id, TimestampTz at, const char *role)
{
	Datum		args[3];

	args[0] = CStringGetTextDatum(grant_id);
	args[1] = TimestampTzGetDatum(at);
	args[2] = name_arg(role);
	wl_store_run(P_REVOKE_PUT, args, NULL, 0, SPI_OK_INSERT);
}

/* wl_store_revocations_unswept: up to limit revocations whose sweep is not done, oldest first. */
int
wl_store_revocations_unswept(int limit, WlRevocation **out)
{
	Datum		args[1];
	SPITupleTable *t;
	int			n;

	args[0] = Int32GetDatum(limit);
	t = wl_store_run(P_REVOKED_UNSWEPT, args, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	*out = palloc(sizeof(WlRevocation) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		(*out)[i].grant_id = wl_store_text(t, i, 1);
		(*out)[i].sweep_after = wl_store_text(t, i, 2);
	}
	SPI_freetuptable(t);
	return n;
}

/*
 * wl_store_revoked_slice looks at the next `limit` workloads after `after`
 * (by id): *scanned of them were there, the last id is *last (NULL when
 * none), and the ids returned (*n) are those not yet final whose chain
 * holds grant_id.
 */
char **
wl_store_revoked_slice(const char *grant_id, const char *after, int limit, char **last,
					   int *scanned, int *n)
{
	Datum		args[3];
	SPITupleTable *t;
	ArrayType  *ids;

	args[0] = CStringGetTextDatum(grant_id);
	args[1] = CStringGetTextDatum(after);
	args[2] = Int32GetDatum(limit);
	t = wl_store_run(P_REVOKED_SLICE, args, NULL, 1, SPI_OK_SELECT);
	*last = wl_store_text(t, 0, 1);
	*scanned = (int) wl_store_int(t, 0, 2);
	ids = wl_store_array(t, 0, 3);
	SPI_freetuptable(t);
	return wl_array_items(ids, n);
}

/* wl_store_revocation_progress records how far a sweep has come (done: finished, at). */
void
wl_store_revocation_progress(const char *grant_id, const char *after, bool done, TimestampTz at)
{
	Datum		args[3];
	char		nulls[3] = {' ', ' ', done ? ' ' : 'n'};

	args[0] = CStringGetTextDatum(grant_id);
	args[1] = CStringGetTextDatum(after);
	args[2] = TimestampTzGetDatum(at);
	wl_store_run(P_REVOKED_PROGRESS, args, nulls, 0, SPI_OK_UPDATE);
}

/* wl_store_channel_secret: the channel secret, or NULL when none was made yet. */
bytea *
wl_store_channel_secret(void)
{
	SPITupleTable *t = wl_store_run(P_CHANNEL_SECRET, NULL, NULL, 1, SPI_OK_SELECT);
	bytea	   *secret = NULL;
	bool		isnull;

	if (SPI_processed > 0)
		secret = DatumGetByteaPCopy(wl_store_datum(t, 0, 1, &isnull));
	SPI_freetuptable(t);
	return secret;
}

/* wl_store_channel_pairs: the rotated channel secrets (*out, in the caller's memory); how many. */
int
wl_store_channel_pairs(WlChannelPair **out)
{
	SPITupleTable *t = wl_store_run(P_CHANNEL_PAIRS, NULL, NULL, 0, SPI_OK_SELECT);
	int			n = (int) SPI_processed;
	bool		isnull;

	*out = palloc(sizeof(WlChannelPair) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		(*out)[i].tenant_id = wl_store_text(t, i, 1);
		(*out)[i].application_id = wl_store_text(t, i, 2);
		(*out)[i].secret = DatumGetByteaPCopy(wl_store_datum(t, i, 3, &isnull));
	}
	SPI_freetuptable(t);
	return n;
}

/* wl_store_channel_pair_put sets a tenant's and application's own channel secret. */
void
wl_store_channel_pair_put(const char *tenant_id, const char *application_id, bytea *secret,
						  TimestampTz at)
{
	Datum		args[4];

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = PointerGetDatum(secret);
	args[3] = TimestampTzGetDatum(at);
	wl_store_run(P_CHANNEL_PAIR_PUT, args, NULL, 0, SPI_OK_INSERT);
}

/* wl_store_channel_secrets_rel: the table of rotated channel secrets. */
Oid
wl_store_channel_secrets_rel(void)
{
	Oid			rel = get_relname_relid("channel_secrets", wl_catalog_store_schema());

	if (!OidIsValid(rel))
		elog(ERROR, "table workload.channel_secrets not found");
	return rel;
}

void
wl_store_channel_secret_put(bytea *secret, TimestampTz at)
{
	Datum		args[2];

	args[0] = PointerGetDatum(secret);
	args[1] = TimestampTzGetDatum(at);
	wl_store_run(P_CHANNEL_SECRET_PUT, args, NULL, 0, SPI_OK_INSERT);
}

/* wl_store_member: whether role (itself or through a role it belongs to) is a member. */
bool
wl_store_member(const char *role, const char *tenant_id, const char *application_id)
{
	Datum		args[3];
	SPITupleTable *t;
	bool		found;

	args[0] = name_arg(role);
	args[1] = CStringGetTextDatum(tenant_id);
	args[2] = CStringGetTextDatum(application_id);
	t = wl_store_run(P_MEMBER, args, NULL, 1, SPI_OK_SELECT);
	found = SPI_processed > 0;
	SPI_freetuptable(t);
	return found;
}

/* wl_store_member_put records a membership of the role (its OID; its name as it was then). */
void
wl_store_member_put(const char *role, Oid role_oid, const char *tenant_id,
					const char *application_id)
{
	Datum		args[4];

	args[0] = name_arg(role);
	args[1] = CStringGetTextDatum(tenant_id);
	args[2] = CStringGetTextDatum(application_id);
	args[3] = ObjectIdGetDatum(role_oid);
	wl_store_run(P_MEMBER_PUT, args, NULL, 0, SPI_OK_INSERT);
}

/* wl_store_member_del removes the role's membership; whether there was one. */
bool
wl_store_member_del(Oid role_oid, const char *tenant_id, const char *application_id)
{
	Datum		args[3];

	args[0] = ObjectIdGetDatum(role_oid);
	args[1] = CStringGetTextDatum(tenant_id);
	args[2] = CStringGetTextDatum(application_id);
	wl_store_run(P_MEMBER_DEL, args, NULL, 0, SPI_OK_DELETE);
	return SPI_processed > 0;
}

/*
 * wl_store_member_del_dropped removes the memberships recorded under the
 * name role whose role no longer exists; whether there were any.
 */
bool
wl_store_member_del_dropped(const char *role, const char *tenant_id, const char *application_id)
{
	Datum		args[3];
	SPITupleTable *t;
	int			n;
	bool		any = false;

	args[0] = name_arg(role);
	args[1] = CStringGetTextDatum(tenant_id);
	args[2] = CStringGetTextDatum(application_id);
	t = wl_store_run(P_MEMBER_DROPPED, args, NULL, 0, SPI_OK_SELECT);
	n = (int) SPI_processed;
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		del[3];

		del[0] = SPI_getbinval(t->vals[i], t->tupdesc, 1, &isnull);
		del[1] = args[1];
		del[2] = args[2];
		wl_store_run(P_MEMBER_DEL, del, NULL, 0, SPI_OK_DELETE);
		any = any || SPI_processed > 0;
	}
	SPI_freetuptable(t);
	return any;
}

/* wl_store_tenant_use counts a tenant's workloads not final and the bytes it stores (quota.c). */
void
wl_store_tenant_use(const char *tenant_id, int64 *active, int64 *bytes)
{
	Datum		args[1];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(tenant_id);
	t = wl_store_run(P_TENANT_USE, args, NULL, 1, SPI_OK_SELECT);
	*active = wl_store_int(t, 0, 1);
	*bytes = wl_store_int(t, 0, 2);
	SPI_freetuptable(t);
}

/* wl_store_tenant_schedules counts a tenant's schedules but the one named. */
int64
wl_store_tenant_schedules(const char *tenant_id, const char *application_id,
						  const char *schedule_id)
{
	Datum		args[3];
	SPITupleTable *t;
	int64		n;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = CStringGetTextDatum(schedule_id);
	t = wl_store_run(P_TENANT_SCHEDULES, args, NULL, 1, SPI_OK_SELECT);
	n = wl_store_int(t, 0, 1);
	SPI_freetuptable(t);
	return n;
}

/* ---- maintenance scans ---- */

/*
 * The workloads that hold a claim, read once for every held scan of a
 * maintenance pass (between wl_store_held_begin and wl_store_held_end, in
 * one transaction), else once a scan.  Reading them visits the run row of
 * every claim ended since the last read (runs_held_idx still lists it), so
 * a tick reads them once, not three times and again for every batch; and
 * as a parameter the planner takes them for a few rows whatever the
 * statistics of the run rows say (an InitPlan was taken for all of them on
 * a store whose statistics were made while it was empty, and the silent-
 * heartbeat scan then read every workload row).  A claim made since the
 * read is the next pass's; one ended since is passed over, as its row is
 * locked and tested again.
 */
static bool held_pass = false;
static LocalTransactionId held_lxid = InvalidLocalTransactionId;
static Datum held_seqs = (Datum) 0;

void
wl_store_held_begin(void)
{
	held_pass = true;
	held_lxid = MyProc->lxid;
	held_seqs = (Datum) 0;
}

void
wl_store_held_end(void)
{
	held_pass = false;
	held_seqs = (Datum) 0;
}

static Datum
held(void)
{
	bool		pass = held_pass && held_lxid == MyProc->lxid;
	SPITupleTable *t;
	bool		isnull;
	Datum		d;
	MemoryContext old;

	/* the statements as Citus runs them (citus_sql) do not read it */
	if (wl_store_citus())
		return PointerGetDatum(construct_empty_array(INT8OID));
	if (pass && held_seqs != (Datum) 0)
		return held_seqs;
	t = wl_store_run(P_HELD_SEQS, NULL, NULL, 1, SPI_OK_SELECT);
	d = SPI_getbinval(t->vals[0], t->tupdesc, 1, &isnull);
	old = MemoryContextSwitchTo(pass ? TopTransactionContext : CurrentMemoryContext);
	d = datumCopy(d, false, -1);
	MemoryContextSwitchTo(old);
	SPI_freetuptable(t);
	if (pass)
		held_seqs = d;
	return d;
}

/*
 * wl_store_expired: up to limit workloads whose lease expired by now that
 * who may touch, after the scan position `after` (workload_id "" at the
 * start), soonest first, locked SKIP LOCKED.
 */
int
wl_store_expired(TimestampTz now, const WlCaller *who, int limit, WlDue **out)
{
	Datum		args[5];

	if (wl_store_citus_distributed())
		return wl_store_citus_local_due(WL_LOCAL_EXPIRED, now, limit, out);
	args[0] = TimestampTzGetDatum(now);
	args[1] = Int32GetDatum(limit);
	args[2] = BoolGetDatum(who == NULL || who->admin);
	args[3] = name_arg(who && who->role ? who->role : "");
	args[4] = held();
	return wl_store_dues(wl_store_run(P_EXPIRED, args, NULL, 0, SPI_OK_SELECT), out);
}

/*
 * due_scan: one of the tick's scans that every node makes of its own rows
 * (plan on one node; on Citus, local over this node's shards): the first
 * limit due rows in fair order.
 */
static int
due_scan(WlPlanId plan, WlLocalScan local, TimestampTz now, int limit, WlDue **out)
{
	Datum		args[3];

	if (wl_store_citus_distributed())
		return wl_store_citus_local_due(local, now, limit, out);
	args[0] = TimestampTzGetDatum(now);
	args[1] = Int32GetDatum(limit);
	if (plan != P_DEADLINE_DUE && plan != P_CASCADES_DUE)
		args[2] = held();
	return wl_store_dues(wl_store_run(plan, args, NULL, 0, SPI_OK_SELECT), out);
}

/* wl_store_deadline_due: as wl_store_expired, for rows nobody holds whose deadline has come. */
int
wl_store_deadline_due(TimestampTz now, int limit, WlDue **out)
{
	return due_scan(P_DEADLINE_DUE, WL_LOCAL_DEADLINE, now, limit, out);
}

/*
 * wl_store_held_deadline_due: as wl_store_deadline_due, for rows holding a
 * claim (their deadline is not in the deadline index: see DEADLINE_DUE_SQL).
 */
int
wl_store_held_deadline_due(TimestampTz now, int limit, WlDue **out)
{
	return due_scan(P_HELD_DEADLINE_DUE, WL_LOCAL_HELD_DEADLINE, now, limit, out);
}

/*
 * wl_store_cascades_due: the workloads whose cascades a maintenance pass
 * left for the next (workload.cascades), oldest first, in fair order.
 */
int
wl_store_cascades_due(int limit, WlDue **out)
{
	return due_scan(P_CASCADES_DUE, WL_LOCAL_CASCADES, wl_now(), limit, out);
}

/* wl_store_heartbeat_due: as wl_store_expired, for claims silent for longer than heartbeat_ms. */
int
wl_store_heartbeat_due(TimestampTz now, int limit, WlDue **out)
{
	return due_scan(P_HEARTBEAT_DUE, WL_LOCAL_HEARTBEAT, now, limit, out);
}

/*
 * wl_store_purge deletes one bounded batch of finished workloads: those that
 * SUCCEEDED or were CANCELLED, then (include_dead_letter) dead letters, up to
 * batch in all; returns how many.
 */
uint64
wl_store_purge(TimestampTz before, int batch, bool include_dead_letter)
{
	Datum		args[2];
	uint64		done;

	if (wl_store_citus_distributed())
		return wl_store_citus_local_purge(before, batch, include_dead_letter);
	args[0] = TimestampTzGetDatum(before);
	args[1] = Int32GetDatum(batch);
	wl_store_run(P_PURGE, args, NULL, 0, SPI_OK_DELETE);
	done = SPI_processed;
	if (include_dead_letter && done < (uint64) batch)
	{
		args[1] = Int32GetDatum(batch - (int) done);
		wl_store_run(P_PURGE_DEAD, args, NULL, 0, SPI_OK_DELETE);
		done += SPI_processed;
	}
	return done;
}

/*
 * wl_store_citus_distribute runs workload.citus_distribute_tables() (Citus:
 * reference and distributed tables) with the raw-write guard open, so that
 * Citus may copy the rows this node holds into its own shard placements.
 */
Jsonb *
wl_store_citus_distribute(void)
{
	SPITupleTable *t = wl_store_run(P_CITUS_DISTRIBUTE, NULL, NULL, 0, SPI_OK_SELECT);

	return wl_store_jsonb(t, 0, 1);
}
