/* store_runs.h: a workload's run row without a plan (store_runs.c). Layer 2. */
#ifndef WL_STORE_RUNS_H
#define WL_STORE_RUNS_H

#include "access/htup.h"
#include "executor/tuptable.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "store.h"

#define WL_RUN_NCOLS 23
extern WlAppendTarget wl_runs_target;
extern Relation wl_runs_open(Relation *idx);
extern void wl_runs_close(Relation rel, Relation idx);
extern void wl_runs_values(const Datum *v, const bool *n, Datum *out, bool *on);
extern void wl_runs_overlay(TupleTableSlot *slot, Datum *v, bool *n);
extern HeapTuple wl_runs_form(TupleDesc desc, const Datum *v, const bool *n);
extern bool wl_runs_find(Relation rel, Relation idx, Snapshot snap, TupleTableSlot *slot,
						 Datum seq, Datum tenant);

#endif
