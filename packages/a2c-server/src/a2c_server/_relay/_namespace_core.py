"""The shared core of the ``/smcp`` namespace: its state and what every part of it does.

:class:`~a2c_server._relay._namespace.SmcpNamespace` is the composition of its parts, one module
each: the lifecycle and the handler table (:mod:`~a2c_server._relay._namespace`), office
membership (:mod:`~a2c_server._relay._namespace_offices`), forwarding ``client:*`` calls
(:mod:`~a2c_server._relay._namespace_forward`) and the ``server:*`` to ``notify:*`` relay
(:mod:`~a2c_server._relay._namespace_relay`). Here live the state they share and the effects more
than one of them performs: broadcasting to an office, refusing a request, cancelling the
calls of an Agent that goes away. Parts are mixins on this class, not objects it holds, so
the forwarding hot path pays no extra hop per call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import socketio

from a2c_protocol import NAMESPACE, ErrorCode, ErrorPayload, Event, to_wire
from a2c_server._auth import AuthProvider
from a2c_server._cluster._remote import RemoteWatch
from a2c_server._console._observer import CallObserver
from a2c_server._edge._shutdown import Drain
from a2c_server._floods._inbound import COALESCED_COST, REFUSED_COST
from a2c_server._floods._join_deadline import JoinDeadlines
from a2c_server._observe._audit import Audit
from a2c_server._observe._logs import log
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._relay._expiry import (
    A2C_SESSION_EXPIRED,
    ExpiryWindow,
    expired_notice,
    shutdown_notice,
)
from a2c_server._relay._notices import CoalescedNotices
from a2c_server._settings import ServerSettings
from a2c_server._state._absent import NewOffices
from a2c_server._state._access import Access
from a2c_server._state._offices import Broadcast, Offices
from a2c_server._state._ratelimit import RequestLimiter
from a2c_server._state._rules import Member, Refusal
from a2c_server._state._subjects import SubjectCounts

from ._inflight import InFlightCalls, cancel_notice
from ._progress import ProgressRoutes

__all__ = ["Handler", "NamespaceCore"]

_log = logging.getLogger("a2c_server.namespace")

Handler = Callable[[str, Any], Awaitable[Any]]

_JOIN_FAILED: Final = (False, "Internal server error")


def _flat(code: int, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    wire: dict[str, Any] = to_wire(ErrorPayload(code=code, message=message, details=details))
    return wire


def _internal_error() -> dict[str, Any]:
    return _flat(ErrorCode.INTERNAL_ERROR, "Internal server error")


class NamespaceCore:
    """The namespace's state (settings, registry, metrics, drain, in-flight calls...)."""

    def __init__(
        self,
        sio: socketio.AsyncServer,
        *,
        settings: ServerSettings,
        offices: Offices,
        auth: AuthProvider,
        metrics: ServerMetrics | None = None,
        drain: Drain | None = None,
        remote: RemoteWatch | None = None,
        audit: Audit | None = None,
        subjects: SubjectCounts | None = None,
    ) -> None:
        self._sio = sio
        self._metrics = metrics if metrics is not None else ServerMetrics()
        self._drain = drain if drain is not None else Drain()
        self._drain.announce = self._announce_shutdown
        self._settings = settings
        self._offices = offices
        self._store = offices.store
        self._auth = auth
        audit = audit if audit is not None else Audit(self._metrics.registry)
        #: The audit trail, shared with the console (its logins are security decisions too).
        self.audit = audit
        self._access = Access(auth, audit, self._expire, subjects=subjects,
                              max_per_subject=settings.max_connections_per_subject)  # fmt: skip
        # A session in no office joins one within join_timeout or is closed.
        self._join_deadlines = JoinDeadlines(settings.join_timeout, sio.refusals,
                                             self._close_unjoined)  # fmt: skip
        self._limiter = RequestLimiter(
            settings.max_requests_per_second, settings.request_burst, self._metrics.registry
        )
        # One future per connected sid, resolved when it disconnects: forwarded calls race
        # against it because AsyncServer.call() would otherwise wait out its timeout.
        self._gone: dict[str, asyncio.Future[None]] = {}
        # Multi-node: the same kind of future for a sid hosted by another node. A registry
        # outage never ends such a call (it was sent), it only marks it disrupted.
        self._remote = remote
        # The tool calls relayed for Agents connected here, cancelled when their Agent goes.
        self._calls = InFlightCalls()
        # Token expiry waits for the session's calls in flight (bounded like any call).
        self._expiry = ExpiryWindow(
            self._calls.busy, settings.max_tool_timeout + settings.tool_call_buffer
        )
        self._progress = ProgressRoutes(sio, self._store)
        # server:update_* relayed at most once per interval per sender.
        self._notices = CoalescedNotices(
            settings.notice_interval, self._notice, lambda s: self._penalize(s, COALESCED_COST)
        )
        # Which Agent sessions created their office by joining it (a 404 says so, see _absent).
        self._new_offices = NewOffices()
        #: Set by the console while someone watches it; None costs one attribute check.
        self.observer: CallObserver | None = None

    async def _expire(self, sid: str) -> None:
        """The session's token expired: once its tool calls in flight have ended (see
        :mod:`a2c_server._relay._expiry`), tell it why and disconnect it (its office is told)."""
        await self._expiry.drain(sid, self._gone.__contains__)
        if sid not in self._gone:
            return  # it left by itself meanwhile
        log(_log, logging.INFO, "token expired, disconnecting", sid=sid)
        try:  # an extension notice (docs/compatibility.md): clients name the reason
            await self._sio.emit(A2C_SESSION_EXPIRED, expired_notice(), to=sid,
                                 namespace=NAMESPACE)  # fmt: skip
        except Exception as exc:  # the cut below matters, the notice is a courtesy
            log(_log, logging.DEBUG, "expiry notice not sent", sid=sid, reason=exc)
        await self._sio.disconnect(sid, namespace=NAMESPACE)

    async def _announce_shutdown(self) -> None:
        """Tell the sessions of this node that are in an office (those that may route
        requests) that they are about to be cut (a graceful shutdown): the extension notice,
        so our clients hold new requests for their next connection."""
        notice = shutdown_notice()
        for sid in list(self._gone):
            member = await self._store.get(sid)
            if member is not None and member.office_id is not None and sid in self._gone:
                await self._sio.emit(A2C_SESSION_EXPIRED, notice, to=sid, namespace=NAMESPACE)

    async def _close_unjoined(self, sid: str) -> None:
        if sid in self._gone:  # still connected
            await self._sio.disconnect(sid, namespace=NAMESPACE)

    async def broadcast(self, broadcasts: tuple[Broadcast, ...]) -> None:
        """Send ``notify:*`` events to office rooms (on every node)."""
        await self._broadcast(broadcasts)

    async def leave_room(self, sid: str, office_id: str) -> None:
        """Take a session hosted here out of an office's room."""
        await self._sio.leave_room(sid, office_id, namespace=NAMESPACE)

    async def end_session(self, sid: str) -> None:
        """Disconnect a session hosted here (one a reconnect of its client replaced)."""
        await self._sio.disconnect(sid, namespace=NAMESPACE)

    def _penalize(self, sid: str, cost: float = REFUSED_COST) -> None:
        """Charge ``sid``'s inbound budget for a packet refused after it was read (floods)."""
        self._sio.penalize(cost, sid=sid)

    async def _notice(self, event: str, notice: Any, office_id: str, skip_sid: str) -> None:
        await self._sio.emit(event, notice, room=office_id, skip_sid=skip_sid, namespace=NAMESPACE)
        if self.observer is not None:
            self.observer.office_event(office_id, event, notice)

    async def _broadcast(self, broadcasts: tuple[Broadcast, ...]) -> None:
        for b in broadcasts:
            await self._sio.emit(
                b.event.value, b.payload, room=b.office_id, skip_sid=b.skip_sid, namespace=NAMESPACE
            )
            if self.observer is not None:
                self.observer.office_event(b.office_id, b.event.value, b.payload)

    def _refuse(
        self,
        refusal: Refusal,
        sid: str,
        event: Event,
        req_id: str | None,
        sender: Member | None = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "sid": sid, "event": event.value, "req_id": req_id,
            "name": sender.name if sender else None,
            "office": sender.office_id if sender else None,
            "code": refusal.code, "reason": refusal.message,
        }  # fmt: skip
        self._penalize(sid)  # a refusal costs its sender (floods)
        if refusal.security:  # a WARNING: once per code and session per interval (floods)
            self._sio.refusals.refused(f"request_{refusal.code}", "request refused", None,
                                       key=sid, **fields)  # fmt: skip
        else:
            log(_log, logging.INFO, "request refused", **fields)
        return to_wire(refusal.to_payload())  # type: ignore[no-any-return]

    async def _cancel_abandoned(self, sid: str) -> None:
        """A1: cancel, on their Computers, the tool calls of an Agent that is going away."""
        for call in self._calls.abandon(sid):
            self._metrics.cancelled_for_agent()
            log(_log, logging.INFO, "tool call cancelled: its agent left", sid=sid,
                req_id=call.req_id, name=call.agent, computer=call.computer)  # fmt: skip
            try:
                await self._sio.emit(Event.NOTIFY_TOOL_CALL_CANCEL.value, cancel_notice(call),
                                     to=call.computer_sid, namespace=NAMESPACE)  # fmt: skip
            except Exception as exc:  # the Computer may be gone too; its call ends with it
                log(_log, logging.WARNING, "could not cancel an abandoned tool call",
                    req_id=call.req_id, computer=call.computer, reason=exc)  # fmt: skip
