/*
 * errors.h: every refusal workload can raise, in one table (layer 0: knows
 * nothing about workloads).
 *
 * Each row: the enum member, the SQLSTATE (class WL), the stable token a
 * message starts with, and the primary message.  The README's error table and
 * workload_error_codes() are this table; nothing else defines a code.
 */
#ifndef WL_ERRORS_H
#define WL_ERRORS_H

#define WL_ERROR_TABLE(X) \
	X(WL_E_INVALID,           '0','0','1', "WORKLOAD_INVALID",           "invalid request") \
	X(WL_E_UNAUTHORIZED,      '0','0','2', "WORKLOAD_UNAUTHORIZED",      "not authorized for this tenant, application or grant") \
	X(WL_E_NOT_FOUND,         '0','0','3', "WORKLOAD_NOT_FOUND",         "workload not found") \
	X(WL_E_NOT_READY,         '0','0','4', "WORKLOAD_NOT_READY",         "workload is not ready to be claimed") \
	X(WL_E_CAPABILITY_DENIED, '0','0','5', "WORKLOAD_CAPABILITY_DENIED", "worker lacks a capability the workload requires") \
	X(WL_E_CLAIM_INVALID,     '0','0','6', "WORKLOAD_CLAIM_INVALID",     "workload has no current claim") \
	X(WL_E_STALE_FENCE,       '0','0','7', "WORKLOAD_STALE_FENCE",       "claim or fencing token is stale") \
	X(WL_E_LEASE_EXPIRED,     '0','0','8', "WORKLOAD_LEASE_EXPIRED",     "claim lease has expired") \
	X(WL_E_TRANSITION_DENIED, '0','0','9', "WORKLOAD_TRANSITION_DENIED", "state transition is not allowed") \
	X(WL_E_SECRET_REJECTED,   '0','1','0', "WORKLOAD_SECRET_REJECTED",   "payload contains a secret") \
	X(WL_E_RESULT_DUPLICATE,  '0','1','1', "WORKLOAD_RESULT_DUPLICATE",  "result id belongs to another workload") \
	X(WL_E_IDEMPOTENCY_CONFLICT, '0','1','2', "WORKLOAD_IDEMPOTENCY_CONFLICT", "idempotency key was already used with a different input or revision") \
	X(WL_E_CHECKPOINT_TAMPERED, '0','1','3', "WORKLOAD_CHECKPOINT_TAMPERED", "checkpoint failed verification") \
	X(WL_E_SNAPSHOT_MISMATCH, '0','1','4', "WORKLOAD_SNAPSHOT_MISMATCH", "governing snapshots do not match") \
	X(WL_E_COMPENSATION_UNAUTHORIZED, '0','1','5', "WORKLOAD_COMPENSATION_UNAUTHORIZED", "compensation step is not bound to the workload's authorization") \
	X(WL_E_RAW_WRITE_DENIED,  '0','1','6', "WORKLOAD_RAW_WRITE_DENIED",  "direct writes to workload tables are not allowed") \
	X(WL_E_AUTHORIZATION_DENIED, '0','1','7', "AUTHORIZATION_DENIED",    "authorization no longer holds") \
	X(WL_E_QUOTA_EXCEEDED,    '0','1','8', "WORKLOAD_QUOTA_EXCEEDED",    "tenant quota exceeded")

/* WL_OK is "no refusal"; WL_E_END counts the table (codes are 1..WL_E_END-1). */
#define WL_ERR_ENUM(name, a, b, c, token, message) name,
typedef enum WlErr
{
	WL_OK = 0,
	WL_ERROR_TABLE(WL_ERR_ENUM)
	WL_E_END
} WlErr;
#undef WL_ERR_ENUM

typedef struct WlErrInfo
{
	int			sqlerrcode;
	const char *sqlstate;
	const char *token;
	const char *message;
} WlErrInfo;

extern const WlErrInfo wl_errors[WL_E_END];

/*
 * wl_isolated runs fn(arg) in a subtransaction: NULL when it returned (what
 * it did stands), else the error it raised, in the caller's memory context,
 * with what it did rolled back (a cancel or a shutdown is thrown on).
 */
extern ErrorData *wl_isolated(void (*fn) (void *), void *arg);

/*
 * wl_refuse raises a refusal: "TOKEN: message", its own SQLSTATE, and any
 * errdetail/errhint given after the code.
 */
#define wl_refuse(err, ...) \
	ereport(ERROR, \
			errcode(wl_errors[(err)].sqlerrcode), \
			errmsg("%s: %s", wl_errors[(err)].token, wl_errors[(err)].message), \
			##__VA_ARGS__)

#endif
