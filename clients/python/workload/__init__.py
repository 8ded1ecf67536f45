"""workload: a Python client for the workload PostgreSQL extension.

Producers create workloads and wait for them (:class:`Client`,
:class:`AsyncClient`); workers run a handler for each workload they claim
(:func:`run_worker`, :class:`Worker`).  Refusals are the typed errors of
:mod:`workload.errors`.  docs/python.md in the repository is the guide.
"""

from .client import AsyncClient, Client, Created
from .errors import (ERRORS, AuthorizationDeniedError, Cancelled, CapabilityDeniedError,
                     CheckpointTamperedError, ClaimInvalidError,
                     CompensationUnauthorizedError, FenceError, IdempotencyConflictError,
                     InvalidError, LeaseExpiredError, NotFoundError, NotReadyError,
                     PermanentError, QuotaExceededError, RawWriteDeniedError,
                     ResultDuplicateError, RetryableError, SecretRejectedError,
                     SnapshotMismatchError, StaleFenceError, TransitionDeniedError,
                     UnauthorizedError, WorkloadError, from_code)
from .grants import grant, principal, spec
from .worker import AsyncContext, Context, Hooks, Job, Worker, run_worker, run_worker_async

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "Client", "Created", "grant", "principal", "spec",
    "AsyncContext", "Context", "Hooks", "Job", "Worker", "run_worker", "run_worker_async",
    "ERRORS", "WorkloadError", "FenceError", "from_code", "PermanentError", "RetryableError",
    "Cancelled", "InvalidError", "UnauthorizedError", "NotFoundError", "NotReadyError",
    "CapabilityDeniedError", "ClaimInvalidError", "StaleFenceError", "LeaseExpiredError",
    "TransitionDeniedError", "SecretRejectedError", "ResultDuplicateError",
    "IdempotencyConflictError", "CheckpointTamperedError", "SnapshotMismatchError",
    "CompensationUnauthorizedError", "RawWriteDeniedError", "AuthorizationDeniedError",
    "QuotaExceededError",
]
