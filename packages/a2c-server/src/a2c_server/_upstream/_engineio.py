"""The python-engineio side of the fence: the facts the Server reads off Engine.IO sessions.

The functions below are what the rest of the Server asks of an Engine.IO session (by
python-socketio's ``sid`` or Engine.IO's ``eio_sid``) without touching the undocumented
``AsyncServer.sockets`` table or a socket's attributes itself: its queued bytes and
packets, its transport, whether it is alive, closing it without waiting for a drain.
``engineio.packet`` and ``engineio.payload`` are undocumented submodules: the polling
screen decodes with :func:`payload_packet_types`.

The lean WebSocket socket every admitted session gets is :mod:`._lean_socket`'s
(``LeanSocket``, ``Patience``, ``make_lean``, re-exported here).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

from engineio import packet
from engineio import payload as eio_payload

from a2c_server._floods._inbound import InboundBudget
from a2c_server._floods._outbox import packet_size

from ._lean_socket import LeanSocket, Patience, make_lean

__all__ = [
    "LeanSocket",
    "Patience",
    "abort_session",
    "eio_packet_names",
    "eio_packet_types",
    "make_lean",
    "payload_packet_types",
    "polling_sessions",
    "polling_socket",
    "queued_bytes",
    "queued_packets",
    "refuse_polling",
    "socket_of",
    "transport_alive",
    "transport_name",
    "wait_drained",
    "wake_after_client_close",
]

_QUEUE_SCAN_FROM: Final = 16  # packets queued before the byte size is worth adding up

#: Engine.IO packet names, indexed by packet type (``OPEN``, ``CLOSE``, ``PING``...).
eio_packet_names: Final = tuple(packet.packet_names)
#: Engine.IO packet types by name.
eio_packet_types: Final = {name: getattr(packet, name) for name in packet.packet_names}


# ----------------------------------------------------------------- session facts


def socket_of(sio: Any, eio_sid: str | None) -> Any | None:
    """The Engine.IO socket of ``eio_sid`` on python-socketio server ``sio`` (None: gone)."""
    return sio.eio.sockets.get(eio_sid) if eio_sid is not None else None


def inbound_of(sio: Any, eio_sid: str | None = None, sid: str | None = None,
               namespace: str = "/") -> InboundBudget | None:  # fmt: skip
    """The inbound budget of a session, by Engine.IO sid or Socket.IO ``sid`` (None: gone)."""
    socket = socket_of(sio, eio_sid) if sid is None else _socket_of_sid(sio, sid, namespace)
    budget: InboundBudget | None = getattr(socket, "inbound", None)
    return budget


def _socket_of_sid(sio: Any, sid: str, namespace: str) -> Any | None:
    return socket_of(sio, sio.manager.eio_sid_from_sid(sid, namespace))


def queued_bytes(sio: Any, eio_sid: str) -> int:
    """About how many bytes wait in ``eio_sid``'s outgoing queue (0 when it is gone).

    A lean socket keeps the count; for any other, below a few packets the answer is 0.
    """
    socket = sio.eio.sockets.get(eio_sid)
    if socket is None:
        return 0
    if isinstance(socket, LeanSocket):
        return socket.queued  # kept up to date by its send, writer and poll: O(1)
    queue = socket.queue
    if queue.qsize() < _QUEUE_SCAN_FROM:
        return 0  # the common case stays O(1)
    return sum(packet_size(pkt) for pkt in list(queue._queue))


def queued_packets(sio: Any, sid: str, namespace: str) -> int:
    """How many packets wait in the outgoing queue of ``sid`` (0 when it is gone)."""
    socket = _socket_of_sid(sio, sid, namespace)
    return socket.queue.qsize() if socket is not None else 0


def transport_alive(sio: Any, sid: str, namespace: str) -> bool:
    """Whether ``sid``'s Engine.IO session still exists and is not closing."""
    socket = _socket_of_sid(sio, sid, namespace)
    return socket is not None and not socket.closed and not socket.closing


def transport_name(sio: Any, sid: str, namespace: str) -> str | None:
    """``"websocket"`` or ``"polling"`` for ``sid``'s session; None when it is gone."""
    socket = _socket_of_sid(sio, sid, namespace)
    if socket is None:
        return None
    return "websocket" if socket.upgraded else "polling"


def polling_sessions(sio: Any) -> list[str]:
    """The ``eio_sid`` of every session still on long-polling."""
    return [eio_sid for eio_sid, s in list(sio.eio.sockets.items()) if not s.upgraded]


async def abort_session(sio: Any, eio_sid: str) -> None:
    """Close an Engine.IO session now, without waiting for its queue to drain."""
    socket = sio.eio.sockets.get(eio_sid)
    if socket is None:
        return
    # abort: a client that stopped reading would never drain a graceful close.
    await socket.close(wait=False, abort=True, reason=sio.eio.reason.SERVER_DISCONNECT)
    if isinstance(socket, LeanSocket):
        socket.cut()  # and its TCP connection, which would wait behind a full send buffer
    else:
        socket.queue.put_nowait(None)  # ends the websocket writer or a pending long-poll
    sio.eio.sockets.pop(eio_sid, None)


async def wait_drained(sio: Any, eio_sid: str, timeout: float) -> bool:
    """Wait (up to ``timeout``) until ``eio_sid``'s client has taken what is queued.

    False at once when the session is gone; True otherwise, drained or not.
    """
    socket = sio.eio.sockets.get(eio_sid)
    if socket is None:
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(socket.queue.join(), timeout)
    return True


def wake_after_client_close(sio: Any, eio_sid: str, reason: Any) -> None:
    """End a long-poll GET left waiting after the client's own CLOSE."""
    # After a client's CLOSE (an abort: nothing more is queued) Engine.IO leaves a
    # pending long-poll GET waiting out ping_interval + ping_timeout, so the request and
    # the client's disconnect() hang ~45 s. An empty wake-up ends it now.
    socket = sio.eio.sockets.get(eio_sid)
    if socket is not None and reason == sio.eio.reason.CLIENT_DISCONNECT:
        socket.queue.put_nowait(None)


# ------------------------------------------------------------- long-polling screen


def polling_socket(sio: Any, eio_sid: str | None) -> Any | None:
    """``eio_sid``'s socket when it is a live long-polling session, else None.

    The result is a handle for :func:`refuse_polling`, nothing to read attributes from.
    """
    socket = sio.eio.sockets.get(eio_sid) if eio_sid else None
    if socket is None or not socket.connected or socket.upgraded or socket.closed:
        return None
    return socket


async def refuse_polling(sio: Any, eio_sid: str | None, socket: Any) -> None:
    """Close a polling session whose POST is refused, without upstream's wait for a drain."""
    # Queue the CLOSE a pending GET delivers, without upstream's wait for it to be read.
    await socket.close(wait=False, abort=False, reason=sio.eio.reason.TRANSPORT_ERROR)
    socket.queue.put_nowait(None)  # ends a pending GET after the CLOSE
    sio.eio.sockets.pop(eio_sid, None)


def payload_packet_types(text: str) -> list[int]:
    """The packet types of a long-polling payload, in order (raises when it does not decode)."""
    return [pkt.packet_type for pkt in eio_payload.Payload(encoded_payload=text).packets]
