"""Grants for the common cases, and the create spec around them.

A grant is the body ``workload_sign_grant`` signs (docs/grants.md explains
each field).  :func:`grant` fills every field from a few arguments; signing
is the server's (an admin's call): ``Client.sign_grant``.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Iterable, Mapping, Optional, Union

Principal = Union[str, Mapping[str, str]]

_KINDS = ("agent", "human", "service", "workload")


def principal(value: Principal) -> Dict[str, str]:
    """``{"kind", "id"}`` from ``"service:billing"`` or a mapping with those keys."""
    if isinstance(value, Mapping):
        return {"kind": str(value["kind"]), "id": str(value["id"])}
    kind, sep, ident = str(value).partition(":")
    if not sep or kind not in _KINDS or not ident:
        raise ValueError(f"a principal is 'kind:id' with kind one of {', '.join(_KINDS)}: {value!r}")
    return {"kind": kind, "id": ident}


def _rfc3339(t: datetime) -> str:
    if t.tzinfo is None:
        raise ValueError("grant times need a time zone (datetime.now(timezone.utc))")
    return t.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def grant(tenant_id: str, application_id: str, subject: Principal, *,
          capabilities: Iterable[str] = ("*",),
          ttl: timedelta = timedelta(hours=24),
          database_role: Optional[str] = None,
          issuer: Principal = "service:workload-admin",
          id: Optional[str] = None,
          resources: Iterable[str] = (),
          parent_grant: Optional[str] = None,
          revision: int = 1,
          not_before: Optional[datetime] = None,
          subject_attributes: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """A grant body ready for ``workload_sign_grant``.

    ``subject`` is who will create work under it (it must equal each
    workload's ``requested_by``); ``capabilities`` what that work may require
    (``"*"``: anything); the grant is valid from now (or ``not_before``) for
    ``ttl``; ``database_role`` binds it to the role that may present it.
    """
    start = not_before or datetime.now(timezone.utc).replace(microsecond=0)
    attrs = dict(subject_attributes or {})
    if database_role is not None:
        attrs["database_role"] = database_role
    return {
        "contract_version": 1,
        "id": id or f"grant-{tenant_id}-{application_id}-{uuid.uuid4().hex[:12]}",
        "issuer": principal(issuer),
        "subject": principal(subject),
        "tenant_id": tenant_id,
        "application_id": application_id,
        "capabilities": list(capabilities),
        "resources": list(resources),
        "constraints": {"subject_attributes": attrs},
        "issued_at": _rfc3339(start),
        "expires_at": _rfc3339(start + ttl),
        "parent_grant": parent_grant,
        "revision": revision,
        "status": "active",
    }


def spec(tenant_id: str, application_id: str, definition_id: str, input: Any, *,
         key: str, grant: Mapping[str, Any],
         requested_by: Optional[Principal] = None,
         environment: str = "default", definition_revision: str = "1",
         trigger: str = "api", capabilities: Iterable[str] = (),
         **fields: Any) -> Dict[str, Any]:
    """A create spec: ``grant`` is the signed grant (``{grant, key_id, signature}``).

    ``requested_by`` defaults to the grant's subject; ``capabilities`` is the
    spec's ``capability_snapshot``; any other spec field (``priority``,
    ``retry_policy``, ``timeouts``, ``dependencies``, ``not_before``, ...)
    passes through as given.
    """
    if requested_by is None:
        requested_by = grant["grant"]["subject"]
    out = {
        "tenant_id": tenant_id, "application_id": application_id,
        "environment": environment, "definition_id": definition_id,
        "definition_revision": definition_revision, "trigger": trigger,
        "input": input, "requested_by": principal(requested_by),
        "authorization_snapshot": dict(grant), "capability_snapshot": list(capabilities),
        "idempotency_key": key,
    }
    out.update(fields)
    return out
