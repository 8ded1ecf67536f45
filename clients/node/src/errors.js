// Typed errors: every refusal of the SQL API is one class, whatever way it
// arrived: a single call rejects with its SQLSTATE (WL006), a batch item
// answers it as its code (WORKLOAD_CLAIM_INVALID), and both become
// ClaimInvalidError.  The table mirrors SELECT * FROM workload_error_codes();
// the tests compare the two.

/** A refusal of the SQL API: the call changed nothing. */
export class WorkloadError extends Error {
  static code = '';
  static sqlstate = '';
  constructor(message, detail, options = {}) {
    super(message || new.target.code || options.code, options.cause ? { cause: options.cause } : undefined);
    this.name = new.target.name;
    /** the stable token the server's message starts with */
    this.code = options.code || new.target.code;
    /** the refusal's SQLSTATE */
    this.sqlstate = options.sqlstate || new.target.sqlstate;
    this.detail = detail ?? undefined;
  }
}

/** The workload is no longer this worker's: stop, and never resend the call. */
export class FenceError extends WorkloadError {}

const def = (name, code, sqlstate, base = WorkloadError) => {
  const cls = { [name]: class extends base {} }[name];
  cls.code = code;
  cls.sqlstate = sqlstate;
  return cls;
};

export const InvalidError = def('InvalidError', 'WORKLOAD_INVALID', 'WL001');
export const UnauthorizedError = def('UnauthorizedError', 'WORKLOAD_UNAUTHORIZED', 'WL002');
export const NotFoundError = def('NotFoundError', 'WORKLOAD_NOT_FOUND', 'WL003');
export const NotReadyError = def('NotReadyError', 'WORKLOAD_NOT_READY', 'WL004');
export const CapabilityDeniedError = def('CapabilityDeniedError', 'WORKLOAD_CAPABILITY_DENIED', 'WL005');
export const ClaimInvalidError = def('ClaimInvalidError', 'WORKLOAD_CLAIM_INVALID', 'WL006', FenceError);
export const StaleFenceError = def('StaleFenceError', 'WORKLOAD_STALE_FENCE', 'WL007', FenceError);
export const LeaseExpiredError = def('LeaseExpiredError', 'WORKLOAD_LEASE_EXPIRED', 'WL008', FenceError);
export const TransitionDeniedError = def('TransitionDeniedError', 'WORKLOAD_TRANSITION_DENIED', 'WL009');
export const SecretRejectedError = def('SecretRejectedError', 'WORKLOAD_SECRET_REJECTED', 'WL010');
export const ResultDuplicateError = def('ResultDuplicateError', 'WORKLOAD_RESULT_DUPLICATE', 'WL011');
export const IdempotencyConflictError = def('IdempotencyConflictError', 'WORKLOAD_IDEMPOTENCY_CONFLICT', 'WL012');
export const CheckpointTamperedError = def('CheckpointTamperedError', 'WORKLOAD_CHECKPOINT_TAMPERED', 'WL013');
export const SnapshotMismatchError = def('SnapshotMismatchError', 'WORKLOAD_SNAPSHOT_MISMATCH', 'WL014');
export const CompensationUnauthorizedError = def('CompensationUnauthorizedError', 'WORKLOAD_COMPENSATION_UNAUTHORIZED', 'WL015');
export const RawWriteDeniedError = def('RawWriteDeniedError', 'WORKLOAD_RAW_WRITE_DENIED', 'WL016');
export const AuthorizationDeniedError = def('AuthorizationDeniedError', 'AUTHORIZATION_DENIED', 'WL017');
export const QuotaExceededError = def('QuotaExceededError', 'WORKLOAD_QUOTA_EXCEEDED', 'WL018');

/** Every refusal class by its code. */
export const ERRORS = Object.freeze(Object.fromEntries([
  InvalidError, UnauthorizedError, NotFoundError, NotReadyError, CapabilityDeniedError,
  ClaimInvalidError, StaleFenceError, LeaseExpiredError, TransitionDeniedError,
  SecretRejectedError, ResultDuplicateError, IdempotencyConflictError, CheckpointTamperedError,
  SnapshotMismatchError, CompensationUnauthorizedError, RawWriteDeniedError,
  AuthorizationDeniedError, QuotaExceededError,
].map((cls) => [cls.code, cls])));

const bySqlstate = Object.fromEntries(Object.values(ERRORS).map((cls) => [cls.sqlstate, cls]));

/** The error a batch item's code names (an unknown code gives a plain WorkloadError). */
export function fromCode(code, message, detail) {
  const cls = ERRORS[code];
  return cls ? new cls(message || code, detail) : new WorkloadError(message || code, detail, { code });
}

/**
 * The typed error for a node-postgres error that is a refusal; anything else
 * unchanged.  The SQLSTATE decides; a message that starts with a known code
 * decides when the SQLSTATE is not in the table (a server newer than this).
 */
export function fromPg(err) {
  if (!err || err instanceof WorkloadError) return err;
  const message = String(err.message ?? '');
  let cls = bySqlstate[err.code];
  if (!cls) cls = ERRORS[message.split(':', 1)[0]];
  if (!cls) {
    if (typeof err.code === 'string' && err.code.startsWith('WL')) {
      return new WorkloadError(message, err.detail, { code: message.split(':', 1)[0], sqlstate: err.code, cause: err });
    }
    return err;
  }
  return new cls(message, err.detail, { cause: err });
}

// ---- what a handler throws ---------------------------------------------------

/**
 * Thrown by a handler: fail the workload with a kind that is not retried
 * (the default retry_policy.retry_on does not list "permanent"), so it is
 * dead-lettered.
 */
export class PermanentError extends Error {
  constructor(message, kind = 'permanent') {
    super(message);
    this.name = 'PermanentError';
    this.kind = kind;
  }
}

/**
 * Thrown by a handler: fail the workload with a kind that is retried by
 * default.  Any other error does the same with kind "worker_failure"; this
 * one names the kind ("transient_connection", "timeout").
 */
export class RetryableError extends Error {
  constructor(message, kind = 'worker_failure') {
    super(message);
    this.name = 'RetryableError';
    this.kind = kind;
  }
}

/** ctx.signal's reason, and what ctx.throwIfCancelled() throws. */
export class Cancelled extends Error {
  constructor(message = 'the workload was cancelled') {
    super(message);
    this.name = 'Cancelled';
  }
}
