"""The producer's side: create, read, cancel, retry, redrive, schedules, and
wait for a workload to finish.  ``Client`` is synchronous, ``AsyncClient``
the same for asyncio; both are one SQL call per method, refusals raised as
the typed errors of :mod:`workload.errors`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import psycopg
from psycopg.types.json import Jsonb

from . import _sql
from .errors import WorkloadError, from_code, from_psycopg
from .grants import spec as _spec

Doc = Dict[str, Any]


@dataclass(frozen=True)
class Created:
    """One item of ``create_many``: ``outcome`` is ``created``, ``existing`` or ``refused``."""
    ord: int
    workload_id: Optional[str]
    outcome: str
    code: Optional[str]
    document: Optional[Doc]

    @property
    def error(self) -> Optional[WorkloadError]:
        """The refusal as its typed error (not raised), or None."""
        return from_code(self.code) if self.code else None


class _Producer:
    """What Client and AsyncClient share: the bound tenant and application, and each call's SQL."""

    def __init__(self, tenant: str, application: str, grant: Optional[Mapping[str, Any]],
                 environment: str):
        self.tenant = tenant
        self.application = application
        self.grant = grant
        self.environment = environment

    def spec(self, definition_id: str, input: Any, *, key: str, **fields: Any) -> Doc:
        """A create spec in this client's tenant and application, under its grant (see grants.spec)."""
        fields.setdefault("environment", self.environment)
        grant = fields.pop("grant", self.grant)
        if grant is None:
            raise ValueError("no grant: pass grant= here or to the client")
        return _spec(self.tenant, self.application, definition_id, input, key=key,
                     grant=grant, **fields)

    def template(self, definition_id: str, input: Any, **fields: Any) -> Doc:
        """A schedule's template: a spec without tenant, application and idempotency key."""
        s = self.spec(definition_id, input, key="-", **fields)
        for k in ("tenant_id", "application_id", "idempotency_key"):
            s.pop(k)
        return s

    def _as_spec(self, what: Union[str, Mapping[str, Any]], input: Any, key: Optional[str],
                 fields: Dict[str, Any]) -> Doc:
        if isinstance(what, Mapping):
            return dict(what)
        if key is None:
            raise ValueError("create needs key= (the idempotency key)")
        return self.spec(what, input, key=key, **fields)

    def _redrive_args(self, actor: str, definition_id: Optional[str], failure_kind: Optional[str],
                      limit: int) -> tuple:
        return (self.tenant, self.application, actor, definition_id, failure_kind, limit)


def _created(rows: Sequence[tuple]) -> List[Created]:
    return [Created(*r) for r in rows]


class Client(_Producer):
    """A producer bound to one tenant and application.

    ``conn`` is a connection string or an open ``psycopg.Connection`` (in
    autocommit mode, or each call joins its transaction).  ``grant`` is the
    signed grant specs are created under unless a call names another.
    """

    def __init__(self, conn: Union[str, psycopg.Connection], tenant: str, application: str, *,
                 grant: Optional[Mapping[str, Any]] = None, environment: str = "default"):
        super().__init__(tenant, application, grant, environment)
        self._own = isinstance(conn, str)
        self._conninfo = conn if isinstance(conn, str) else conn.info.dsn
        self._conn = psycopg.connect(conn, autocommit=True) if isinstance(conn, str) else conn

    def close(self) -> None:
        if self._own:
            self._conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _rows(self, sql: str, params: Sequence[Any]) -> List[tuple]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except psycopg.Error as e:
            raise from_psycopg(e) from None

    def _one(self, sql: str, params: Sequence[Any]) -> Any:
        return self._rows(sql, params)[0][0]

    def create(self, what: Union[str, Mapping[str, Any]], input: Any = None, *,
               key: Optional[str] = None, **fields: Any) -> Doc:
        """Creates a workload: ``create(spec)`` or ``create(definition_id, input, key=...)``.
        Returns its document; the same key again returns the same workload."""
        return self._one("SELECT workload_create(%s)",
                         (Jsonb(self._as_spec(what, input, key, fields)),))

    def create_many(self, specs: Iterable[Mapping[str, Any]]) -> List[Created]:
        """Creates up to 1000 workloads in one transaction, each decided on its own."""
        return _created(self._rows(
            "SELECT ord, workload_id, outcome, code, document FROM workload_create_many(%s)",
            (Jsonb(list(specs)),)))

    def get(self, workload_id: str) -> Doc:
        """The whole document: state, attempts, checkpoints, result, events."""
        return self._one("SELECT workload_get(%s)", (workload_id,))

    def list(self, state: Optional[str] = None, limit: int = 100) -> List[Doc]:
        return [r[0] for r in self._rows("SELECT workload_list(%s, %s, %s::workload_state, %s)",
                                         (self.tenant, self.application, state, limit))]

    def stats(self) -> Doc:
        return self._one("SELECT workload_stats(%s, %s)", (self.tenant, self.application))

    def cancel(self, workload_id: str, actor: str) -> str:
        """Cancels it, or requests its cancellation while a worker runs it; answers the new state."""
        return self._one("SELECT workload_cancel(%s, %s)::text", (workload_id, actor))

    def retry(self, workload_id: str, actor: str) -> str:
        """A FAILED, TIMED_OUT or DEAD_LETTER workload back to READY, due now."""
        return self._one("SELECT workload_retry(%s, %s)::text", (workload_id, actor))

    def redrive(self, actor: str, *, definition_id: Optional[str] = None,
                failure_kind: Optional[str] = None, limit: int = 1000) -> List[str]:
        """Retries up to ``limit`` dead letters (oldest first); answers their ids."""
        return [r[0] for r in self._rows("SELECT workload_redrive(%s, %s, %s, %s, %s, %s)",
                                         self._redrive_args(actor, definition_id, failure_kind, limit))]

    def signal(self, wake_key: str, payload: Any) -> int:
        return self._one("SELECT workload_signal(%s, %s, %s, %s)",
                         (self.tenant, self.application, wake_key, Jsonb(payload)))

    def schedule(self, schedule_id: str, cron: str, template: Mapping[str, Any], *,
                 timezone: str = "UTC", overlap: str = "skip", catch_up: str = "latest") -> Doc:
        """Creates or replaces a schedule (``template``: see :meth:`template`)."""
        return self._one("SELECT workload_schedule(%s, %s, %s, %s, %s, %s, %s, %s)",
                         (self.tenant, self.application, schedule_id, cron, Jsonb(dict(template)),
                          timezone, overlap, catch_up))

    def schedules(self) -> List[Doc]:
        return [r[0] for r in self._rows("SELECT workload_schedules(%s, %s)",
                                         (self.tenant, self.application))]

    def pause_schedule(self, schedule_id: str) -> Doc:
        return self._one("SELECT workload_schedule_pause(%s, %s, %s)",
                         (self.tenant, self.application, schedule_id))

    def resume_schedule(self, schedule_id: str) -> Doc:
        return self._one("SELECT workload_schedule_resume(%s, %s, %s)",
                         (self.tenant, self.application, schedule_id))

    def drop_schedule(self, schedule_id: str) -> None:
        self._rows("SELECT workload_schedule_drop(%s, %s, %s)",
                   (self.tenant, self.application, schedule_id))

    def sign_grant(self, grant: Mapping[str, Any]) -> Doc:
        """Signs a grant body (see grants.grant); needs a role with workload_admin."""
        return self._one("SELECT workload_sign_grant(%s)", (Jsonb(dict(grant)),))

    def wait(self, workload_id: str, timeout: Optional[float] = None, *, poll: float = 5.0) -> Doc:
        """Waits until the workload is SUCCEEDED, CANCELLED or DEAD_LETTER; answers its document.

        It listens for the workload's finish on a connection of its own and
        reads the document when woken; the document is read again every
        ``poll`` seconds at most too, for finishes nobody announced (a
        timeout the tick enforced, say).  When the server renames the
        tenant's channel, it listens on the new name.  Raises TimeoutError
        after ``timeout``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with psycopg.connect(self._conninfo, autocommit=True) as listener:
            heard: List[Tuple[str, str]] = []  # what arrived while the listener ran a statement
            listener.add_notify_handler(lambda n: heard.append((n.channel, n.payload)))
            channel = _follow(listener, self.tenant, self.application, None)
            backoff = 0.25
            while True:
                doc = self.get(workload_id)
                if doc["state"] in _sql.FINAL_STATES:
                    return doc
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"workload {workload_id} is still {doc['state']}")
                step = 0 if heard else backoff if left is None else min(backoff, left)
                notes = heard + _sql.read_notifies(listener, step)
                heard.clear()
                woken = _finished(notes, channel, workload_id)
                if _renamed(notes):
                    channel = _follow(listener, self.tenant, self.application, channel)
                    woken = True  # a finish announced on the new name before the LISTEN
                backoff = 0.25 if woken else min(backoff * 2, poll)


class AsyncClient(_Producer):
    """:class:`Client` for asyncio: the same methods, awaited."""

    def __init__(self, conn: psycopg.AsyncConnection, tenant: str, application: str, *,
                 grant: Optional[Mapping[str, Any]] = None, environment: str = "default"):
        super().__init__(tenant, application, grant, environment)
        self._conn = conn
        self._own = False

    @classmethod
    async def connect(cls, conninfo: str, tenant: str, application: str, **kw: Any) -> "AsyncClient":
        c = cls(await psycopg.AsyncConnection.connect(conninfo, autocommit=True),
                tenant, application, **kw)
        c._own = True
        return c

    async def close(self) -> None:
        if self._own:
            await self._conn.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _rows(self, sql: str, params: Sequence[Any]) -> List[tuple]:
        try:
            cur = await self._conn.execute(sql, params)
            return await cur.fetchall()
        except psycopg.Error as e:
            raise from_psycopg(e) from None

    async def _one(self, sql: str, params: Sequence[Any]) -> Any:
        return (await self._rows(sql, params))[0][0]

    async def create(self, what: Union[str, Mapping[str, Any]], input: Any = None, *,
                     key: Optional[str] = None, **fields: Any) -> Doc:
        return await self._one("SELECT workload_create(%s)",
                               (Jsonb(self._as_spec(what, input, key, fields)),))

    async def create_many(self, specs: Iterable[Mapping[str, Any]]) -> List[Created]:
        return _created(await self._rows(
            "SELECT ord, workload_id, outcome, code, document FROM workload_create_many(%s)",
            (Jsonb(list(specs)),)))

    async def get(self, workload_id: str) -> Doc:
        return await self._one("SELECT workload_get(%s)", (workload_id,))

    async def list(self, state: Optional[str] = None, limit: int = 100) -> List[Doc]:
        return [r[0] for r in await self._rows("SELECT workload_list(%s, %s, %s::workload_state, %s)",
                                               (self.tenant, self.application, state, limit))]

    async def stats(self) -> Doc:
        return await self._one("SELECT workload_stats(%s, %s)", (self.tenant, self.application))

    async def cancel(self, workload_id: str, actor: str) -> str:
        return await self._one("SELECT workload_cancel(%s, %s)::text", (workload_id, actor))

    async def retry(self, workload_id: str, actor: str) -> str:
        return await self._one("SELECT workload_retry(%s, %s)::text", (workload_id, actor))

    async def redrive(self, actor: str, *, definition_id: Optional[str] = None,
                      failure_kind: Optional[str] = None, limit: int = 1000) -> List[str]:
        return [r[0] for r in await self._rows(
            "SELECT workload_redrive(%s, %s, %s, %s, %s, %s)",
            self._redrive_args(actor, definition_id, failure_kind, limit))]

    async def signal(self, wake_key: str, payload: Any) -> int:
        return await self._one("SELECT workload_signal(%s, %s, %s, %s)",
                               (self.tenant, self.application, wake_key, Jsonb(payload)))

    async def schedule(self, schedule_id: str, cron: str, template: Mapping[str, Any], *,
                       timezone: str = "UTC", overlap: str = "skip",
                       catch_up: str = "latest") -> Doc:
        return await self._one("SELECT workload_schedule(%s, %s, %s, %s, %s, %s, %s, %s)",
                               (self.tenant, self.application, schedule_id, cron,
                                Jsonb(dict(template)), timezone, overlap, catch_up))

    async def schedules(self) -> List[Doc]:
        return [r[0] for r in await self._rows("SELECT workload_schedules(%s, %s)",
                                               (self.tenant, self.application))]

    async def pause_schedule(self, schedule_id: str) -> Doc:
        return await self._one("SELECT workload_schedule_pause(%s, %s, %s)",
                               (self.tenant, self.application, schedule_id))

    async def resume_schedule(self, schedule_id: str) -> Doc:
        return await self._one("SELECT workload_schedule_resume(%s, %s, %s)",
                               (self.tenant, self.application, schedule_id))

    async def drop_schedule(self, schedule_id: str) -> None:
        await self._rows("SELECT workload_schedule_drop(%s, %s, %s)",
                         (self.tenant, self.application, schedule_id))

    async def sign_grant(self, grant: Mapping[str, Any]) -> Doc:
        return await self._one("SELECT workload_sign_grant(%s)", (Jsonb(dict(grant)),))

    async def wait(self, workload_id: str, timeout: Optional[float] = None, *,
                   poll: float = 5.0) -> Doc:
        """:meth:`Client.wait` for asyncio."""
        deadline = None if timeout is None else time.monotonic() + timeout
        listener = await psycopg.AsyncConnection.connect(self._conn.info.dsn, autocommit=True)
        try:
            heard: List[Tuple[str, str]] = []  # what arrived while the listener ran a statement
            listener.add_notify_handler(lambda n: heard.append((n.channel, n.payload)))
            channel = await _follow_async(listener, self.tenant, self.application, None)
            backoff = 0.25
            while True:
                doc = await self.get(workload_id)
                if doc["state"] in _sql.FINAL_STATES:
                    return doc
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"workload {workload_id} is still {doc['state']}")
                step = backoff if left is None else min(backoff, left)
                notes = heard + await _sql.read_notifies_async(listener, 0 if heard else step)
                heard.clear()
                woken = _finished(notes, channel, workload_id)
                if _renamed(notes):
                    channel = await _follow_async(listener, self.tenant, self.application,
                                                  channel)
                    woken = True
                backoff = 0.25 if woken else min(backoff * 2, poll)
        finally:
            await listener.close()


def _follow(listener: psycopg.Connection, tenant: str, application: str,
            current: Optional[str]) -> str:
    """Moves a waiter's listener to the channel's current name and its done channel."""
    try:
        return _sql.follow(listener, tenant, application, current, done=True)
    except psycopg.Error as e:
        raise from_psycopg(e) from None


async def _follow_async(listener: psycopg.AsyncConnection, tenant: str, application: str,
                        current: Optional[str]) -> str:
    try:
        return await _sql.follow_async(listener, tenant, application, current, done=True)
    except psycopg.Error as e:
        raise from_psycopg(e) from None


def _finished(notes: Sequence[Tuple[str, str]], channel: str, workload_id: str) -> bool:
    """Whether the notifications announce the workload's finish (its id on the done channel;
    on the tenant's channel the same id only says it became READY)."""
    done = _sql.done_channel(channel)
    return any(c == done and p == workload_id for c, p in notes)


def _renamed(notes: Sequence[Tuple[str, str]]) -> bool:
    """Whether the server said it renamed the tenant's channel."""
    return any(p == _sql.CHANNEL_ROTATED for _, p in notes)
