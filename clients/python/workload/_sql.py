"""The SQL the library sends, in one place, and what is shared by the sync
and asyncio sides: the claim statement, the fenced calls (in their
tenant-first form, which on Citus runs on the tenant's node with no
lookup), following the tenant's channel when the server renames it, and
reading notifications off a connection's socket."""

from __future__ import annotations

import asyncio
import select
from typing import Any, List, Optional, Tuple

from psycopg import sql as _psql

FINAL_STATES = frozenset({"SUCCEEDED", "CANCELLED", "DEAD_LETTER"})
FENCE_CODES = frozenset({"WORKLOAD_CLAIM_INVALID", "WORKLOAD_STALE_FENCE", "WORKLOAD_LEASE_EXPIRED"})

CHANNEL = "SELECT workload_channel(%s, %s)"
# The payload the server sends on a tenant's channel as it renames it (a member was
# removed): the listener asks workload_channel again.  A workload id never equals it.
CHANNEL_ROTATED = "workload.channel_rotated"
TENANT_NODE = "SELECT host, port FROM workload_tenant_node(%s)"
# whether workload_claim can hand the execution context out with each row
CLAIM_HAS_CONTEXT = """SELECT EXISTS (SELECT 1 FROM pg_proc
    WHERE proname = 'workload_claim' AND 'context' = ANY (proargnames))"""

_CLAIM_COLUMNS = ("workload_id, claim_id, fencing_token, lease_expires_at, attempt, "
                  "definition_id, definition_revision, input, checkpoint_sequence")


def claim_sql(with_context: bool) -> str:
    """The claim (and start): with the context, each row carries its verified execution
    context, and work whose authority no longer holds is dead-lettered by the claim."""
    if with_context:
        return (f"SELECT {_CLAIM_COLUMNS}, execution_context FROM workload_claim("
                "%s, %s::text[], %s, %s, %s, %s, start => true, context => true)")
    return (f"SELECT {_CLAIM_COLUMNS}, NULL::jsonb AS execution_context FROM workload_claim("
            "%s, %s::text[], %s, %s, %s, %s, start => true)")


def done_channel(channel: str) -> str:
    """The channel a finished workload is announced on: its tenant's channel with ``_done``.

    The name is as secret as the tenant's channel (only members learn it);
    the payload is the workload id, which a waiter checks with workload_get.
    """
    return channel + "_done"


def _names(channel: str, done: bool) -> List[str]:
    return [channel, done_channel(channel)] if done else [channel]


def _listen(name: str) -> _psql.Composed:
    return _psql.SQL("LISTEN {}").format(_psql.Identifier(name))


def _unlisten(name: str) -> _psql.Composed:
    return _psql.SQL("UNLISTEN {}").format(_psql.Identifier(name))


def follow(conn: Any, tenant: str, application: str, current: Optional[str], *,
           done: bool = False) -> str:
    """Makes a sync connection LISTEN on the tenant's channel as workload_channel names it
    now (with ``done``, its done channel too), and stop listening on ``current``'s; answers
    the name.

    It asks again after each LISTEN until the answer holds still: a rename that
    commits meanwhile is either seen by the next question or announced on the
    name already listened to.  Notifications that arrive during these
    statements go to the connection's notify handlers, not to its socket.
    """
    while True:
        name = conn.execute(CHANNEL, (tenant, application)).fetchone()[0]
        if name == current:
            return name
        for n in _names(name, done):
            conn.execute(_listen(n))
        for n in _names(current, done) if current else ():
            conn.execute(_unlisten(n))
        current = name


async def follow_async(conn: Any, tenant: str, application: str, current: Optional[str], *,
                       done: bool = False) -> str:
    """:func:`follow` on an asyncio connection."""
    while True:
        name = (await (await conn.execute(CHANNEL, (tenant, application))).fetchone())[0]
        if name == current:
            return name
        for n in _names(name, done):
            await conn.execute(_listen(n))
        for n in _names(current, done) if current else ():
            await conn.execute(_unlisten(n))
        current = name


# Fenced calls: the %s are tenant, workload_id, claim_id, worker_id, fencing_token,
# then the call's own arguments, then (where a call finishes the workload) the
# done channel and the workload id for pg_notify, which is sent at commit.
FENCE = "%s, %s, %s, %s, %s"
EXECUTION_CONTEXT = f"SELECT workload_execution_context({FENCE}, %s::text[])"
# the contexts of a claim's rows in one statement (tenant, worker_id, secret references,
# items); a refusal of any one refuses the statement, and each then asks on its own
EXECUTION_CONTEXTS = ("SELECT x.workload_id, workload_execution_context(%s, x.workload_id, "
                      "x.claim_id, %s, x.fencing_token, %s::text[]) FROM jsonb_to_recordset(%s::jsonb) "
                      "AS x(workload_id text, claim_id text, fencing_token bigint)")
RESUME = f"SELECT workload_resume({FENCE}, %s)"
CHECKPOINT = f"SELECT workload_checkpoint({FENCE}, %s)"
HEARTBEAT = f"SELECT workload_heartbeat({FENCE}, %s, %s)"
FAIL = (f"WITH r AS (SELECT workload_fail({FENCE}, %s, %s)::text AS s) "
        "SELECT s, CASE WHEN s = 'DEAD_LETTER' THEN pg_notify(%s, %s) END FROM r")
CONFIRM_CANCEL = (f"WITH r AS (SELECT workload_confirm_cancel({FENCE})) "
                  "SELECT pg_notify(%s, %s) FROM r")
COMPLETE = (f"WITH c AS (SELECT workload_complete({FENCE}, %s, %s::jsonb) AS answer) "
            "SELECT answer, pg_notify(%s, %s) FROM c")
# the done channel, then tenant, worker_id, items
COMPLETE_MANY = ("SELECT r.workload_id, r.outcome, r.code, r.result, "
                 "CASE WHEN r.outcome <> 'refused' THEN pg_notify(%s, r.workload_id) END "
                 "FROM workload_complete_many(%s, %s, %s::jsonb) r")
# tenant, worker_id, items, extend
HEARTBEAT_MANY = ("SELECT workload_id, outcome, code, answer "
                  "FROM workload_heartbeat_many(%s, %s, %s::jsonb, %s)")


def _drain(pgconn: Any) -> List[Tuple[str, str]]:
    out = []
    while True:
        n = pgconn.notifies()
        if n is None:
            return out
        out.append((n.relname.decode(), n.extra.decode()))


def read_notifies(conn: Any, timeout: Optional[float]) -> List[Tuple[str, str]]:
    """Waits up to ``timeout`` seconds for notifications on an idle sync connection.

    psycopg 3.1's ``Connection.notifies()`` has no timeout, so this waits on
    the socket and reads what arrived; answers their (channel, payload) pairs
    (maybe none).
    """
    ready, _, _ = select.select([conn.fileno()], [], [], timeout)
    if not ready:
        return []
    conn.pgconn.consume_input()  # raises psycopg.OperationalError when the connection is gone
    return _drain(conn.pgconn)


async def read_notifies_async(conn: Any, timeout: Optional[float]) -> List[Tuple[str, str]]:
    """:func:`read_notifies` on an idle asyncio connection.

    Its ``notifies()`` generator cannot be left and taken up again without
    losing what it had read along with the first notification, so this waits
    on the socket too.
    """
    loop = asyncio.get_running_loop()
    readable = asyncio.Event()
    fd = conn.fileno()
    loop.add_reader(fd, readable.set)
    try:
        await asyncio.wait_for(readable.wait(), timeout)
    except asyncio.TimeoutError:
        return []
    finally:
        loop.remove_reader(fd)
    conn.pgconn.consume_input()
    return _drain(conn.pgconn)
