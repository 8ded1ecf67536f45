/* store_runs.h: a workload's run row without a plan (store_runs.c). Layer 2. */
#ifndef WL_STORE_RUNS_H
#define WL_STORE_RUNS_H

#include "access/htup.h"
#include "executor/tuptable.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "store.h"

/*
 * The run row's columns: WL_RUN_CARRIED of them as on workload_rows, then
 * its own (the events it carries and its result: docs/storage.md), in the
 * merged values after workload_rows'
 * (wl_runs_merged_col).
 */
#define WL_RUN_CARRIED 23
#define WL_RUN_STARTED_SEQ 23
#define WL_RUN_CLAIMED_SEQ 24
#define WL_RUN_EVENT_WORKER 25
#define WL_RUN_EVENT_ROLE 26
#define WL_RUN_FINISHED_SEQ 27
#define WL_RUN_FINISHED_AT 28
/* the result of the attempt that succeeded: set by its completion */
#define WL_RUN_RESULT_APPLICATION 29
#define WL_RUN_OUTPUT 30
#define WL_RUN_OUTPUT_HASH 31
#define WL_RUN_ARTIFACTS 32
#define WL_RUN_SCHEMA_VERSION 33
#define WL_RUN_RESULT_WORKER 34
#define WL_RUN_NCOLS 35
extern WlAppendTarget wl_runs_target;
extern Relation wl_runs_open(Relation *idx);
extern void wl_runs_close(Relation rel, Relation idx);
extern int	wl_runs_merged_natts(void);
extern int	wl_runs_merged_col(int i);
extern void wl_runs_values(const Datum *v, const bool *n, Datum *out, bool *on);
extern void wl_runs_overlay(TupleTableSlot *slot, Datum *v, bool *n);
extern HeapTuple wl_runs_form(TupleDesc desc, const Datum *v, const bool *n);
extern bool wl_runs_find(Relation rel, Relation idx, Snapshot snap, TupleTableSlot *slot,
						 Datum seq, Datum tenant, BlockNumber *nblocks);

#endif
