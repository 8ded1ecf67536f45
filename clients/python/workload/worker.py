"""The worker: claims a tenant's workloads and runs a handler for each.

One asyncio loop does the protocol for both kinds of handler: claims in
batches, each with its workloads' verified execution contexts (woken by
LISTEN on the tenant's channel, followed when the server renames it, with a
poll fallback), one heartbeat call for every held claim each third of the
lease, completions sent together, failures with a kind taken from the
exception, cancellation, and draining on SIGTERM.  A
plain function handler runs in one of ``concurrency`` threads; a coroutine
function runs on the loop.  Every state change is the server's decision: the
worker only reports what happened and acts on the answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import signal
import socket
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from . import _sql
from .errors import (AuthorizationDeniedError, Cancelled, CheckpointTamperedError,
                     FenceError, SecretRejectedError, SnapshotMismatchError,
                     TransitionDeniedError, WorkloadError, from_code, from_psycopg)

log = logging.getLogger("workload")

_KIND_OF_REFUSAL = {
    AuthorizationDeniedError: "authorization_denied",
    CheckpointTamperedError: "checkpoint_tampered",
    SnapshotMismatchError: "snapshot_mismatch",
}


@dataclass
class Hooks:
    """Callbacks, one per outcome, for logging and metrics (each optional).

    ``claimed(job)``; ``succeeded(job, output)``; ``failed(job, kind, error,
    state)`` with ``state`` where the server moved it (``READY``: retried;
    ``DEAD_LETTER``); ``cancelled(job)``; ``lost(job, error)`` when the
    workload stopped being this worker's (a fence refusal); ``error(exc)``
    for what goes wrong beside a job (a lost connection).  ``job.elapsed``
    is the seconds since the claim.  A hook that raises is logged and ignored.
    """
    claimed: Optional[Callable[..., Any]] = None
    succeeded: Optional[Callable[..., Any]] = None
    failed: Optional[Callable[..., Any]] = None
    cancelled: Optional[Callable[..., Any]] = None
    lost: Optional[Callable[..., Any]] = None
    error: Optional[Callable[..., Any]] = None


class Job:
    """One claimed workload, as the handler sees it (``ctx``)."""

    def __init__(self, worker: "Worker", row: Sequence[Any]):
        (self.workload_id, self.claim_id, self.fencing_token, self.lease_expires_at,
         self.attempt, self.definition_id, self.definition_revision, self.input,
         self.checkpoint_sequence, self.execution_context) = row
        # execution_context: what workload_execution_context answers for this claim (a dict:
        # capabilities, connection_scopes, secret_references, attempt_id, ...), verified by
        # the server before the handler runs
        self.tenant = worker.tenant
        self.application = worker.application
        self.worker_id = worker.worker_id
        self.resumed: Optional[Dict[str, Any]] = None
        """workload_resume's whole answer (checkpoint and wake), once resume() ran."""
        self._worker = worker
        self._progress: Any = None
        self._cancel_requested = False
        self._lost: Optional[FenceError] = None
        self._abandoned = False
        self._claimed_at = time.monotonic()

    @property
    def result_id(self) -> str:
        """The completion's result id: ``workload_id:attempt``."""
        return f"{self.workload_id}:{self.attempt}"

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._claimed_at

    @property
    def cancelled(self) -> bool:
        """True once the handler should stop: its cancellation was requested, the
        workload is no longer this worker's, or the worker stopped waiting for it."""
        return self._cancel_requested or self._lost is not None or self._abandoned

    @property
    def lost(self) -> bool:
        """True when the workload is no longer this worker's (its result would be refused)."""
        return self._lost is not None

    def raise_if_cancelled(self) -> None:
        """Raises :class:`Cancelled` when :attr:`cancelled`."""
        if self.cancelled:
            raise Cancelled(f"workload {self.workload_id} was cancelled")

    def progress(self, value: Any) -> None:
        """Progress (small JSON) sent with the next heartbeat, shown by workload_get."""
        self._progress = value

    def _fence(self) -> tuple:
        return (self.tenant, self.workload_id, self.claim_id, self.worker_id, self.fencing_token)

    def __repr__(self) -> str:
        return f"<Job {self.workload_id} attempt {self.attempt} token {self.fencing_token}>"


class AsyncContext(Job):
    """The context of a coroutine handler: checkpoint and resume are awaited."""

    async def checkpoint(self, state: Any) -> Dict[str, Any]:
        """Stores ``state`` as the next checkpoint (authenticated by the server)."""
        return await self._worker._checkpoint(self, state)

    async def resume(self) -> Any:
        """The latest verified checkpoint's state, or None; raises CheckpointTamperedError."""
        return await self._worker._resume(self)


class Context(Job):
    """The context of a plain function handler (it runs in a thread of its own)."""

    def checkpoint(self, state: Any) -> Dict[str, Any]:
        """Stores ``state`` as the next checkpoint (authenticated by the server)."""
        return self._worker._from_thread(self._worker._checkpoint(self, state))

    def resume(self) -> Any:
        """The latest verified checkpoint's state, or None; raises CheckpointTamperedError."""
        return self._worker._from_thread(self._worker._resume(self))


class _Threads:
    """``n`` daemon threads for plain function handlers: a handler that never
    returns cannot keep the process alive after the worker stops."""

    def __init__(self, n: int):
        self._q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        for i in range(n):
            threading.Thread(target=self._serve, name=f"workload-handler-{i}", daemon=True).start()

    def _serve(self) -> None:
        while True:
            loop, fut, fn, args = self._q.get()
            try:
                r, e = fn(*args), None
            except BaseException as exc:  # the handler's, handed to the loop
                r, e = None, exc
            loop.call_soon_threadsafe(_settle, fut, r, e)

    def run(self, fn: Callable[..., Any], *args: Any) -> "asyncio.Future[Any]":
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._q.put((loop, fut, fn, args))
        return fut


def _settle(fut: "asyncio.Future[Any]", r: Any, e: Optional[BaseException]) -> None:
    if not fut.done():
        if e is not None:
            fut.set_exception(e)
        else:
            fut.set_result(r)


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:8000]


def _kind_of(exc: BaseException) -> str:
    for cls, kind in _KIND_OF_REFUSAL.items():
        if isinstance(exc, cls):
            return kind
    kind = getattr(exc, "kind", None)
    return kind if isinstance(kind, str) and kind else "worker_failure"


class Worker:
    """Runs ``handler(input, ctx)`` for workloads of one tenant and application.

    The handler's return value (JSON; None is ``{}``) completes the workload;
    an exception fails it, with the kind ``"worker_failure"`` (retried by the
    default policy), the ``kind`` of a :class:`PermanentError` or
    :class:`RetryableError`, or any exception's ``kind`` attribute.
    """

    def __init__(self, conninfo: str, tenant: str, application: str,
                 capabilities: Sequence[str], handler: Callable[..., Any], *,
                 concurrency: int = 1, lease: float = 30.0, batch: Optional[int] = None,
                 worker_id: Optional[str] = None, poll: float = 5.0, grace: float = 30.0,
                 hooks: Optional[Hooks] = None, expected_snapshots: Any = None,
                 secret_references: Sequence[str] = (), pool_size: Optional[int] = None,
                 context: bool = True):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if not 0 < lease <= 86400:
            raise ValueError("lease is seconds, above 0 and at most a day")
        self.conninfo = conninfo
        self.tenant = tenant
        self.application = application
        self.capabilities = list(capabilities)
        self.handler = handler
        self.concurrency = concurrency
        self.lease = lease
        self.batch = max(1, min(batch or concurrency, 1000))
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.poll = poll
        self.grace = grace
        self.hooks = hooks or Hooks()
        self.expected_snapshots = expected_snapshots
        self.secret_references = list(secret_references)
        self.pool_size = pool_size or 2 + concurrency // 4
        self.context = context
        self._is_async = asyncio.iscoroutinefunction(handler)
        self._jobs: Dict[str, Job] = {}
        self._tasks: Dict[str, "asyncio.Task[None]"] = {}
        self._handlers_running = 0
        self._stopping = False
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._where: Optional[tuple] = None
        self._target = conninfo
        self._pool: Optional[AsyncConnectionPool] = None
        self._threads: Optional[_Threads] = None
        self._done_channel = ""
        self._channel = ""
        self._claim_sql = _sql.claim_sql(False)

    # ---- running and stopping ---------------------------------------------

    def stop(self) -> None:
        """Stops claiming and lets the running handlers finish (within ``grace``
        seconds); a second call ends the grace period.  Safe from a signal
        handler or another thread."""
        loop = self._loop
        if loop is None:
            self._stopping = True
            return
        loop.call_soon_threadsafe(self._request_stop)

    def _request_stop(self) -> None:
        if self._stopping:
            self._hard_stop.set()
        self._stopping = True
        self._wake.set()

    async def run(self, *, handle_signals: bool = False) -> None:
        """Runs until :meth:`stop` (or SIGTERM/SIGINT with ``handle_signals``),
        then drains.  Raises a setup refusal (not a member, no such function)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._hard_stop = asyncio.Event()
        self._handler_done = asyncio.Event()
        self._listener: Optional["asyncio.Task[None]"] = None
        if not self._is_async:
            self._threads = _Threads(self.concurrency)
        if handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(sig, self._request_stop)
        try:
            await self._setup()
        except BaseException:
            if self._pool is not None:
                await self._pool.close()
            raise
        self._listener = asyncio.create_task(self._listen())
        beats = asyncio.create_task(self._heartbeats())
        self._completer = _Completer(self)
        flusher = asyncio.create_task(self._completer.loop())
        try:
            await self._claim_loop()
            await self._drain()
            await self._completer.flush_all()
        finally:
            tasks = (self._listener, beats, flusher)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self._pool is not None:
                await self._pool.close()
            if handle_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.remove_signal_handler(sig)

    async def _setup(self) -> None:
        """Finds the tenant's node, opens the pool there, and learns the channel."""
        async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as conn:
            self._where = (conn.info.host, str(conn.info.port))
            node = await self._ask_node(conn)
            if node is not None and not self._here(node):
                log.info("tenant %s is held by the node at %s:%s; connecting there",
                         self.tenant, *node)
                self._target = make_conninfo(self.conninfo, host=node[0], port=node[1])
                self._where = node
            # the claim's context names no secret references: with some, they are asked for
            has_context = (await (await conn.execute(_sql.CLAIM_HAS_CONTEXT)).fetchone())[0]
            self._claim_sql = _sql.claim_sql(self.context and has_context
                                             and not self.secret_references)
        self._pool = await self._open_pool(self._target)
        channel = (await self._call(_sql.CHANNEL, (self.tenant, self.application)))[0][0]
        self._channel = channel
        self._done_channel = _sql.done_channel(channel)

    async def _open_pool(self, conninfo: str) -> AsyncConnectionPool:
        pool = AsyncConnectionPool(conninfo, min_size=1, max_size=self.pool_size,
                                   kwargs={"autocommit": True}, open=False,
                                   name=f"workload-{self.worker_id}")
        await pool.open(wait=True, timeout=30)
        return pool

    async def _ask_node(self, conn: psycopg.AsyncConnection) -> Optional[tuple]:
        """workload_tenant_node's answer, or None (one node; a server without it)."""
        try:
            row = await (await conn.execute(_sql.TENANT_NODE, (self.tenant,))).fetchone()
        except psycopg.OperationalError:
            raise
        except psycopg.Error as e:
            if e.sqlstate != "42883":  # no such function: a server before it existed
                log.warning("could not ask where tenant %s is (%s); staying", self.tenant, e)
            return None
        return (row[0], str(row[1])) if row else None

    def _here(self, node: tuple) -> bool:
        host, port = self._where or ("", "")
        return node[1] == port and (node[0] == host or host.startswith("/"))

    async def _relocate(self) -> bool:
        """Asks again where the tenant is; moves the pool and the listener there when
        it changed.  Answers whether it moved."""
        try:
            async with await psycopg.AsyncConnection.connect(self._target, autocommit=True,
                                                             connect_timeout=10) as conn:
                node = await self._ask_node(conn)
        except psycopg.OperationalError:
            async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True,
                                                             connect_timeout=10) as conn:
                node = await self._ask_node(conn)
        if node is None or self._here(node):
            return False
        log.info("tenant %s is now held by the node at %s:%s; moving there", self.tenant, *node)
        old = self._pool
        self._target = make_conninfo(self.conninfo, host=node[0], port=node[1])
        self._where = node
        self._pool = await self._open_pool(self._target)
        if self._listener is not None:
            self._listener.cancel()
            self._listener = asyncio.create_task(self._listen())
        if old is not None:
            asyncio.create_task(old.close())
        return True

    # ---- calls -------------------------------------------------------------

    async def _call(self, sql: str, params: Sequence[Any], *, resend: bool = True) -> List[tuple]:
        """One statement on the pool.  A refusal is raised as its typed error.  A
        lost connection is retried (after asking where the tenant is now) when
        ``resend``: every call but the claim is safe to send again."""
        for attempt in range(6):
            assert self._pool is not None
            try:
                async with self._pool.connection() as conn:
                    cur = await conn.execute(sql, params)
                    return await cur.fetchall()
            except psycopg.OperationalError as e:
                err = from_psycopg(e)
                if err is not e:
                    raise err from None
                if not resend or attempt == 5:
                    raise
                self._hook("error", e)
                await asyncio.sleep(min(0.5 * 2 ** attempt, 10))
                try:
                    await self._relocate()
                except psycopg.Error:
                    pass
            except psycopg.Error as e:
                err = from_psycopg(e)
                if err is not e:
                    raise err from None
                # not a refusal: if the tenant has moved, the new node answers
                if resend and attempt == 0 and await self._relocate():
                    continue
                raise
        raise AssertionError("unreachable")

    async def _fenced(self, job: Job, sql: str, *args: Any) -> List[tuple]:
        try:
            return await self._call(sql, job._fence() + args)
        except FenceError as e:
            job._lost = job._lost or e
            raise
        except TransitionDeniedError:
            job._cancel_requested = True
            raise

    async def _checkpoint(self, job: Job, state: Any) -> Dict[str, Any]:
        return (await self._fenced(job, _sql.CHECKPOINT, Jsonb(state)))[0][0]

    async def _resume(self, job: Job) -> Any:
        snap = Jsonb(self.expected_snapshots) if self.expected_snapshots is not None else None
        job.resumed = (await self._fenced(job, _sql.RESUME, snap))[0][0]
        cp = job.resumed.get("checkpoint") if job.resumed else None
        return cp.get("state") if cp else None

    def _from_thread(self, coro: Awaitable[Any]) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]

    def _hook(self, name: str, *args: Any) -> None:
        fn = getattr(self.hooks, name, None)
        if name == "error":
            log.warning("workload worker %s: %s", self.worker_id, args[0])
        if fn is None:
            return
        try:
            fn(*args)
        except Exception:
            log.exception("the %s hook raised", name)

    # ---- claiming ----------------------------------------------------------

    async def _claim_loop(self) -> None:
        backoff = 0.25
        while not self._stopping:
            self._wake.clear()
            free = self.concurrency - len(self._jobs)
            if free <= 0:  # every slot busy: until a job ends (or stop)
                await self._sleep(None)
                continue
            want = min(free, self.batch)
            try:
                rows = await self._call(self._claim_sql, (
                    self.worker_id, self.capabilities, self.tenant, self.application,
                    timedelta(seconds=self.lease), want), resend=False)
            except psycopg.OperationalError as e:
                self._hook("error", e)  # a claim that committed comes back through recovery
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.poll)
                continue
            if rows and rows[0][9] is None:
                rows = await self._with_contexts(rows)
            for row in rows:
                self._start(row)
            if rows:
                backoff = 0.25
            if len(rows) == want:  # maybe more: claim again at once when a slot is free
                continue
            if await self._sleep(backoff):
                backoff = 0.25
                continue
            backoff = min(backoff * 2, self.poll)
            if backoff >= self.poll:  # a quiet round: is the tenant still on this node?
                try:
                    await self._relocate()
                except psycopg.Error as e:
                    self._hook("error", e)

    async def _with_contexts(self, rows: List[tuple]) -> List[tuple]:
        """The claimed rows with their execution contexts, asked for in one statement
        (a claim without ``context``).  When that is refused (one item's authority
        lapsed, say), the rows go without, and each job asks for its own."""
        items = json.dumps([{"workload_id": r[0], "claim_id": r[1], "fencing_token": r[2]}
                            for r in rows])
        try:
            got = dict(await self._call(_sql.EXECUTION_CONTEXTS, (
                self.tenant, self.worker_id, self.secret_references, items)))
        except (WorkloadError, psycopg.Error):
            return rows
        return [tuple(r[:9]) + (got.get(r[0]),) for r in rows]

    async def _sleep(self, timeout: Optional[float]) -> bool:
        """Until woken (a notification, a finished job, stop) or ``timeout``: whether woken."""
        try:
            await asyncio.wait_for(self._wake.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def _listen(self) -> None:
        """LISTENs on the tenant's channel on a connection of its own (again after a
        loss; _relocate starts another after a move) and wakes the claim loop on
        each notification.  When the server says it renamed the channel, it
        LISTENs on the new name, and completions are announced on the new done
        channel."""
        backoff = 0.5
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self._target, autocommit=True) as conn:
                    renamed = [False]

                    def heard(n: psycopg.Notify) -> None:
                        if n.payload == _sql.CHANNEL_ROTATED:
                            renamed[0] = True
                        self._wake.set()

                    # what arrives while this connection runs a statement goes to handlers
                    conn.add_notify_handler(heard)
                    await self._follow(conn, None)
                    self._wake.set()  # what became READY before the LISTEN
                    backoff = 0.5
                    async for n in conn.notifies():
                        heard(n)
                        while renamed[0]:
                            renamed[0] = False
                            await self._follow(conn, self._channel)
                            self._wake.set()  # what became READY under the new name meanwhile
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a lost connection: LISTEN again
                self._hook("error", e)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 10)

    async def _follow(self, conn: psycopg.AsyncConnection, listened: Optional[str]) -> None:
        """Moves the listener to the channel's current name (from ``listened``, the name it
        LISTENs on, or None on a new connection)."""
        try:
            channel = await _sql.follow_async(conn, self.tenant, self.application, listened)
        except psycopg.Error as e:
            raise from_psycopg(e) from None
        if channel != self._channel:
            log.info("the channel of %s/%s was renamed; listening on the new name",
                     self.tenant, self.application)
        self._channel = channel
        self._done_channel = _sql.done_channel(channel)

    # ---- one job -------------------------------------------------------------

    def _start(self, row: Sequence[Any]) -> None:
        job = (AsyncContext if self._is_async else Context)(self, row)
        self._jobs[job.workload_id] = job
        self._tasks[job.workload_id] = asyncio.create_task(self._run_job(job))

    async def _run_job(self, job: Job) -> None:
        try:
            self._hook("claimed", job)
            self._handlers_running += 1
            try:
                if job.execution_context is None:
                    job.execution_context = (await self._fenced(
                        job, _sql.EXECUTION_CONTEXT, self.secret_references))[0][0]
                if self._is_async:
                    output = await self.handler(job.input, job)
                else:
                    assert self._threads is not None
                    output = await self._threads.run(self.handler, job.input, job)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                self._handler_finished()
                await self._after_error(job, exc)
                return
            self._handler_finished()
            if job._lost is not None:
                self._hook("lost", job, job._lost)
            elif job._cancel_requested:
                await self._confirm(job)
            else:
                await self._complete(job, output)
        except asyncio.CancelledError:
            if not job._abandoned:
                raise
        except Exception as e:  # a report that could not be sent: the lease runs out
            self._hook("error", e)
        finally:
            self._jobs.pop(job.workload_id, None)
            self._tasks.pop(job.workload_id, None)
            self._wake.set()

    def _handler_finished(self) -> None:
        self._handlers_running -= 1
        self._handler_done.set()

    async def _after_error(self, job: Job, exc: BaseException) -> None:
        if job._lost is not None or isinstance(exc, FenceError):
            self._hook("lost", job, job._lost or exc)
            return
        if job._cancel_requested or isinstance(exc, (Cancelled, TransitionDeniedError)):
            if await self._confirm(job):
                return
        await self._fail(job, _kind_of(exc), _error_text(exc))

    async def _fail(self, job: Job, kind: str, text: str) -> None:
        for _ in range(2):
            try:
                rows = await self._fenced(job, _sql.FAIL, kind, text, self._done_channel,
                                          job.workload_id)
            except SecretRejectedError:
                text = f"{kind}: the error text was refused as a secret"
                continue
            except FenceError as e:
                self._hook("lost", job, e)
                return
            except TransitionDeniedError:  # a cancel came first: it wins
                await self._confirm(job)
                return
            self._hook("failed", job, kind, text, rows[0][0])
            return

    async def _confirm(self, job: Job) -> bool:
        """Confirms a requested cancellation; False when none was requested."""
        try:
            await self._fenced(job, _sql.CONFIRM_CANCEL, self._done_channel, job.workload_id)
        except TransitionDeniedError:
            job._cancel_requested = False
            return False
        except FenceError as e:
            self._hook("lost", job, e)
            return True
        self._hook("cancelled", job)
        return True

    async def _complete(self, job: Job, output: Any) -> None:
        if output is None:
            output = {}
        try:
            text = json.dumps(output)
        except (TypeError, ValueError) as e:
            await self._fail(job, "invalid_output", f"the handler's return value is not JSON: {e}")
            return
        outcome, code, result = await self._completer.complete(job, text)
        if outcome == "succeeded":
            self._hook("succeeded", job, output)
        elif outcome == "completion_criteria_unmet":
            self._hook("failed", job, "completion_criteria_unmet",
                       (result or {}).get("reason", ""), "DEAD_LETTER")
        elif code in _sql.FENCE_CODES:
            self._hook("lost", job, from_code(code))
        elif code == "WORKLOAD_TRANSITION_DENIED":
            job._cancel_requested = True
            if not await self._confirm(job):
                await self._fail(job, "invalid_output", f"{code}: the completion was refused")
        else:
            await self._fail(job, "invalid_output", f"{code}: the output was refused")

    async def _drain(self) -> None:
        """After stop: the running handlers get ``grace`` seconds (a second stop ends
        it); what is still running then is failed as worker_failure and abandoned."""
        loop = asyncio.get_running_loop()
        end = loop.time() + self.grace
        hard = asyncio.create_task(self._hard_stop.wait())
        while self._tasks and not self._hard_stop.is_set() and loop.time() < end:
            await asyncio.wait(set(self._tasks.values()) | {hard}, timeout=end - loop.time(),
                               return_when=asyncio.FIRST_COMPLETED)
        hard.cancel()
        for wid, task in list(self._tasks.items()):
            job = self._jobs.get(wid)
            if job is None:
                continue
            job._abandoned = True
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await self._fail(job, "worker_failure", "the worker was stopped before the handler returned")

    # ---- heartbeats ------------------------------------------------------------

    async def _heartbeats(self) -> None:
        extend = timedelta(seconds=self.lease)
        while True:
            await asyncio.sleep(self.lease / 3)
            jobs = [j for j in self._jobs.values() if not j._lost]
            if not jobs:
                continue
            sent = {j.workload_id: j._progress for j in jobs}
            items = []
            for j in jobs:
                item = {"workload_id": j.workload_id, "claim_id": j.claim_id,
                        "fencing_token": j.fencing_token}
                if j._progress is not None:
                    item["progress"] = j._progress
                items.append(item)
            try:
                rows = await self._call(_sql.HEARTBEAT_MANY, (
                    self.tenant, self.worker_id, json.dumps(items), extend))
            except Exception as e:
                self._hook("error", e)
                continue
            for wid, outcome, code, answer in rows:
                job = self._jobs.get(wid)
                if job is None:
                    continue
                if outcome == "extended":
                    if job._progress is sent.get(wid):
                        job._progress = None
                    if answer and answer.get("cancellation_requested"):
                        job._cancel_requested = True
                elif code in _sql.FENCE_CODES:
                    job._lost = job._lost or from_code(code)
                elif code == "WORKLOAD_SECRET_REJECTED":  # the progress: drop it, extend alone
                    job._progress = None
                    try:
                        a = (await self._fenced(job, _sql.HEARTBEAT, extend, None))[0][0]
                        if a.get("cancellation_requested"):
                            job._cancel_requested = True
                    except WorkloadError as e:
                        self._hook("error", e)
                else:
                    self._hook("error", from_code(code))


class _Completer:
    """Sends the completions of handlers that return close together in one
    workload_complete_many call (each item decided on its own), waiting up to
    20 ms for others while other handlers still run."""

    def __init__(self, worker: Worker):
        self._w = worker
        self._pending: List[tuple] = []
        self._event = asyncio.Event()

    async def complete(self, job: Job, output_text: str) -> tuple:
        fut = asyncio.get_running_loop().create_future()
        item = ('{"workload_id":%s,"claim_id":%s,"fencing_token":%d,"result_id":%s,"output":%s}'
                % (json.dumps(job.workload_id), json.dumps(job.claim_id), job.fencing_token,
                   json.dumps(job.result_id), output_text))
        self._pending.append((job, item, fut))
        self._event.set()
        return await fut

    async def loop(self) -> None:
        while True:
            await self._event.wait()
            self._event.clear()
            end = time.monotonic() + 0.02
            w = self._w
            while w._handlers_running > 0 and len(self._pending) < 100:
                left = end - time.monotonic()
                if left <= 0:
                    break
                w._handler_done.clear()
                try:
                    await asyncio.wait_for(w._handler_done.wait(), left)
                except asyncio.TimeoutError:
                    break
            await self.flush_all()

    async def flush_all(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:100], self._pending[100:]
            await self._send(batch)

    async def _send(self, batch: List[tuple]) -> None:
        w = self._w
        items = "[" + ",".join(b[1] for b in batch) + "]"
        try:
            rows = await w._call(_sql.COMPLETE_MANY, (w._done_channel or None, w.tenant,
                                                      w.worker_id, items))
        except WorkloadError:  # refused whole (a size limit): one by one
            for job, item, fut in batch:
                await self._send_one(job, item, fut)
            return
        except Exception as e:
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(e)
            return
        answers = {r[0]: r for r in rows}
        for job, _, fut in batch:
            r = answers.get(job.workload_id)
            if not fut.done():
                fut.set_result((r[1], r[2], r[3]) if r else ("refused", "WORKLOAD_INVALID", None))

    async def _send_one(self, job: Job, item: str, fut: "asyncio.Future[Any]") -> None:
        w = self._w
        output = json.loads(item)["output"]
        try:
            rows = await w._call(_sql.COMPLETE, job._fence() + (
                job.result_id, json.dumps(output), w._done_channel or None, job.workload_id))
            answer = rows[0][0]
            fut.set_result((answer.get("outcome", "succeeded"), None, answer))
        except WorkloadError as e:
            fut.set_result(("refused", e.code, None))
        except Exception as e:
            fut.set_exception(e)


async def run_worker_async(conninfo: str, tenant: str, application: str,
                           capabilities: Sequence[str], handler: Callable[..., Any], *,
                           handle_signals: bool = True, **options: Any) -> None:
    """:func:`run_worker` inside a running asyncio loop."""
    await Worker(conninfo, tenant, application, capabilities, handler,
                 **options).run(handle_signals=handle_signals)


def run_worker(conninfo: str, tenant: str, application: str, capabilities: Sequence[str],
               handler: Callable[..., Any], **options: Any) -> None:
    """Runs a worker until SIGTERM or SIGINT, then drains and returns.

    ``handler(input, ctx)`` is a function (run in one of ``concurrency``
    threads) or a coroutine function.  Options: ``concurrency`` (1),
    ``lease`` seconds (30; heartbeats every third), ``batch`` (claims per call,
    default ``concurrency``), ``worker_id``, ``poll`` (longest sleep between
    claims without a notification, 5 s), ``grace`` (seconds the running
    handlers get after SIGTERM, 30), ``hooks`` (:class:`Hooks`),
    ``expected_snapshots``, ``secret_references``, ``pool_size``, ``context``
    (True: each claim hands out its workloads' execution contexts; False: they
    are asked for in a second statement).
    """
    asyncio.run(run_worker_async(conninfo, tenant, application, capabilities, handler,
                                 **options))
