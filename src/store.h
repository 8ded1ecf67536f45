/*
 * store.h: the only way to our tables.  store.c holds every SQL statement as
 * a plan prepared once per backend; store_ops.c wraps them in typed helpers.
 */
#ifndef WL_STORE_H
#define WL_STORE_H

#include "executor/spi.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "payload.h"
#include "states.h"

/* The spec's timeouts in milliseconds; 0 = none. */
typedef struct WlTimeouts
{
	int64		queue_ms;
	int64		claim_ms;
	int64		execution_ms;
	int64		heartbeat_ms;
	int64		overall_ms;
} WlTimeouts;

/* The hot row of one workload, as locked by wl_store_lock. */
typedef struct WlRow
{
	char	   *workload_id;
	char	   *tenant_id;
	char	   *application_id;
	WlState		state;
	int			attempt_count;
	int			retry_count;
	int64		fencing_token;
	int			checkpoint_sequence;
	char	   *claim_id;		/* NULL when no worker holds it */
	char	   *worker_id;
	TimestampTz lease_expires_at;
	TimestampTz next_attempt_at;
	TimestampTz state_entered_at;
	TimestampTz created_at;
	bool		has_heartbeat;
	TimestampTz last_heartbeat_at;
	ArrayType  *capability_snapshot;
	bool		failure_changed;	/* write last_failure on save */
	Jsonb	   *last_failure;
	bool		progress_changed;	/* write progress on save */
	Jsonb	   *progress;
	WlTimeouts	timeouts;
	bool		has_deadline;	/* deadline_at: when the tick must look again */
	TimestampTz deadline_at;
	TimestampTz wait_until;		/* the deadline of the wait being entered */
	int			wait_count;		/* attempts that ended in a wait */
	bool		has_criteria;
} WlRow;

typedef enum WlPlanId
{
	P_LOCK,
	P_LOCK_MANY,
	P_SAVE,
	P_SAVE_MANY,
	P_EVENT,
	P_IDEM,
	P_SPEC_PUT,
	P_ROW_PUT,
	P_DEP_STATE,
	P_DEP_PUT,
	P_DOC,
	P_DOC_FULL,
	P_LIST,
	P_HISTORY,
	P_CLAIM_MANY,
	P_CLAIM_ONE,
	P_DEPS_UNMET,
	P_ATTEMPT_START,
	P_ATTEMPT_CLOSE,
	P_ATTEMPT_CLOSE_MANY,
	P_RESULT_GET,
	P_RESULT_GET_MANY,
	P_RESULT_PUT,
	P_RESULT_PUT_MANY,
	P_CHECKPOINT_PUT,
	P_POLICY,
	P_CONTEXT,
	P_EXPIRED,
	P_DEPENDED_ON,
	P_DEPENDENTS,
	P_PURGE,
	P_KEY_CURRENT,
	P_KEY_GET,
	P_KEY_PUT,
	P_KEY_RETIRE,
	P_KEY_OTHERS,
	P_REVOKED,
	P_REVOKE_PUT,
	P_MEMBER,
	P_MEMBER_PUT,
	P_MEMBER_DEL,
	P_TICK_LOCK,
	P_DEADLINE_DUE,
	P_HEARTBEAT_DUE,
	P_ORCH_SPEC,
	P_CHECKPOINT_LAST,
	P_WAIT_PUT,
	P_WAIT_OPEN,
	P_WAIT_RESOLVE,
	P_WAIT_CLOSE,
	P_WAIT_LAST,
	P_WAIT_KEYED,
	P_COMP_PUT,
	P_COMP_LIST,
	P_COMP_BIND,
	P_STATS,
	P_COUNT
} WlPlanId;

/* store.c */
extern void wl_store_init(void);
extern Oid	wl_store_api_schema(void);
extern Oid	wl_store_state_oid(WlState s);
extern Oid	wl_store_state_type(void);
extern WlState wl_store_state_from_oid(Oid oid);
extern Datum wl_store_state_datum(WlState s);
extern SPITupleTable *wl_store_run(WlPlanId id, Datum *values, const char *nulls,
								   long tcount, int expect);
extern char *wl_store_text(SPITupleTable *t, int row, int col);
extern int64 wl_store_int(SPITupleTable *t, int row, int col);
extern bool wl_store_bool(SPITupleTable *t, int row, int col);
extern TimestampTz wl_store_ts(SPITupleTable *t, int row, int col, bool *isnull);
extern Datum wl_store_datum(SPITupleTable *t, int row, int col, bool *isnull);

typedef struct WlPolicy
{
	int			max_attempts;
	int64		initial_delay_ms;
	int64		max_delay_ms;
	bool		exponential;
	ArrayType  *retry_on;
} WlPolicy;

/* store_ops.c */
extern bool wl_store_lock(const char *workload_id, WlRow *row);
extern void wl_store_lock_many(char **ids, int n, WlRow *rows, bool *found);
extern void wl_store_save(WlRow *row);
extern void wl_store_transition(WlRow *row, WlState to, const char *actor,
								Jsonb *evidence);
extern void wl_store_transition_many(WlRow **rows, int n, WlState to, const char *actor,
									 Jsonb **evidence);
extern void wl_store_event(WlRow *row, WlState from, bool has_from, WlState to,
						   const char *actor, Jsonb *evidence);

extern void wl_store_policy(const char *workload_id, WlPolicy *p);
extern void wl_store_attempt_start(const WlRow *row);
extern void wl_store_attempt_close(const WlRow *row, const char *outcome,
								   const char *kind, const char *error);
extern Jsonb *wl_store_one_jsonb(WlPlanId id, const char *arg, int col);
extern Jsonb *wl_store_document(const char *workload_id, bool full);
extern Jsonb *wl_store_transfer(Jsonb *j);
extern Jsonb *wl_store_one_row_jsonb(WlPlanId id, Datum *args, const char *nulls);

struct WlFence;
extern bool wl_store_result_find(const char *result_id, char **workload_id,
								 struct WlFence *prov, Jsonb **doc);
extern Jsonb *wl_store_result_put(const WlRow *row, const struct WlFence *fence,
								  const char *result_id, Jsonb *output,
								  ArrayType *artifacts, int schema_version);
extern Jsonb *wl_store_checkpoint_put(const WlRow *row, Jsonb *state,
									  const char *state_hash, const char *key_id,
									  const char *tag);
extern void wl_store_wait_close(const WlRow *row, const char *outcome);
extern void wl_store_attempt_close_many(WlRow **rows, int n, const char *outcome);
extern void wl_store_result_find_many(char **result_ids, int n, bool *found,
									  char **workload_ids, struct WlFence *provs,
									  Jsonb **docs);
extern int	wl_store_result_put_many(WlRow **rows, int n, const char *worker_id,
									 char **claim_ids, int64 *tokens, char **result_ids,
									 Jsonb **outputs, ArrayType **artifacts,
									 int *schema_versions, Jsonb **docs);

#endif
