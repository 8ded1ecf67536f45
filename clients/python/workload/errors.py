"""Typed errors.

Every refusal of the SQL API is one class here, whatever way it arrived: a
single call raises it from the refusal's SQLSTATE (``WL006``), a batch item
answers it as its ``code`` (``WORKLOAD_CLAIM_INVALID``), and both become
:class:`ClaimInvalidError`.  The table below mirrors
``SELECT * FROM workload_error_codes()``; the tests compare the two.
"""

from __future__ import annotations

from typing import Dict, Optional, Type


class WorkloadError(Exception):
    """A refusal of the SQL API: the call changed nothing."""

    code: str = ""
    """The stable token the server's message starts with (``WORKLOAD_STALE_FENCE``)."""
    sqlstate: str = ""
    """The refusal's SQLSTATE (``WL007``)."""

    def __init__(self, message: str = "", detail: Optional[str] = None, *,
                 code: Optional[str] = None, sqlstate: Optional[str] = None):
        if code:
            self.code = code
        if sqlstate:
            self.sqlstate = sqlstate
        self.message = message or self.code
        self.detail = detail
        super().__init__(self.message if not detail else f"{self.message} ({detail})")


class FenceError(WorkloadError):
    """The workload is no longer this worker's: stop, and never resend the call."""


class InvalidError(WorkloadError):
    code, sqlstate = "WORKLOAD_INVALID", "WL001"


class UnauthorizedError(WorkloadError):
    code, sqlstate = "WORKLOAD_UNAUTHORIZED", "WL002"


class NotFoundError(WorkloadError):
    code, sqlstate = "WORKLOAD_NOT_FOUND", "WL003"


class NotReadyError(WorkloadError):
    code, sqlstate = "WORKLOAD_NOT_READY", "WL004"


class CapabilityDeniedError(WorkloadError):
    code, sqlstate = "WORKLOAD_CAPABILITY_DENIED", "WL005"


class ClaimInvalidError(FenceError):
    code, sqlstate = "WORKLOAD_CLAIM_INVALID", "WL006"


class StaleFenceError(FenceError):
    code, sqlstate = "WORKLOAD_STALE_FENCE", "WL007"


class LeaseExpiredError(FenceError):
    code, sqlstate = "WORKLOAD_LEASE_EXPIRED", "WL008"


class TransitionDeniedError(WorkloadError):
    code, sqlstate = "WORKLOAD_TRANSITION_DENIED", "WL009"


class SecretRejectedError(WorkloadError):
    code, sqlstate = "WORKLOAD_SECRET_REJECTED", "WL010"


class ResultDuplicateError(WorkloadError):
    code, sqlstate = "WORKLOAD_RESULT_DUPLICATE", "WL011"


class IdempotencyConflictError(WorkloadError):
    code, sqlstate = "WORKLOAD_IDEMPOTENCY_CONFLICT", "WL012"


class CheckpointTamperedError(WorkloadError):
    code, sqlstate = "WORKLOAD_CHECKPOINT_TAMPERED", "WL013"


class SnapshotMismatchError(WorkloadError):
    code, sqlstate = "WORKLOAD_SNAPSHOT_MISMATCH", "WL014"


class CompensationUnauthorizedError(WorkloadError):
    code, sqlstate = "WORKLOAD_COMPENSATION_UNAUTHORIZED", "WL015"


class RawWriteDeniedError(WorkloadError):
    code, sqlstate = "WORKLOAD_RAW_WRITE_DENIED", "WL016"


class AuthorizationDeniedError(WorkloadError):
    code, sqlstate = "AUTHORIZATION_DENIED", "WL017"


class QuotaExceededError(WorkloadError):
    code, sqlstate = "WORKLOAD_QUOTA_EXCEEDED", "WL018"


ERRORS: Dict[str, Type[WorkloadError]] = {
    cls.code: cls for cls in (
        InvalidError, UnauthorizedError, NotFoundError, NotReadyError,
        CapabilityDeniedError, ClaimInvalidError, StaleFenceError, LeaseExpiredError,
        TransitionDeniedError, SecretRejectedError, ResultDuplicateError,
        IdempotencyConflictError, CheckpointTamperedError, SnapshotMismatchError,
        CompensationUnauthorizedError, RawWriteDeniedError, AuthorizationDeniedError,
        QuotaExceededError)
}
"""Every refusal class by its code."""

_BY_SQLSTATE = {cls.sqlstate: cls for cls in ERRORS.values()}


def from_code(code: str, message: str = "", detail: Optional[str] = None) -> WorkloadError:
    """The error a batch item's ``code`` names (an unknown code gives a plain WorkloadError)."""
    cls = ERRORS.get(code)
    if cls is None:
        return WorkloadError(message or code, detail, code=code)
    return cls(message or code, detail)


def from_psycopg(exc: BaseException) -> BaseException:
    """The typed error for a psycopg error that is a refusal; anything else unchanged.

    The SQLSTATE decides; a message that starts with a known code decides when
    the SQLSTATE is not one of the table's (a server newer than this library).
    """
    sqlstate = getattr(exc, "sqlstate", None)
    diag = getattr(exc, "diag", None)
    message = (diag.message_primary if diag is not None else None) or str(exc)
    detail = diag.message_detail if diag is not None else None
    cls = _BY_SQLSTATE.get(sqlstate or "")
    if cls is None:
        token = message.split(":", 1)[0]
        cls = ERRORS.get(token)
        if cls is None:
            if sqlstate and sqlstate.startswith("WL"):
                return WorkloadError(message, detail, code=token, sqlstate=sqlstate)
            return exc
    err = cls(message, detail)
    err.__cause__ = exc
    return err


# ---- what a handler raises --------------------------------------------------


class PermanentError(Exception):
    """Raised by a handler: fail the workload with a kind that is not retried.

    ``kind`` is recorded as the failure's kind; the workload's
    ``retry_policy.retry_on`` decides, and the default one does not list
    ``"permanent"``, so the workload is dead-lettered.
    """

    def __init__(self, message: str = "", kind: str = "permanent"):
        super().__init__(message)
        self.kind = kind


class RetryableError(Exception):
    """Raised by a handler: fail the workload with a kind that is retried by default.

    Any other exception does the same with kind ``"worker_failure"``; this one
    lets the handler name the kind (``"transient_connection"``, ``"timeout"``).
    """

    def __init__(self, message: str = "", kind: str = "worker_failure"):
        super().__init__(message)
        self.kind = kind


class Cancelled(Exception):
    """Raised by ``ctx.raise_if_cancelled()``: the workload's cancellation was requested."""
