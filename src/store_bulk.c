/*
 * store_bulk.c: typed wrappers over the statements of bulk work: the specs,
 * rows, queue rows and events of a batch of new workloads (one statement per
 * table group, whatever the batch's size), their documents, and the
 * dead-lettered workloads a redrive takes.  Layer 2: it writes what it is
 * told and decides nothing.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "jsonb_util.h"
#include "spec.h"
#include "store.h"
#include "store_ops.h"

/* array_text: a text[] as its text form, which the statement casts back */
static Datum
array_text(ArrayType *a)
{
	static FmgrInfo out;
	static bool ready = false;

	if (!ready)
	{
		fmgr_info_cxt(F_ARRAY_OUT, &out, TopMemoryContext);
		ready = true;
	}
	return CStringGetTextDatum(OutputFunctionCall(&out, PointerGetDatum(a)));
}

/* column: n values and their nulls, to become one array parameter */
typedef struct Col
{
	Datum	   *d;
	bool	   *nl;
} Col;

static void
cols_alloc(Col *c, int ncols, int n)
{
	for (int i = 0; i < ncols; i++)
	{
		c[i].d = palloc0(sizeof(Datum) * (n + 1));
		c[i].nl = palloc0(sizeof(bool) * (n + 1));
	}
}

static Datum
col_array(Col *c, int n, Oid type)
{
	return PointerGetDatum(wl_array_of(c->d, c->nl, n, type));
}

#define SPEC_COLS 23
/* the parameter (0-based) and element type of each per-row column of P_CREATE_SPECS_MANY */
static const int spec_param[SPEC_COLS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
16, 17, 18, 21, 22, 23, 24};
static const Oid spec_type[SPEC_COLS] = {TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, JSONBOID, TEXTOID, INT4OID, INT8OID,
	INT8OID, TEXTOID, TEXTOID, JSONBOID, JSONBOID, JSONBOID, TEXTOID, TIMESTAMPTZOID};

/* by_key orders items by tenant, application and idempotency key */
static int
by_key(const void *a, const void *b, void *arg)
{
	const WlNewWorkload *w = arg;
	const WlSpec *x = w[*(const int *) a].spec;
	const WlSpec *y = w[*(const int *) b].spec;
	int			c = strcmp(x->tenant_id, y->tenant_id);

	if (c == 0)
		c = strcmp(x->application_id, y->application_id);
	if (c == 0)
		c = strcmp(x->idempotency_key, y->idempotency_key);
	return c;
}

/* spec_columns fills the per-row columns of P_CREATE_SPECS_MANY, row j being item order[j] */
static void
spec_columns(WlNewWorkload *w, int n, const int *order, Col *c)
{
	cols_alloc(c, SPEC_COLS, n);
	for (int j = 0; j < n; j++)
	{
		int			i = order[j];
		const WlSpec *s = w[i].spec;

		c[0].d[j] = CStringGetTextDatum(s->tenant_id);
		c[1].d[j] = Int64GetDatum(w[i].seq);
		c[2].d[j] = CStringGetTextDatum(w[i].workload_id);
		c[3].d[j] = CStringGetTextDatum(s->application_id);
		c[4].d[j] = CStringGetTextDatum(s->idempotency_key);
		c[5].d[j] = CStringGetTextDatum(s->environment);
		c[6].d[j] = CStringGetTextDatum(s->definition_id);
		c[7].d[j] = CStringGetTextDatum(s->definition_revision);
		c[8].d[j] = CStringGetTextDatum(s->trigger);
		c[9].d[j] = JsonbPGetDatum(s->input);
		c[10].d[j] = CStringGetTextDatum(w[i].input_hash);
		c[11].d[j] = JsonbPGetDatum(s->requested_by);
		c[12].d[j] = array_text(s->connection_scopes);
		c[13].d[j] = Int32GetDatum(s->policy.max_attempts);
		c[14].d[j] = Int64GetDatum(s->policy.initial_delay_ms);
		c[15].d[j] = Int64GetDatum(s->policy.max_delay_ms);
		c[16].d[j] = CStringGetTextDatum(s->backoff);
		c[17].d[j] = array_text(s->policy.retry_on);
		c[18].d[j] = JsonbPGetDatum(s->timeouts);
		c[19].d[j] = JsonbPGetDatum(s->completion_criteria);
		c[20].d[j] = PointerGetDatum(s->governing_snapshots);
		c[20].nl[j] = s->governing_snapshots == NULL;
		c[21].d[j] = array_text(w[i].grant_ids);
		c[22].d[j] = TimestampTzGetDatum(s->not_before);
		c[22].nl[j] = !s->has_not_before;
	}
}

/* mark_written marks the item whose seq a written spec row has (seqs ascend in item order) */
static void
mark_written(WlNewWorkload *w, int n, int64 seq)
{
	int			lo = 0;
	int			hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (w[mid].seq == seq)
		{
			w[mid].written = true;
			return;
		}
		if (w[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
}

/*
 * put_specs writes the spec rows; marks which were written (a key already
 * taken is skipped).  Rows go in key order, so two batches that share keys
 * wait for each other's keys in the same order and never deadlock.
 */
static void
put_specs(WlNewWorkload *w, int n, const char *role)
{
	Col			c[SPEC_COLS];
	Datum		args[25];
	SPITupleTable *t;
	int		   *order = palloc(sizeof(int) * (n + 1));

	for (int i = 0; i < n; i++)
	{
		order[i] = i;
		w[i].written = false;
	}
	qsort_arg(order, n, sizeof(int), by_key, w);
	spec_columns(w, n, order, c);
	for (int k = 0; k < SPEC_COLS; k++)
		args[spec_param[k]] = col_array(&c[k], n, spec_type[k]);
	args[19] = Int32GetDatum(WL_CONTRACT_VERSION);
	args[20] = DirectFunctionCall1(namein, CStringGetDatum(role));
	t = wl_store_run(P_CREATE_SPECS_MANY, args, NULL, 0, SPI_OK_INSERT_RETURNING);
	for (uint64 r = 0; r < SPI_processed; r++)
		mark_written(w, n, wl_store_int(t, r, 1));
	SPI_freetuptable(t);
}

/* put_authorities writes the authority rows of the specs put_specs wrote */
static void
put_authorities(WlNewWorkload *w, int n)
{
	static const Oid type[4] = {TEXTOID, INT8OID, JSONBOID, JSONBOID};
	Col			c[4];
	Datum		args[4];
	int			k = 0;

	cols_alloc(c, 4, n);
	for (int i = 0; i < n; i++)
	{
		if (!w[i].written)
			continue;
		c[0].d[k] = CStringGetTextDatum(w[i].spec->tenant_id);
		c[1].d[k] = Int64GetDatum(w[i].seq);
		c[2].d[k] = JsonbPGetDatum(w[i].authorization_snapshot);
		c[3].d[k] = JsonbPGetDatum(w[i].run_authority);
		k++;
	}
	if (k == 0)
		return;
	for (int j = 0; j < 4; j++)
		args[j] = col_array(&c[j], k, type[j]);
	wl_store_run(P_CREATE_AUTHORITY_MANY, args, NULL, 0, SPI_OK_INSERT);
	if (SPI_processed != (uint64) k)
		elog(ERROR, "workload batch create wrote %llu authority rows of %d",
			 (unsigned long long) SPI_processed, k);
}

#define ROW_COLS 16

/* put_rows writes the workload rows, queue rows and events of the written items */
static void
put_rows(WlNewWorkload *w, int n, TimestampTz now, const char *role)
{
	static const Oid type[ROW_COLS] = {TEXTOID, TEXTOID, INT8OID, TEXTOID, INT4OID, TEXTOID,
		BOOLOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID,
	TEXTOID, TIMESTAMPTZOID};
	Col			c[ROW_COLS];
	Datum		args[20];
	int			k = 0;
	SPITupleTable *t;

	cols_alloc(c, ROW_COLS, n);
	for (int i = 0; i < n; i++)
	{
		const WlSpec *s = w[i].spec;
		int			j = 0;

		if (!w[i].written)
			continue;
		c[0].d[k] = CStringGetTextDatum(s->tenant_id);
		c[1].d[k] = CStringGetTextDatum(w[i].workload_id);
		c[2].d[k] = Int64GetDatum(w[i].seq);
		c[3].d[k] = CStringGetTextDatum(s->application_id);
		c[4].d[k] = Int32GetDatum(s->priority);
		c[5].d[k] = array_text(s->capability_snapshot);
		c[6].d[k] = BoolGetDatum(JsonContainerSize(&s->completion_criteria->root) > 0);
#define WL_TIMEOUT_COL(f) \
		c[7 + j].d[k] = Int64GetDatum(s->timeout_ms.f); \
		c[7 + j].nl[k] = !s->timeout_set[j]; \
		j++;
		WL_TIMEOUTS(WL_TIMEOUT_COL)
#undef WL_TIMEOUT_COL
		c[12].d[k] = TimestampTzGetDatum(w[i].first.next_attempt_at);
		c[13].d[k] = TimestampTzGetDatum(w[i].first.deadline_at);
		c[13].nl[k] = !w[i].first.has_deadline;
		c[14].d[k] = CStringGetTextDatum(w[i].actor);
		c[15].d[k] = TimestampTzGetDatum(w[i].first.authority_expires_at);
		c[15].nl[k] = w[i].first.authority_expires_at == 0;
		k++;
		{
			WlQueueKey	key = {s->priority, now, w[i].seq};
			TimestampTz due = w[i].first.next_attempt_at;

			wl_store_ready_claimable(s->tenant_id, s->application_id, &key, due > now ? due : 0);
		}
	}
	if (k == 0)
		return;
	for (int i = 0; i < 15; i++)
		args[i] = col_array(&c[i], k, type[i]);
	args[15] = TimestampTzGetDatum(now);
	args[16] = wl_catalog_state_datum(WL_READY);
	args[17] = wl_catalog_state_datum(WL_CREATED);
	args[18] = CStringGetTextDatum(role);
	args[19] = col_array(&c[15], k, type[15]);
	t = wl_store_run(P_CREATE_ROWS_MANY, args, NULL, 1, SPI_OK_SELECT);
	if (wl_store_int(t, 0, 1) != k)
		elog(ERROR, "workload batch create wrote %lld rows of %d",
			 (long long) wl_store_int(t, 0, 1), k);
	SPI_freetuptable(t);
}

/*
 * wl_store_create_many writes n new READY workloads without dependencies
 * (seq drawn, run authority signed, due time and deadline set): their specs
 * in one statement, then their rows, queue rows and CREATED and READY
 * events in another.  An item whose idempotency key a concurrent create took
 * after the caller looked is left unwritten (written = false).
 */
void
wl_store_create_many(WlNewWorkload *w, int n, TimestampTz now, const char *role)
{
	if (n == 0)
		return;
	put_specs(w, n, role);
	put_authorities(w, n);
	put_rows(w, n, now, role);
}

/* wl_store_documents: the documents of n workloads (ids[i] of tenants[i]); NULL for one not found. */
Jsonb **
wl_store_documents(char **ids, char **tenants, int n)
{
	Datum	   *di = palloc(sizeof(Datum) * (n + 1));
	Datum	   *dt = palloc(sizeof(Datum) * (n + 1));
	Jsonb	  **docs = palloc0(sizeof(Jsonb *) * (n + 1));
	Datum		args[2];
	SPITupleTable *t;

	if (n == 0)
		return docs;
	for (int i = 0; i < n; i++)
	{
		di[i] = CStringGetTextDatum(ids[i]);
		dt[i] = CStringGetTextDatum(tenants[i]);
	}
	args[0] = PointerGetDatum(wl_array_of(di, NULL, n, TEXTOID));
	args[1] = PointerGetDatum(wl_array_of(dt, NULL, n, TEXTOID));
	t = wl_store_run(P_DOC_MANY, args, NULL, 0, SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int64		k = wl_store_int(t, r, 1);

		if (k >= 1 && k <= n)
			docs[k - 1] = wl_store_jsonb(t, r, 2);
	}
	SPI_freetuptable(t);
	return docs;
}

/*
 * wl_store_idempotent_many is wl_store_idempotent for n keys (tenants[i],
 * apps[i], keys[i]): found[i] the workload created under it or NULL,
 * not_before[i] its spec's not_before (0 when none).
 */
void
wl_store_idempotent_many(char **tenants, char **apps, char **keys, int n, char **found,
						 TimestampTz *not_before)
{
	Datum	   *d[3];
	Datum		args[3];
	SPITupleTable *t;

	for (int c = 0; c < 3; c++)
		d[c] = palloc(sizeof(Datum) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		d[0][i] = CStringGetTextDatum(tenants[i]);
		d[1][i] = CStringGetTextDatum(apps[i]);
		d[2][i] = CStringGetTextDatum(keys[i]);
		found[i] = NULL;
		not_before[i] = 0;
	}
	if (n == 0)
		return;
	for (int c = 0; c < 3; c++)
		args[c] = PointerGetDatum(wl_array_of(d[c], NULL, n, TEXTOID));
	t = wl_store_run(P_IDEM_MANY, args, NULL, 0, SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int64		k = wl_store_int(t, r, 1);
		bool		isnull;

		if (k < 1 || k > n)
			elog(ERROR, "workload key lookup returned an unasked row");
		found[k - 1] = wl_store_text(t, r, 2);
		not_before[k - 1] = wl_store_ts(t, r, 3, &isnull);
		if (isnull)
			not_before[k - 1] = 0;
	}
	SPI_freetuptable(t);
}

/*
 * wl_store_dead_letters locks (skipping rows another transaction holds) and
 * returns up to lim DEAD_LETTER workloads of one tenant and application,
 * oldest first, of definition_id and last failure kind failure_kind when
 * these are not NULL.
 */
char **
wl_store_dead_letters(const char *tenant_id, const char *application_id,
					  const char *definition_id, const char *failure_kind, int lim, int *n)
{
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	SPITupleTable *t;
	char	  **ids;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = definition_id ? CStringGetTextDatum(definition_id) : (Datum) 0;
	nulls[2] = definition_id ? ' ' : 'n';
	args[3] = failure_kind ? CStringGetTextDatum(failure_kind) : (Datum) 0;
	nulls[3] = failure_kind ? ' ' : 'n';
	args[4] = Int32GetDatum(lim);
	args[5] = wl_catalog_state_datum(WL_DEAD_LETTER);
	t = wl_store_run(P_DEAD_LETTERS, args, nulls, 0, SPI_OK_SELECT);
	*n = (int) SPI_processed;
	ids = palloc(sizeof(char *) * (*n + 1));
	for (int i = 0; i < *n; i++)
		ids[i] = wl_store_text(t, i, 1);
	SPI_freetuptable(t);
	return ids;
}
