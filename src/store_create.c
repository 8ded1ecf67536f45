/*
 * store_create.c: typed wrappers over the statements that create a
 * workload (idempotency lookup, spec, row, dependencies) and read the
 * dependency graph (a dependency's state, unmet dependencies, dependents
 * waiting on a final state).  Layer 2: it writes what it is told.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "jsonb_util.h"
#include "store.h"
#include "store_ops.h"

/*
 * wl_store_idempotent: the workload already created under this key, or NULL;
 * *not_before its spec's not_before (0 when it has none).
 */
char *
wl_store_idempotent(const char *tenant_id, const char *application_id,
					const char *idempotency_key, TimestampTz *not_before)
{
	bool		isnull;

	Datum		args[3];
	SPITupleTable *t;
	char	   *found = NULL;

	args[0] = CStringGetTextDatum(tenant_id);
	args[1] = CStringGetTextDatum(application_id);
	args[2] = CStringGetTextDatum(idempotency_key);
	t = wl_store_run(P_IDEM, args, NULL, 1, SPI_OK_SELECT);
	*not_before = 0;
	if (SPI_processed > 0)
	{
		found = wl_store_text(t, 0, 1);
		*not_before = wl_store_ts(t, 0, 2, &isnull);
		if (isnull)
			*not_before = 0;
	}
	SPI_freetuptable(t);
	return found;
}

/*
 * wl_store_spec_put writes the spec row and its authority row beside it;
 * false (nothing written) when a concurrent create won the key.
 */
bool
wl_store_spec_put(const WlSpec *spec, const char *workload_id, int64 seq,
				  const char *input_hash, const char *role, Jsonb *run_authority,
				  ArrayType *grant_ids)
{
	Datum		a[26];
	char		nulls[26];
	bool		written;

	memset(nulls, ' ', sizeof(nulls));
	a[0] = CStringGetTextDatum(workload_id);
	a[1] = CStringGetTextDatum(spec->tenant_id);
	a[2] = CStringGetTextDatum(spec->application_id);
	a[3] = CStringGetTextDatum(spec->idempotency_key);
	a[4] = CStringGetTextDatum(spec->environment);
	a[5] = CStringGetTextDatum(spec->definition_id);
	a[6] = CStringGetTextDatum(spec->definition_revision);
	a[7] = CStringGetTextDatum(spec->trigger);
	a[8] = JsonbPGetDatum(spec->input);
	a[9] = CStringGetTextDatum(input_hash);
	a[10] = JsonbPGetDatum(spec->requested_by);
	a[11] = PointerGetDatum(spec->connection_scopes);
	a[12] = Int32GetDatum(spec->policy.max_attempts);
	a[13] = Int64GetDatum(spec->policy.initial_delay_ms);
	a[14] = Int64GetDatum(spec->policy.max_delay_ms);
	a[15] = CStringGetTextDatum(spec->backoff);
	a[16] = PointerGetDatum(spec->policy.retry_on);
	a[17] = JsonbPGetDatum(spec->timeouts);
	a[18] = JsonbPGetDatum(spec->dependencies);
	a[19] = JsonbPGetDatum(spec->completion_criteria);
	a[20] = PointerGetDatum(spec->governing_snapshots);
	if (spec->governing_snapshots == NULL)
		nulls[20] = 'n';
	a[21] = Int32GetDatum(WL_CONTRACT_VERSION);
	a[22] = DirectFunctionCall1(namein, CStringGetDatum(role));
	a[23] = Int64GetDatum(seq);
	a[24] = PointerGetDatum(grant_ids);
	a[25] = wl_store_ts_arg(spec->has_not_before ? spec->not_before : 0, &nulls[25]);
	if (wl_store_citus())
	{
		wl_store_run(P_SPEC_PUT, a, nulls, 0, SPI_OK_INSERT);
		written = SPI_processed == 1;
	}
	else
	{
		SPITupleTable *t = wl_store_run(P_SPEC_PUT_AT, a, nulls, 0, SPI_OK_INSERT_RETURNING);
		bool		isnull;

		written = SPI_processed == 1;
		/* where its queue row will say it is (store_memo.c) */
		if (written)
			wl_store_memo_spec(seq, (ItemPointer) DatumGetPointer(SPI_getbinval(t->vals[0], t->tupdesc, 1,
																	   &isnull)));
		SPI_freetuptable(t);
	}
	if (written)
	{
		Datum		b[4] = {a[1], Int64GetDatum(seq), JsonbPGetDatum(spec->authorization_snapshot),
		JsonbPGetDatum(run_authority)};

		wl_store_run(P_AUTHORITY_PUT, b, NULL, 0, SPI_OK_INSERT);
	}
	return written;
}

/*
 * wl_store_next_seq draws a new workload's creation sequence: the key its
 * spec, events, attempts and checkpoints are stored under.
 */
int64
wl_store_next_seq(void)
{
	return nextval_internal(wl_catalog_workload_seq(), false);
}

void
wl_store_dependency_put(const char *tenant_id, const char *workload_id, const char *depends_on,
						WlState required)
{
	Datum		d[4];

	d[0] = CStringGetTextDatum(workload_id);
	d[1] = CStringGetTextDatum(depends_on);
	d[2] = wl_catalog_state_datum(required);
	d[3] = CStringGetTextDatum(tenant_id);
	wl_store_run(P_DEP_PUT, d, NULL, 0, SPI_OK_INSERT);
}

/* dep_moved reads a P_DEP_STATE row's state (into a WlState) and answers wl_store_lock_moved */
static bool
dep_moved(SPITupleTable *t, void *into)
{
	WlState    *state = into;
	bool		isnull;

	*state = wl_catalog_state_from_oid(DatumGetObjectId(wl_store_datum(t, 0, 1, &isnull)));
	return wl_store_lock_moved(t, 0, *state, wl_store_bool(t, 0, 2));
}

/*
 * wl_store_dependency_state locks a dependency FOR SHARE (its workload row,
 * its queue row and its run row, so it cannot be purged under us nor change
 * state until we commit) and reads its state; false when it is not a
 * workload of this tenant and application.
 */
bool
wl_store_dependency_state(const char *depends_on, const char *tenant_id,
						  const char *application_id, WlState *state)
{
	Datum		args[3];

	args[0] = CStringGetTextDatum(depends_on);
	args[1] = CStringGetTextDatum(tenant_id);
	args[2] = CStringGetTextDatum(application_id);
	return wl_store_read_locked(P_DEP_STATE, args, NULL, false, dep_moved, state, depends_on) == 1;
}

/* wl_store_unmet_dependencies counts the dependencies not in their required state. */
int64
wl_store_unmet_dependencies(const WlRow *row)
{
	Datum		args[2];
	SPITupleTable *t;
	int64		n;

	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = CStringGetTextDatum(row->tenant_id);
	t = wl_store_run(P_DEPS_UNMET, args, NULL, 1, SPI_OK_SELECT);
	n = wl_store_int(t, 0, 1);
	SPI_freetuptable(t);
	return n;
}

/*
 * wl_store_deps_queue: how the queue row of the READY workload row, which
 * has dependencies, waits for them (P_DEPS_QUEUE): *checks, every claim
 * checks them (a required state is not final); *blocked, out of the claim's
 * index until the transition that meets the last one (every required state
 * is final, and one is not reached yet).
 */
void
wl_store_deps_queue(const WlRow *row, bool *checks, bool *blocked)
{
	Datum		args[2];
	SPITupleTable *t;

	args[0] = CStringGetTextDatum(row->workload_id);
	args[1] = CStringGetTextDatum(row->tenant_id);
	t = wl_store_run(P_DEPS_QUEUE, args, NULL, 0, SPI_OK_SELECT);
	*checks = wl_store_bool(t, 0, 1);
	*blocked = wl_store_bool(t, 0, 2);
	SPI_freetuptable(t);
}

static WlKeyedTarget dependents_of = {"dependencies", "dependencies_depends_on_idx"};

/*
 * wl_store_depended_on: which of the n rows, which have just reached a final
 * state, have a dependent (held[i]); asked with the latest snapshot, as
 * wl_store_dependents is.  On a single node the rows' questions are probes
 * of dependencies_depends_on_idx, one scan for the batch, without a plan, and
 * none while that index has never held an entry; on Citus P_DEPENDED_ON.
 */
void
wl_store_depended_on(WlRow **rows, int n, bool *held)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	Datum	   *tn = palloc(sizeof(Datum) * (n + 1));
	Datum		a[2];
	SPITupleTable *t;
	int			i;

	for (i = 0; i < n; i++)
	{
		d[i] = CStringGetTextDatum(rows[i]->workload_id);
		tn[i] = CStringGetTextDatum(rows[i]->tenant_id);
		held[i] = false;
	}
	if (wl_store_any_by_keys(&dependents_of, d, tn, n, held) == 0)
		return;
	a[0] = PointerGetDatum(wl_array_of(d, NULL, n, TEXTOID));
	a[1] = PointerGetDatum(wl_array_of(tn, NULL, n, TEXTOID));
	t = wl_store_run_latest(P_DEPENDED_ON, a, NULL, 0, SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	   *id = wl_store_text(t, r, 1);
		char	   *tenant = wl_store_text(t, r, 2);

		for (int i = 0; i < n; i++)
		{
			if (strcmp(rows[i]->workload_id, id) == 0 && strcmp(rows[i]->tenant_id, tenant) == 0)
				held[i] = true;
		}
	}
	SPI_freetuptable(t);
}

/*
 * wl_store_dependents: the dependents of a workload that has just reached
 * the final state `final` (after the dependent `after`, or only `only`, when
 * given): those that required another state (n of them, returned) and
 * those that required this one (*nmet, in *met), each in id order.  Asked
 * with the latest snapshot: in a REPEATABLE READ or SERIALIZABLE transaction
 * a dependent made since its snapshot is seen too.
 */
char **
wl_store_dependents(const char *workload_id, const char *tenant_id, WlState final,
					const char *after, const char *only, int *n, char ***met, int *nmet)
{
	Datum		a[5];
	char		nulls[5] = {' ', ' ', ' ', after ? ' ' : 'n', only ? ' ' : 'n'};
	SPITupleTable *t;
	char	  **ids;

	a[0] = CStringGetTextDatum(workload_id);
	a[1] = wl_catalog_state_datum(final);
	a[2] = CStringGetTextDatum(tenant_id);
	a[3] = after ? CStringGetTextDatum(after) : (Datum) 0;
	a[4] = only ? CStringGetTextDatum(only) : (Datum) 0;
	/* most workloads have no dependents: asked by the index first, without a plan */
	if (wl_store_any_by_key(&dependents_of, a[0], a[2]) == 0)
	{
		*n = *nmet = 0;
		*met = palloc(sizeof(char *));
		return palloc(sizeof(char *));
	}
	t = wl_store_run_latest(P_DEPENDENTS, a, nulls, 0, SPI_OK_SELECT);
	ids = palloc(sizeof(char *) * (SPI_processed + 1));
	*met = palloc(sizeof(char *) * (SPI_processed + 1));
	*n = *nmet = 0;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		if (wl_store_bool(t, r, 2))
			(*met)[(*nmet)++] = wl_store_text(t, r, 1);
		else
			ids[(*n)++] = wl_store_text(t, r, 1);
	}
	SPI_freetuptable(t);
	return ids;
}

/*
 * wl_store_unblock_dependents: of the n dependents ids (in id order) of a
 * workload that has just reached the state they required, the READY ones
 * whose other dependencies are met too get their queue rows unblocked
 * (claimable).
 * Each dependent is locked first, and only then are its dependencies read,
 * by a statement that begins after the lock: two dependencies reaching
 * their states in two transactions at once cannot each miss the other's.
 * One dependent at a time, each statement by a whole key (these run only
 * where a workload has dependents, off the hot path).
 */
void
wl_store_unblock_dependents(const char *tenant_id, char **ids, int n)
{
	Datum		a[3];
	SPITupleTable *t;

	a[1] = CStringGetTextDatum(tenant_id);
	/* in id order, as the cascade locks */
	for (int i = 0; i < n; i++)
	{
		int64		seq;

		a[0] = CStringGetTextDatum(ids[i]);
		t = wl_store_run_latest(P_UNBLOCK_LOCK, a, NULL, 1, SPI_OK_SELECT);
		if (SPI_processed == 0)
		{
			SPI_freetuptable(t);
			continue;
		}
		seq = wl_store_int(t, 0, 1);
		SPI_freetuptable(t);
		a[2] = Int64GetDatum(seq);
		t = wl_store_run_latest(P_UNBLOCK, a, NULL, 0, SPI_OK_UPDATE_RETURNING);
		if (SPI_processed == 1)
		{
			bool		isnull;
			WlQueueKey	key;
			TimestampTz due;

			key.priority = (int) wl_store_int(t, 0, 2);
			key.created_at = wl_store_ts(t, 0, 3, &isnull);
			key.seq = seq;
			due = wl_store_ts(t, 0, 4, &isnull);
			wl_store_ready_claimable(tenant_id, wl_store_text(t, 0, 1), &key,
									 due > wl_now() ? due : 0);
		}
		SPI_freetuptable(t);
	}
}

/*
 * wl_store_cascade_put records what is left of a cascade from workload_id
 * (final: the state it reached): its dependents after after_id (NULL: all
 * of them), or, with dependent_id, that one dependent (its row was held).
 */
void
wl_store_cascade_put(const char *tenant_id, const char *workload_id, WlState final,
					 const char *after_id, const char *dependent_id)
{
	Datum		a[6];
	char		nulls[6] = {' ', ' ', ' ', after_id ? ' ' : 'n', ' ', ' '};

	a[0] = CStringGetTextDatum(tenant_id);
	a[1] = CStringGetTextDatum(workload_id);
	a[2] = wl_catalog_state_datum(final);
	a[3] = after_id ? CStringGetTextDatum(after_id) : (Datum) 0;
	a[4] = CStringGetTextDatum(dependent_id ? dependent_id : "");
	a[5] = TimestampTzGetDatum(wl_now());
	wl_store_run(P_CASCADE_PUT, a, nulls, 0, SPI_OK_INSERT);
}

/*
 * wl_store_cascade_take removes what is left of the cascades from
 * workload_id and returns it (*out; how many), to be done now.
 */
int
wl_store_cascade_take(const char *tenant_id, const char *workload_id, WlCascadeLeft **out)
{
	Datum		a[2];
	SPITupleTable *t;
	int			n;

	a[0] = CStringGetTextDatum(tenant_id);
	a[1] = CStringGetTextDatum(workload_id);
	t = wl_store_run(P_CASCADE_TAKE, a, NULL, 0, SPI_OK_DELETE_RETURNING);
	n = (int) SPI_processed;
	*out = palloc0(sizeof(WlCascadeLeft) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		char	   *dep;

		(*out)[i].final = wl_catalog_state_from_oid(DatumGetObjectId(wl_store_datum(t, i, 1, &isnull)));
		(*out)[i].after_id = wl_store_text(t, i, 2);
		dep = wl_store_text(t, i, 3);
		(*out)[i].dependent_id = dep && dep[0] ? dep : NULL;
	}
	SPI_freetuptable(t);
	return n;
}
