"""The Socket.IO server the namespace runs on: python-socketio with the dispatch guarded.

python-socketio hands a client's EVENT packet to whatever handler carries the event's
name, and the lifecycle handlers are registered under the names ``connect`` and
``disconnect``. A client could therefore *send* an event named ``connect`` and re-run
admission with an environ and auth of its own making, or send ``disconnect`` and be removed
from the registry while its transport and its room membership stay (a ghost). This module
closes that at the one place every client event passes: :meth:`SmcpSocketServer.screen_client_event`
screens the packet before dispatch, so reserved and malformed event names never reach a
handler. Lifecycle handlers additionally ask :func:`is_connecting` /
:func:`is_disconnecting` whether python-socketio itself is running the lifecycle.

The private steps of python-socketio this hooks into are overridden in the fence
(:class:`a2c_server._upstream.ServerShim`); this module implements the hooks.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Any, Final

import socketio

from a2c_protocol import NAMESPACE, ErrorCode, ErrorPayload, InvalidPayloadError, to_wire
from a2c_server._edge._sessions import SessionGuard
from a2c_server._floods._inbound import CUT, REFUSED_COST, InboundBudget, InboundStats
from a2c_server._floods._late_acks import GivenUp
from a2c_server._observe._noise import NoiseLog, library_logger
from a2c_server._settings import ServerSettings
from a2c_server._state._limits import payload_problems
from a2c_server._state._rules import is_protocol_request
from a2c_server._upstream import (
    forget_callback,
    inbound_of,
    is_disconnecting,
)

__all__ = [
    "RESERVED_EVENTS",
    "SmcpSocketServer",
    "ack_value",
    "is_connecting",
    "is_disconnecting",
    "screen_event",
]

_log = logging.getLogger("a2c_server.guard")

#: Event names Socket.IO reserves for its own lifecycle; a client may never send them.
RESERVED_EVENTS: Final = frozenset(
    {"connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener"}
)
_SHOWN: Final = 64  # how much of a client-chosen name a log line repeats


def screen_event(data: Any) -> tuple[str, ErrorPayload] | None:
    """Why a client EVENT packet's ``data`` must not be dispatched (None: dispatch it).

    Returns the log kind and the flat error the client gets. Unknown names are not refused
    here: the namespace's catch-all handler answers them.
    """
    name = data[0] if isinstance(data, list) and data else None
    if not isinstance(name, str):
        return "malformed event", ErrorPayload(
            code=ErrorCode.BAD_REQUEST, message="Event packet without an event name"
        )
    if name in RESERVED_EVENTS:
        return "reserved event", ErrorPayload(
            code=ErrorCode.BAD_REQUEST,
            message=f"Event name {name!r} is reserved for the connection lifecycle",
        )
    return None


def is_connecting(sio: socketio.AsyncServer, sid: str, namespace: str) -> bool:
    """Whether python-socketio is admitting ``sid`` right now (its CONNECT is pending)."""
    return bool(sio.manager.is_pre_connected(sid, namespace))


class SmcpSocketServer(SessionGuard):
    """``socketio.AsyncServer`` with the dispatch screened and per-client resources bounded.

    * Client events are screened before dispatch (:func:`screen_event`, then the size
      limits of :mod:`a2c_server._state._limits`); a refused packet gets one rate-limited WARNING
      (never a traceback) and, when the client asked for an acknowledgement, a flat
      ErrorPayload ack instead of silence (``(False, reason)`` for ``tuple_ack_events``).
    * Packets the library cannot decode become a WARNING instead of an ERROR traceback.
    * Engine.IO sessions are admitted in time and their outgoing queues bounded
      (:class:`~a2c_server._edge._sessions.SessionGuard`, the layer below).
    * :meth:`call` and :meth:`ask` release their ack callback when they stop waiting; a
      late answer to it is dropped without charging the Computer's inbound budget.
    """

    def __init__(
        self,
        *args: Any,
        limits: ServerSettings | None = None,
        tuple_ack_events: Collection[str] = (),
        noise: NoiseLog | None = None,
        **kwargs: Any,
    ) -> None:
        noise = noise or NoiseLog(_log)
        kwargs.setdefault("logger", library_logger("python-socketio", noise))
        kwargs.setdefault("engineio_logger", library_logger("python-engineio", noise))
        super().__init__(*args, limits=limits or ServerSettings(), noise=noise, **kwargs)
        self._tuple_acks = frozenset(tuple_ack_events)
        self.inbound_stats = InboundStats()
        self.inbound_stats.notify = self._inbound_refused
        self.inbound_budget = self._new_inbound_budget
        #: ack ids per Engine.IO session the Server stopped waiting for (late answers)
        self.given_up = GivenUp()

    def _new_inbound_budget(self) -> InboundBudget:
        return InboundBudget(self.limits.max_inbound_per_second, self.limits.inbound_burst,
                             time.monotonic(), self.inbound_stats)  # fmt: skip

    def _inbound_refused(self, eio_sid: str, verdict: int) -> None:
        if verdict == CUT:
            self.noise.warning("inbound cut", "client disconnected: sustained traffic over its "
                               "inbound budget", eio_sid=eio_sid,
                               limit=self.limits.max_inbound_per_second)  # fmt: skip
        else:
            self.noise.warning("inbound budget", "packets dropped undecoded: session over its "
                               "inbound budget", eio_sid=eio_sid,
                               limit=self.limits.max_inbound_per_second)  # fmt: skip

    def penalize(self, cost: float = REFUSED_COST, *, eio_sid: str | None = None,
                 sid: str | None = None) -> None:  # fmt: skip
        """Charge a session's inbound budget for a packet refused after it was read."""
        budget = inbound_of(self, eio_sid, sid, NAMESPACE)
        if budget is not None:
            budget.charge(cost, time.monotonic())

    # ------------------------------------------------------------- client events

    async def screen_client_event(
        self, eio_sid: str, namespace: str, id: Any, data: Any, text: str | None = None
    ) -> bool:
        """Whether a client's EVENT packet goes on to its handler (refusals answered here)."""
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        if sid is None or not self.manager.is_connected(sid, namespace):
            self.noise.warning(
                "event before connect", "event refused: not connected to the namespace",
                eio_sid=eio_sid, namespace=namespace[:_SHOWN],
            )  # fmt: skip
            self.penalize(eio_sid=eio_sid)
            return False
        refused = screen_event(data)
        if refused is None:
            problems = payload_problems(data[1:], max_id_length=self.limits.max_id_length,
                                        text=text)  # fmt: skip
            if problems:
                error = InvalidPayloadError(str(data[0]), problems).to_payload()
                refused = ("payload too large", error)
        if refused is None:
            return True
        kind, error = refused
        self.penalize(eio_sid=eio_sid)
        self.noise.warning(kind, "event refused", sid=sid, reason=error.message)
        if id is not None:
            name = data[0] if isinstance(data, list) and data else None
            answer = [False, error.message] if name in self._tuple_acks else [to_wire(error)]
            await self.send_ack(eio_sid, namespace, id, answer)
        return False

    def unhandled_event(self, eio_sid: str, namespace: str, name: str) -> bool:
        # Names the catch-all must answer (client:*/server:* requests) or refuse by name
        # (reserved) are decoded; any other name nobody handles (notify:* from a client,
        # made-up names) would only be ignored after a full decode: dropped from its head.
        if is_protocol_request(name) or name in RESERVED_EVENTS:
            return False
        self.inbound_stats.unhandled += 1
        self.penalize(eio_sid=eio_sid)
        self.noise.warning("unhandled event", "events dropped undecoded: no handler for the "
                           "name", eio_sid=eio_sid, event=name[:_SHOWN])  # fmt: skip
        return True

    def stale_ack(self, eio_sid: str, ack_id: int | None) -> bool:
        if self.given_up.take(eio_sid, ack_id):
            self.inbound_stats.late_acks += 1  # the Server gave up on it: no charge
            return True
        # Forged or duplicated: nobody waits for it, and the Server never gave up on it.
        self.inbound_stats.stale_acks += 1
        self.penalize(eio_sid=eio_sid)
        self.noise.warning("stale ack", "acks dropped undecoded: no call waits for the id",
                           eio_sid=eio_sid)  # fmt: skip
        return True

    def undecodable_packet(self, eio_sid: str, exc: Exception) -> None:
        # The packet could not be decoded (too deep, a huge integer, a bad type byte):
        # there is no event and no ack id to answer, only the line below.
        self.penalize(eio_sid=eio_sid)
        self.noise.warning(
            "undecodable packet", "packet refused: python-socketio cannot decode it",
            eio_sid=eio_sid, error=type(exc).__name__,
        )  # fmt: skip

    def session_closing(self, eio_sid: str) -> None:
        self.given_up.forget(eio_sid)
        super().session_closing(eio_sid)

    # --------------------------------------------------------------------- calls

    def _give_up(self, to: str, namespace: str | None, on_ack: Any) -> None:
        ids = forget_callback(self, to, on_ack)
        eio_sid = self.manager.eio_sid_from_sid(to, namespace or "/") if ids else None
        if eio_sid is not None:
            self.given_up.add(eio_sid, ids)

    async def call(
        self,
        event: str,
        data: Any = None,
        to: str | None = None,
        sid: str | None = None,
        namespace: str | None = None,
        timeout: float = 60,
        ignore_queue: bool = False,
    ) -> Any:
        """``AsyncServer.call`` that forgets its ack callback when it stops waiting.

        python-socketio keeps the callback registered until the client disconnects, so
        every timed-out forward would pin memory for the life of the Computer.
        """
        target = to or sid
        if target is None:
            raise ValueError("call() needs a target sid")
        args = await self.ask(event, data, to=target, namespace=namespace, timeout=timeout,
                              ignore_queue=ignore_queue)  # fmt: skip
        if args is None:  # pragma: no cover - without stop futures only the ack ends it
            raise socketio.exceptions.TimeoutError()
        return ack_value(args)

    async def ask(
        self,
        event: str,
        data: Any,
        *,
        to: str,
        namespace: str | None,
        timeout: float,
        stop: Collection[asyncio.Future[Any]] = (),
        ignore_queue: bool = False,
    ) -> tuple[Any, ...] | None:
        """Emit ``event`` to ``to`` and wait for its ack: the ack's arguments, or None.

        None means one of the ``stop`` futures finished first (the caller looks at which);
        past ``timeout`` seconds it raises ``socketio.exceptions.TimeoutError``. Either
        way the ack callback is forgotten. One future and one timer per call: the relay's
        hot path, where ``call()`` inside a task would cost two tasks and a wait set.
        """
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[tuple[Any, ...] | None] = loop.create_future()
        timed_out = False

        def on_ack(*args: Any) -> None:
            if not waiter.done():
                waiter.set_result(args)

        def wake(_: object = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        def expire() -> None:
            nonlocal timed_out
            timed_out = True
            wake()

        await self.emit_call(event, data, to, namespace or "/", on_ack, ignore_queue)
        timer = loop.call_later(timeout, expire)
        for future in stop:
            future.add_done_callback(wake)
        try:
            args = await waiter
        except BaseException:
            self._give_up(to, namespace, on_ack)
            raise
        finally:
            timer.cancel()
            for future in stop:
                future.remove_done_callback(wake)
        if args is None:
            self._give_up(to, namespace, on_ack)
            if timed_out:
                raise socketio.exceptions.TimeoutError()
        return args


def ack_value(args: tuple[Any, ...]) -> Any:
    """What an ack's arguments stand for, as ``AsyncServer.call`` returns them."""
    return args if len(args) > 1 else args[0] if args else None
