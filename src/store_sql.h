/*
 * store_sql.h: the plan table shared by store.c (which prepares and runs the
 * plans) and store_sql.c (which holds their text).  Internal to the storage
 * layer: nothing above it sees a plan id or SQL text.
 */
#ifndef WL_STORE_SQL_H
#define WL_STORE_SQL_H

#include "postgres.h"

#define ST ((Oid) 1)			/* placeholder: the workload_state type */
#define STA ((Oid) 2)			/* placeholder: its array type */
#define MAX_ARGS 32

/*
 * A set of states in a statement is written as one of these markers; when
 * the statement is prepared, store.c puts in its place the list the
 * transition table gives (states.c), so no SQL text spells a set itself.
 */
#define SQL_FINAL "{final}"			/* no edge leaves them */
#define SQL_HOLDS_CLAIM "{holds_claim}" /* a worker holds the workload */
#define SQL_CAN_TIME_OUT "{can_time_out}"	/* an edge to TIMED_OUT */
/* {"STATE": count of rows x in it, ...} for every state, as an aggregate */
#define SQL_COUNT_BY_STATE "{count_by_state}"

typedef enum WlPlanId
{
	P_LOCK,
	P_LOCK_SKIP,
	P_LOCK_MANY,
	P_SAVE,
	P_SAVE_RUN,
	P_SAVE_MANY,
	P_FENCED_START,
	P_FENCED_BEAT,
	P_FENCED_COMPLETE,
	P_FENCED_COMPLETE_MANY,
	P_QUEUE_PUT,
	P_QUEUE_DEL,
	P_EVENT,
	P_IDEM,
	P_SPEC_PUT,
	P_SPEC_PUT_AT,
	P_AUTHORITY_PUT,
	P_ROW_PUT,
	P_ROW_PUT_AT,
	P_DEP_STATE,
	P_DEP_PUT,
	P_DOC,
	P_DOC_FULL,
	P_LIST,
	P_HISTORY,
	P_CLAIM_MANY,
	P_CLAIM_MANY_START,
	P_CLAIM_ONE,
	P_DEPS_UNMET,
	P_DEPS_QUEUE,
	P_UNBLOCK_LOCK,
	P_UNBLOCK,
	P_ATTEMPT_CLOSE,
	P_RESULT_GET,
	P_RESULT_GET_MANY,
	P_RESULT_PUT,
	P_RESULT_PUT_MANY,
	P_CHECKPOINT_PUT,
	P_CHECKPOINT_LAST,
	P_POLICY,
	P_SPEC_READ,
	P_REVOKED_AMONG,
	P_EXPIRED,
	P_DEPENDED_ON,
	P_DEPENDENTS,
	P_TENANT_USE,
	P_TENANT_SCHEDULES,
	P_CASCADES_DUE,
	P_CASCADE_PUT,
	P_CASCADE_TAKE,
	P_PURGE,
	P_PURGE_DEAD,
	P_KEY_CURRENT,
	P_KEY_GET,
	P_KEY_PUT,
	P_KEY_RETIRE,
	P_KEY_OTHERS,
	P_GRANT_CHAIN,
	P_LINEAGE_PUT,
	P_REVOKE_PUT,
	P_REVOKED_UNSWEPT,
	P_REVOKED_SLICE,
	P_REVOKED_PROGRESS,
	P_CHANNEL_SECRET,
	P_CHANNEL_SECRET_PUT,
	P_CHANNEL_PAIRS,
	P_CHANNEL_PAIR_PUT,
	P_MEMBER,
	P_MEMBER_APPS,
	P_MEMBER_PUT,
	P_MEMBER_DEL,
	P_MEMBER_DROPPED,
	P_HELD_SEQS,
	P_DEADLINE_DUE,
	P_HELD_DEADLINE_DUE,
	P_HEARTBEAT_DUE,
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
	/* scheduling and bulk work (store_bulk.c) */
	P_IDEM_MANY,
	P_CREATE_SPECS_MANY,
	P_CREATE_AUTHORITY_MANY,
	P_CREATE_ROWS_MANY,
	P_DOC_MANY,
	P_DEAD_LETTERS,
	/* schedules (store_sched.c) */
	P_SCHED_PUT,
	P_SCHED_LOCK,
	P_SCHED_LOCK_SKIP,
	P_SCHED_PAUSE,
	P_SCHED_RESUME,
	P_SCHED_DROP,
	P_SCHED_LIST,
	P_SCHED_DUE,
	P_SCHED_FIRED,
	P_SCHED_EVENT,
	P_SCHED_LAST_STATE,
	P_SCHED_SET_GRANT,
	P_SCHED_GRANTS_EXPIRING,
	P_SCHED_GRANT_WARNED,
	P_CITUS_DISTRIBUTE,
	P_CITUS_TENANT_OF,
	P_CITUS_DISTRIBUTED,
	P_CITUS_LOCAL_SHARDS,
	P_CITUS_COORDINATOR,
	P_CITUS_SHARD_GROUP,
	P_CITUS_SHARD_LOCK,
	P_CITUS_SHARD_OF,
	P_CITUS_SHARD_MAP,
	P_CITUS_SHARD_HERE,
	P_CITUS_TENANT_LOCAL,
	P_CITUS_REVOKED_NOW,
	P_CITUS_PICK_MANY,
	P_CITUS_PICK_ONE,
	P_CITUS_CLAIM_LOCK,
	P_CITUS_CLAIM_RETRY,
	P_CITUS_CLAIM_CLEAR,
	P_CITUS_CLAIM_FIRST,
	P_CITUS_CLAIM_INS,
	P_CITUS_QUEUE_DEL_MANY,
	P_CITUS_CLAIM_EVENTS,
	P_CITUS_CLAIM_SPECS,
	P_CITUS_LINEAGE_HAS,
	P_COUNT
} WlPlanId;

typedef struct WlPlanDef
{
	const char *sql;
	int			nargs;
	Oid			types[MAX_ARGS];
	/*
	 * the statement reads and writes one table, by tenant_id = a parameter:
	 * Citus routes its generic plan (else, on Citus, it is planned per call)
	 */
	bool		one_table;
	/*
	 * the statement as Citus runs it, where the text above cannot be (a
	 * non-immutable function in RETURNING, ...); NULL: the same text
	 */
	const char *citus_sql;
	/*
	 * the statement reads PostgreSQL's and Citus's catalogs only: on Citus
	 * too its generic plan is made once and kept
	 */
	bool		catalog_only;
} WlPlanDef;

extern const WlPlanDef wl_plan_defs[P_COUNT];

/* the maintenance scans of one local shard on Citus (statements, not plans) */
typedef enum WlLocalScan
{
	WL_LOCAL_EXPIRED,
	WL_LOCAL_DEADLINE,
	WL_LOCAL_HEARTBEAT,
	WL_LOCAL_HELD_DEADLINE,
	WL_LOCAL_CASCADES
} WlLocalScan;

extern const char *const wl_sql_local_due[5];
extern const char *const wl_sql_purge[2];
extern const char *const wl_sql_deps_unmet;

#endif
