"""What the parts of the ``/smcp`` namespace share: the live sessions and the effects on the wire.

:class:`~a2c_server._relay._namespace.SmcpNamespace` holds one handler object per concern:
office membership (:mod:`~a2c_server._relay._namespace_offices`), forwarding ``client:*``
calls (:mod:`~a2c_server._relay._namespace_forward`), the ``server:*`` to ``notify:*`` relay
(:mod:`~a2c_server._relay._namespace_relay`) and the early CONNECT refusals
(:mod:`~a2c_server._relay._early`). Each is built with only what it reads; what more than
one of them reads lives here, each piece with one owner:

- :class:`LiveSessions`: the sessions connected to this node and the future each forwarded
  call races against. Only the namespace's lifecycle opens and closes one.
- :class:`Effects`: broadcasting to an office, refusing a request, charging a sender,
  cancelling the calls of an Agent that goes away, and the console's observer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import socketio

from a2c_protocol import NAMESPACE, ErrorCode, ErrorPayload, Event, to_wire
from a2c_server._console._observer import CallObserver
from a2c_server._exceptions import StoreUnavailableError
from a2c_server._floods._inbound import REFUSED_COST
from a2c_server._observe._logs import log
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._state._offices import Broadcast
from a2c_server._state._rules import Member, Refusal

from ._inflight import InFlightCalls, cancel_notice

__all__ = [
    "JOIN_FAILED",
    "LOG",
    "UNAVAILABLE",
    "Effects",
    "Handler",
    "LiveSessions",
    "flat",
    "internal_error",
    "unavailable_answer",
]

#: The namespace's logger, shared by its parts (one name for operators to filter on).
LOG: Final = logging.getLogger("a2c_server.namespace")

Handler = Callable[[str, Any], Awaitable[Any]]

#: The ack of a join or a leave that failed on a bug.
JOIN_FAILED: Final = (False, "Internal server error")

UNAVAILABLE: Final = "Registry unavailable, try again later"


def flat(code: int, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A flat ErrorPayload on the wire."""
    wire: dict[str, Any] = to_wire(ErrorPayload(code=code, message=message, details=details))
    return wire


def internal_error() -> dict[str, Any]:
    """The flat 500 of a handler that failed on a bug."""
    return flat(ErrorCode.INTERNAL_ERROR, "Internal server error")


def unavailable_answer(event: Event, exc: StoreUnavailableError) -> Any:
    """What a request gets while the shared registry is down: a flat 503 or a refused ack."""
    if event in (Event.JOIN_OFFICE, Event.LEAVE_OFFICE):
        return (False, UNAVAILABLE)
    if event is Event.LIST_ROOM or event.value.startswith("client:"):
        # Raised before the call went out: not delivered, trying again is safe.
        return flat(exc.code, UNAVAILABLE, {"reason": "registry_unavailable", "delivered": False})
    return None


class LiveSessions:
    """The sessions connected to this node, each with a future resolved when it goes away.

    Forwarded calls race against a target's future because ``AsyncServer.call()`` would
    otherwise wait out its timeout. The one owner of that state: the namespace's lifecycle
    :meth:`opens <opened>` a session once admitted and :meth:`closes <closed>` it on
    disconnect; everyone else only reads.
    """

    def __init__(self) -> None:
        self._gone: dict[str, asyncio.Future[None]] = {}
        #: The future of a connected sid, None for one not connected here (a plain dict
        #: lookup: the forwarding hot path calls it once per call).
        self.gone_of: Callable[[str], asyncio.Future[None] | None] = self._gone.get
        #: Whether a sid is connected here.
        self.connected: Callable[[str], bool] = self._gone.__contains__

    def opened(self, sid: str) -> None:
        """``sid`` was admitted: calls to it from now on race against its going away."""
        self._gone[sid] = asyncio.get_running_loop().create_future()

    def closed(self, sid: str) -> None:
        """``sid`` is going away: every call waiting on it ends now."""
        gone = self._gone.pop(sid, None)
        if gone is not None and not gone.done():
            gone.set_result(None)

    def sids(self) -> list[str]:
        """The sessions connected now (a copy: awaiting callers may see some leave)."""
        return list(self._gone)


class Effects:
    """What more than one part of the namespace does on the wire."""

    def __init__(
        self, sio: socketio.AsyncServer, metrics: ServerMetrics, calls: InFlightCalls
    ) -> None:
        self._sio = sio
        self._metrics = metrics
        self._calls = calls
        #: Set by the console while someone watches it; None costs one attribute check.
        self.observer: CallObserver | None = None

    def penalize(self, sid: str, cost: float = REFUSED_COST) -> None:
        """Charge ``sid``'s inbound budget for a packet refused after it was read (floods)."""
        self._sio.penalize(cost, sid=sid)

    async def notice(self, event: str, notice: Any, office_id: str, skip_sid: str) -> None:
        """Send one ``notify:*`` to an office's room (on every node)."""
        await self._sio.emit(event, notice, room=office_id, skip_sid=skip_sid, namespace=NAMESPACE)
        if self.observer is not None:
            self.observer.office_event(office_id, event, notice)

    async def broadcast(self, broadcasts: tuple[Broadcast, ...]) -> None:
        """Send ``notify:*`` events to office rooms (on every node)."""
        for b in broadcasts:
            await self._sio.emit(
                b.event.value, b.payload, room=b.office_id, skip_sid=b.skip_sid, namespace=NAMESPACE
            )
            if self.observer is not None:
                self.observer.office_event(b.office_id, b.event.value, b.payload)

    def refuse(
        self,
        refusal: Refusal,
        sid: str,
        event: Event,
        req_id: str | None,
        sender: Member | None = None,
    ) -> dict[str, Any]:
        """The refusal's flat answer, logged, its sender charged for it (floods)."""
        fields: dict[str, Any] = {
            "sid": sid, "event": event.value, "req_id": req_id,
            "name": sender.name if sender else None,
            "office": sender.office_id if sender else None,
            "code": refusal.code, "reason": refusal.message,
        }  # fmt: skip
        self.penalize(sid)  # a refusal costs its sender (floods)
        if refusal.security:  # a WARNING: once per code and session per interval (floods)
            self._sio.refusals.refused(f"request_{refusal.code}", "request refused", None,
                                       key=sid, **fields)  # fmt: skip
        else:
            log(LOG, logging.INFO, "request refused", **fields)
        return to_wire(refusal.to_payload())  # type: ignore[no-any-return]

    async def cancel_abandoned(self, sid: str) -> None:
        """A1: cancel, on their Computers, the tool calls of an Agent that is going away."""
        for call in self._calls.abandon(sid):
            self._metrics.cancelled_for_agent()
            log(LOG, logging.INFO, "tool call cancelled: its agent left", sid=sid,
                req_id=call.req_id, name=call.agent, computer=call.computer)  # fmt: skip
            try:
                await self._sio.emit(Event.NOTIFY_TOOL_CALL_CANCEL.value, cancel_notice(call),
                                     to=call.computer_sid, namespace=NAMESPACE)  # fmt: skip
            except Exception as exc:  # the Computer may be gone too; its call ends with it
                log(LOG, logging.WARNING, "could not cancel an abandoned tool call",
                    req_id=call.req_id, computer=call.computer, reason=exc)  # fmt: skip
