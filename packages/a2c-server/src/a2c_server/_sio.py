"""The Socket.IO server the namespace runs on: python-socketio with the dispatch guarded.

python-socketio hands a client's EVENT packet to whatever handler carries the event's
name, and the lifecycle handlers are registered under the names ``connect`` and
``disconnect``. A client could therefore *send* an event named ``connect`` and re-run
admission with an environ and auth of its own making, or send ``disconnect`` and be removed
from the registry while its transport and its room membership stay (a ghost). This module
closes that at the one place every client event passes: :meth:`SmcpSocketServer._handle_event`
screens the packet before dispatch, so reserved and malformed event names never reach a
handler. Lifecycle handlers additionally ask :func:`is_connecting` /
:func:`is_disconnecting` whether python-socketio itself is running the lifecycle.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import socketio

from a2c_protocol import ErrorCode, ErrorPayload, to_wire

from ._noise import NoiseLog

__all__ = [
    "RESERVED_EVENTS",
    "SmcpSocketServer",
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


def is_disconnecting(sio: socketio.AsyncServer, sid: str, namespace: str) -> bool:
    """Whether python-socketio is tearing ``sid`` down right now."""
    return sid in sio.manager.pending_disconnect.get(namespace, ())


class SmcpSocketServer(socketio.AsyncServer):  # type: ignore[misc]
    """``socketio.AsyncServer`` whose client events are screened before dispatch.

    Refused packets get one rate-limited WARNING (no traceback) and, when the client asked
    for an acknowledgement, a flat ErrorPayload ack instead of silence.
    """

    def __init__(self, *args: Any, noise: NoiseLog | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.noise = noise or NoiseLog(_log)

    async def _handle_event(self, eio_sid: str, namespace: str | None, id: Any, data: Any) -> None:
        namespace = namespace or "/"
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        if sid is None or not self.manager.is_connected(sid, namespace):
            self.noise.warning(
                "event before connect", "event refused: not connected to the namespace",
                eio_sid=eio_sid, namespace=namespace[:_SHOWN],
            )  # fmt: skip
            return
        refused = screen_event(data)
        if refused is None:
            await super()._handle_event(eio_sid, namespace, id, data)
            return
        kind, error = refused
        self.noise.warning(kind, "event refused", sid=sid, reason=error.message)
        if id is not None:
            await self._send_packet(
                eio_sid,
                self.packet_class(socketio.packet.ACK, namespace=namespace, id=id,
                                  data=[to_wire(error)]),
            )  # fmt: skip

    async def _handle_eio_disconnect(self, eio_sid: str, reason: Any) -> None:
        await super()._handle_eio_disconnect(eio_sid, reason)
        # After a client's CLOSE (an abort: nothing more is queued) Engine.IO leaves a
        # pending long-poll GET waiting out ping_interval + ping_timeout, so the request and
        # the client's disconnect() hang ~45 s. An empty wake-up ends it now.
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and reason == self.eio.reason.CLIENT_DISCONNECT:
            socket.queue.put_nowait(None)
