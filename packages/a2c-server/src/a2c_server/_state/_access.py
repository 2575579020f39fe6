"""Per-session identities: grants applied at connect and join, expiry, audit.

The namespace asks this object at the points where it already judges a connection or a
join; the rules themselves are the pure functions of :mod:`a2c_server._auth._grants`.

Why node-local state is enough with ``--redis``: a client's events are handled by the
node its socket is connected to, so every join of a session is judged where the session
(and its identity, saved at its admission) lives; a reconnect is a new session,
authenticated again. What other nodes act on is the shared registry (name, office), which
only ever holds a place the grant allowed. The one deployment-wide count, the sessions
per subject under ``max_connections_per_subject``, is kept by a
:class:`~a2c_server._state._subjects.SubjectCounts` (shared through Redis with ``--redis``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Final

from a2c_protocol import EnterOfficeReq, ErrorCode, Event, Role
from a2c_server._auth import AuthProvider, Identity, JoinAuthorizer, connect_problem, join_problem
from a2c_server._exceptions import StoreUnavailableError
from a2c_server._floods._address import address_key
from a2c_server._floods._refusals import address_of
from a2c_server._observe._audit import Audit, AuditEvent

from ._rules import Member, Refusal
from ._subjects import MemorySubjectCounts, SubjectCounts, subject_refusal

__all__ = ["FORBIDDEN_JOIN", "Access", "counted_as"]

_log = logging.getLogger("a2c_server.auth")

#: The refusal kind of a join the identity is not allowed (logs and metrics).
FORBIDDEN_JOIN: Final = "forbidden"


def counted_as(identity: Identity, peer: str | None) -> str:
    """What ``max_connections_per_subject`` counts a session under: its subject, or for
    a subject that names no one (a shared token, allow-all) its subject per client address.

    With one ``token-client`` for everybody, every official-SDK client of every office
    (they connect without a role) shared one cap; per address, a host
    holds at most the cap of each kind, and other hosts are not counted with it.
    """
    if not identity.per_address:
        return identity.subject
    return f"{identity.subject}@{address_key(address_of(peer))}"


class Access:
    """Identities of the sessions on this node, and what they may do.

    ``expire`` is called with a sid when its identity's ``expires_at`` passes; the
    namespace disconnects that session (the usual leave notification follows).
    """

    def __init__(
        self,
        provider: AuthProvider,
        audit: Audit,
        expire: Callable[[str], Coroutine[Any, Any, None]],
        *,
        max_per_subject: int | None = None,
        subjects: SubjectCounts | None = None,
    ) -> None:
        self._provider = provider
        self._max_per_subject = max_per_subject
        # Deployment-wide with --redis; consulted only when a cap is set.
        self._subjects = subjects if subjects is not None else MemorySubjectCounts()
        self._audit = audit
        self._expire = expire
        self._identities: dict[str, Identity] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def check_connect(
        self, sid: str, role: Role | None, identity: Identity, peer: str | None
    ) -> Refusal | None:
        """Why this admission is refused (403, 401 for an expired identity, 429), or None.

        Either way the decision is audited. When None, the session counts against its
        subject's cap from now on: :meth:`forget` it if the admission fails later. Raises
        :class:`StoreUnavailableError` when the cap's count cannot be read.
        """
        refusal = None
        problem = connect_problem(identity.grant, role)
        if problem is not None:
            refusal = Refusal(code=ErrorCode.FORBIDDEN, message=problem, security=True)
        elif identity.expires_at is not None and identity.expires_at <= time.time():
            refusal = Refusal(code=ErrorCode.UNAUTHORIZED,
                              message="Authentication failed: token expired")  # fmt: skip
        elif self._max_per_subject is not None:
            cap = self._max_per_subject
            try:
                held = await self._subjects.hold(counted_as(identity, peer), sid, cap)
            except StoreUnavailableError as exc:
                self._audit.record(AuditEvent.ADMISSION, "refused", sid=sid,
                                   subject=identity.subject, role=role.value if role else None,
                                   reason=str(exc), peer=peer)  # fmt: skip
                raise
            refusal = subject_refusal(held, cap, per_address=identity.per_address)
        self._audit.record(AuditEvent.ADMISSION, "ok" if refusal is None else "refused",
                           sid=sid, subject=identity.subject,
                           role=role.value if role else None,
                           reason=refusal.message if refusal else None, peer=peer)  # fmt: skip
        return refusal

    def admitted(self, sid: str, identity: Identity) -> None:
        """Keep ``identity`` for the session and arm its expiry."""
        self._identities[sid] = identity
        if identity.expires_at is not None:
            loop = asyncio.get_running_loop()
            delay = max(0.0, identity.expires_at - time.time())
            self._timers[sid] = loop.call_later(delay, self._expired, sid)

    def refused(self, sid: str, role: Role | None, reason: str, peer: str | None) -> None:
        """Audit a connection the provider (or the role check) refused."""
        self._audit.record(AuditEvent.ADMISSION, "refused", sid=sid,
                           role=role.value if role else None, reason=reason, peer=peer)  # fmt: skip

    async def authorize_join(self, sid: str, req: EnterOfficeReq) -> str | None:
        """Why ``sid`` may not join (a 403 reason), or None. Refusals are audited here."""
        identity = self._identities.get(sid)
        if identity is None:
            return None  # not admitted through here; the office rules refuse it anyway
        problem = join_problem(identity.grant, req.office_id, req.role, req.name)
        if problem is None and isinstance(self._provider, JoinAuthorizer):
            try:
                problem = await self._provider.authorize_join(
                    identity, req.office_id, req.role, req.name
                )
            except Exception:
                _log.exception("authorize_join failed sid=%s", sid)
                problem = f"Forbidden: joining office {req.office_id!r} could not be authorized"
        if problem is not None:
            self._audit.record(AuditEvent.JOIN, "refused", sid=sid, subject=identity.subject,
                               role=req.role.value, name=req.name, office=req.office_id,
                               reason=problem)  # fmt: skip
        return problem

    def joined(self, sid: str, req: EnterOfficeReq, ok: bool, reason: str | None) -> None:
        """Audit the office rules' verdict on a join the grant allowed."""
        identity = self._identities.get(sid)
        self._audit.record(AuditEvent.JOIN, "ok" if ok else "refused", sid=sid,
                           subject=identity.subject if identity else None, role=req.role.value,
                           name=req.name, office=req.office_id, reason=reason)  # fmt: skip

    def routed(
        self,
        sid: str,
        event: Event,
        sender: Member | None,
        computer: str,
        refused: str | None,
        tool: str | None = None,
    ) -> None:
        """Audit a forwarded ``client:tool_call`` or a refused ``client:*`` request.

        Names who asked which Computer for which tool, never the tool's arguments.
        """
        identity = self._identities.get(sid)
        self._audit.record(AuditEvent.ROUTE, "ok" if refused is None else "refused", sid=sid,
                           subject=identity.subject if identity else None,
                           role=sender.role.value if sender and sender.role else None,
                           name=sender.name if sender else None,
                           office=sender.office_id if sender else None,
                           request=event.value, computer=computer, tool=tool,
                           reason=refused)  # fmt: skip

    async def forget(self, sid: str) -> None:
        """The session is gone (or its admission failed): drop it from every count."""
        self._identities.pop(sid, None)
        timer = self._timers.pop(sid, None)
        if timer is not None:
            timer.cancel()
        await self._subjects.release(sid)  # the count knows which subject sid counted for

    def _expired(self, sid: str) -> None:
        self._timers.pop(sid, None)
        identity = self._identities.get(sid)
        if identity is None:
            return
        self._audit.record(AuditEvent.EXPIRY, "disconnected", sid=sid,
                           subject=identity.subject, reason="token expired")  # fmt: skip
        task = asyncio.get_running_loop().create_task(self._expire(sid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
