/* grants.h: signed grants, run authorities, effective scopes (grants.c; layer 3). */
#ifndef WL_GRANTS_H
#define WL_GRANTS_H

#include "utils/array.h"
#include "utils/jsonb.h"

#include "spec.h"
#include "store_ops.h"

extern bool wl_grant_shape(JsonbContainer *g, char **detail);
extern Jsonb *wl_grant_sign(Jsonb *grant);
extern bool wl_grant_verify(Jsonb *signed_grant, const char **why);
extern bool wl_grant_verify_stored(Jsonb *stored_grant, const char **why);
extern Jsonb *wl_grant_stored_form(Jsonb *signed_grant);
extern Jsonb *wl_grant_sign_recorded(Jsonb *grant);
extern bool wl_grant_current(Jsonb *snapshot, const char **why);
extern bool wl_grant_authority_revoked(const WlSpecRow *spec);
extern TimestampTz wl_grant_lapses_at(Jsonb *snapshot, Jsonb *run_authority);
extern ArrayType *wl_grant_check_snapshot(const WlSpec *spec);

/* the snapshots a batch presented, each checked once (grants.c) */
typedef struct WlGrantMemo
{
	MemoryContext cxt;			/* where the entries live */
	int			n;
	int			size;
	struct WlGrantMemoEntry *e;
} WlGrantMemo;

extern ArrayType *wl_grant_check_snapshot_memo(const WlSpec *spec, WlGrantMemo *memo);
extern Jsonb *wl_grant_run_authority(const WlSpec *spec, const char *workload_id);
extern Jsonb **wl_grant_run_authorities(const WlSpec **specs, const char **workload_ids, int n);
extern TimestampTz wl_grant_expires_at(Jsonb *signed_grant);
extern bool wl_grant_run_authority_holds(Jsonb *authority, const char *workload_id,
										 const char *tenant_id, const char *application_id,
										 char **detail, bool revocation);
extern bool wl_grant_verify_stored_signature(Jsonb *stored_grant, const char **why);
extern ArrayType *wl_grant_effective_scopes(ArrayType *granted, ArrayType *current);

#endif
