/* spec.h: the workload_create spec (spec.c; layer 1). */
#ifndef WL_SPEC_H
#define WL_SPEC_H

#include "utils/array.h"
#include "utils/jsonb.h"

#include "row.h"

/* contract_version of every document this version writes */
#define WL_CONTRACT_VERSION 1

typedef struct WlSpec
{
	char	   *tenant_id;
	char	   *application_id;
	char	   *environment;
	char	   *definition_id;
	char	   *definition_revision;
	char	   *trigger;
	char	   *idempotency_key;
	Jsonb	   *input;
	Jsonb	   *requested_by;
	char	   *requested_kind;
	char	   *requested_id;
	Jsonb	   *authorization_snapshot;
	bool		stored_authority;	/* the system presents a stored grant (a compensation) */
	ArrayType  *inherited_grants;	/* the chain the workload acts under inherits (a compensation's) */
	ArrayType  *capability_snapshot;
	ArrayType  *connection_scopes;
	int			priority;
	WlPolicy	policy;
	char	   *backoff;
	Jsonb	   *timeouts;		/* as given, for the document */
	WlTimeouts	timeout_ms;		/* the same, 0 where absent */
	bool		timeout_set[WL_TIMEOUT_COUNT];
	int			ndeps;
	char	  **dep_ids;
	WlState    *dep_states;
	Jsonb	   *dependencies;	/* normalized: required_state filled in */
	Jsonb	   *completion_criteria;
	Jsonb	   *governing_snapshots;	/* NULL when absent */
	bool		has_not_before; /* not due before not_before (SPEC section 4) */
	TimestampTz not_before;
} WlSpec;

/* the kinds of subject a principal ({"kind", "id"}) may be (SPEC section 4) */
extern const char *const wl_subject_kinds[];
/* the fields of governing_snapshots (SPEC section 7) */
extern const char *const wl_governing_fields[];
/* the names of the timeouts, in WL_TIMEOUTS order */
extern const char *const wl_timeout_fields[];

extern void wl_spec_parse(Jsonb *spec, WlSpec *out);
extern void wl_spec_parse_stored(Jsonb *spec, WlSpec *out);
extern bool wl_in_list(const char *const *list, const char *s);

#endif
