/*
 * store.h: running the statements of store_sql.c, for the typed wrappers of
 * the storage layer only (store_rows.c, store_create.c, store_claim.c,
 * store_parts.c, store_complete.c, store_meta.c, store_bulk.c, store_sched.c,
 * store_citus.c).  The layers above call store_ops.h.
 */
#ifndef WL_STORE_H
#define WL_STORE_H

#include "access/genam.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "store_ops.h"
#include "store_sql.h"

extern SPITupleTable *wl_store_run(WlPlanId id, Datum *values, const char *nulls,
								   long tcount, int expect);
extern SPITupleTable *wl_store_run_results(WlPlanId id, Datum *values, const char *nulls,
										   int expect, const char *result_id);
extern SPITupleTable *wl_store_run_latest(WlPlanId id, Datum *values, const char *nulls,
										  long tcount, int expect);
extern char *wl_store_text(SPITupleTable *t, int row, int col);
extern int64 wl_store_int(SPITupleTable *t, int row, int col);
extern bool wl_store_bool(SPITupleTable *t, int row, int col);
extern bool wl_store_lock_moved(SPITupleTable *t, int i, WlState state, bool in_run);
extern int	wl_store_read_locked(WlPlanId id, Datum *args, const char *nulls, bool skip,
								 bool (*read) (SPITupleTable *t, void *into), void *into,
								 const char *name);
extern bool wl_store_run_bool(WlPlanId id, Datum *values);
extern TimestampTz wl_store_ts(SPITupleTable *t, int row, int col, bool *isnull);
extern Datum wl_store_datum(SPITupleTable *t, int row, int col, bool *isnull);
extern Jsonb *wl_store_jsonb(SPITupleTable *t, int row, int col);
extern ArrayType *wl_store_array(SPITupleTable *t, int row, int col);
extern Datum wl_store_state_arg(int state);
extern Datum wl_store_ts_arg(TimestampTz ts, char *null);
extern char *wl_store_sql_text(const char *sql);
extern ArrayType *wl_store_int8_array(int64 *v, int n);
extern Jsonb *wl_store_result_doc(const WlNewResult *r, const char *output_hash,
								  TimestampTz at);
/*
 * A table a row is appended to without a plan (store_direct.c): its name in
 * schema workload and the columns an append gives, every one of its columns;
 * the rest is filled in once per catalog generation.
 */
#define WL_APPEND_MAX_COLS 48
typedef struct WlAppendTarget
{
	const char *table;
	int			ncols;
	const char *const *cols;
	uint64		generation;
	Oid			relid;
	AttrNumber	attnums[WL_APPEND_MAX_COLS];
	void		(*written) (TupleTableSlot *slot);	/* each row once written (its tid), or NULL */
} WlAppendTarget;
extern void wl_store_row_read(SPITupleTable *t, int i, const char *workload_id, WlRow *row);
extern void wl_store_row_from(TupleDesc desc, const Datum *v, const bool *n, bool in_run,
							  const char *workload_id, WlRow *row);
typedef struct WlFencedRels WlFencedRels;	/* store_fenced.c */
extern WlFencedRels *wl_store_fenced_open(void);
extern void wl_store_fenced_close(WlFencedRels *f);
extern bool wl_store_fenced_in(WlFencedRels *f, const WlFencedCall *c, const char *tenant,
							   WlRow *row);
extern int	wl_store_fenced_direct(const WlFencedCall *c, const char *tenant, WlRow *row);
extern int	wl_store_fenced_held(WlFencedRels *f, const WlFencedCall *c, const char *tenant,
								 WlRow *row);
extern bool wl_store_append(WlAppendTarget *t, const Datum *values, const bool *nulls);

/* where this session last found a workload's rows: hints, checked by their key (store_memo.c) */
extern void wl_store_memo_row(const char *workload_id, ItemPointer tid);
extern bool wl_store_memo_row_at(const char *workload_id, ItemPointer tid);
extern void wl_store_memo_run(int64 seq, ItemPointer tid);
extern bool wl_store_memo_run_at(int64 seq, ItemPointer tid);
extern void wl_store_memo_spec(int64 seq, ItemPointer tid);
extern bool wl_store_memo_spec_at(int64 seq, ItemPointer tid);
extern bool wl_store_fetch_at(Relation rel, BlockNumber *nblocks, ItemPointer tid, Snapshot snap,
							  TupleTableSlot *slot);
extern bool wl_store_text_equal(Datum a, Datum b);
extern bool wl_store_fetch_keyed(Relation rel, BlockNumber *nblocks, ItemPointer tid,
								 Snapshot snap, TupleTableSlot *slot, AttrNumber seq_att,
								 int64 seq, AttrNumber tenant_att, Datum tenant);

/*
 * Rows appended to one table by one call, its relation and indexes opened
 * once (store_direct.c).  A held appender keeps its rows until it is closed
 * (or holds WL_APPEND_HELD) and writes them then with one multi-insert.
 */
#define WL_APPEND_HELD 64
typedef struct WlAppender
{
	WlAppendTarget *t;
	Relation	rel;			/* NULL: not open */
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	bool		hold;			/* rows kept in held[] until written */
	int			nheld;
	TupleTableSlot *held[WL_APPEND_HELD];
} WlAppender;
extern bool wl_store_appender_open(WlAppender *a, WlAppendTarget *t);
extern void wl_store_appender_hold(WlAppender *a);
extern void wl_store_appender_put(WlAppender *a, const Datum *values, const bool *nulls);
extern void wl_store_appender_close(WlAppender *a);
extern void wl_store_writable(const char *command);
extern Oid	wl_store_attnums(const char *table, const char *const *names, int n, int *out);
extern Oid	wl_store_index_of(const char *name, int ncols, const int *cols);

/* A table and one of its indexes, by name, found once per catalog generation (store_direct.c) */
typedef struct WlKeyedTarget
{
	const char *table;
	const char *index_name;		/* wl_store_remove: its primary key, on (seq, tenant_id) */
	uint64		generation;
	Oid			relid;
	Oid			index;
} WlKeyedTarget;
extern bool wl_store_remove(WlKeyedTarget *t, Datum tenant, Datum seq);
extern int	wl_store_any_by_key(WlKeyedTarget *t, Datum a, Datum b);
extern int	wl_store_any_by_keys(WlKeyedTarget *t, const Datum *a, const Datum *b, int n, bool *has);
extern void wl_store_index_version(Relation rel, TupleTableSlot *slot);
/* the index entries of new versions of one relation's rows, its indexes opened once (store_tuple.c) */
typedef struct WlIndexer
{
	EState	   *estate;			/* NULL: not open */
	ResultRelInfo *rri;
} WlIndexer;
extern void wl_store_index_version_in(WlIndexer *ix, Relation rel, TupleTableSlot *slot);
extern void wl_store_indexer_close(WlIndexer *ix);
extern bool wl_store_row_triggers(Relation rel, bool insert, bool update, bool del);
extern void wl_store_serialization_failure(const char *what);
extern bool wl_store_index_has(Oid index, Snapshot snap, const RegProcedure *eqs,
							   const Datum *vals, int nkeys);
extern bool wl_store_index_has_in(Relation rel, Relation idx, IndexScanDesc *scan,
								  TupleTableSlot *slot, Snapshot snap, const RegProcedure *eqs,
								  const Datum *vals, int nkeys);
extern bool wl_store_lock_skip(Relation rel, ItemPointer tid, Snapshot snap, TupleTableSlot *slot,
							   LockTupleMode mode, bool *moved);
extern bool wl_store_by_key(Relation rel, Relation idx, Snapshot snap, TupleTableSlot *slot,
							RegProcedure eq_a, Datum a, RegProcedure eq_b, Datum b);
extern bool wl_store_by_key_in(IndexScanDesc *scan, Relation rel, Relation idx, Snapshot snap,
							   TupleTableSlot *slot, RegProcedure eq_a, Datum a, RegProcedure eq_b,
							   Datum b);
extern void wl_store_remove_found(Relation rel, ItemPointer tid, Snapshot snap,
								  TupleTableSlot *slot);
extern bool wl_store_event_append(const Datum *args, const char *nulls);
extern bool wl_store_events_open(WlAppender *a);
extern void wl_store_event_put(WlAppender *a, const Datum *args, const char *nulls);
extern void wl_store_event_put_held(WlAppender *a, const char *tenant, int64 seq, WlState from,
									WlState to, const char *actor, const char *role,
									TimestampTz at, Jsonb *rest, int64 token, int32 attempt);

/*
 * A stretch of one queue, in queue order (store_claim_direct.c): a range of
 * priorities (below hi, above lo) from its start, or one priority after a
 * point (created_at, seq).
 */
typedef struct WlSegment
{
	bool		point;
	int64		hi;
	int64		lo;
	int32		priority;
	TimestampTz created_at;
	int64		seq;
} WlSegment;
extern int	wl_store_claim_segments(const WlQueueKey *pt, int n, WlSegment *out);
extern int	wl_store_claim_direct(const WlClaimRequest *r, WlClaimed **out);
extern void wl_store_result_duplicate(const char *result_id, void (*write) (void *), void *arg);
extern SPITupleTable *wl_store_run_text(const char *sql, int nargs, Oid *types, Datum *values,
										const char *nulls, int expect);
extern int	wl_store_dues(SPITupleTable *t, WlDue **out);

#endif
