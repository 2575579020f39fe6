"""The python-engineio side of the fence: a leaner socket, and the facts read off sessions.

Per packet, python-engineio's WebSocket loop starts a task to read the next frame and
waits for it through ``asyncio.wait_for``, and its writer waits for the next outgoing
packet through ``wait_for`` again: two tasks, two timers and a few extra trips through
the event loop for every packet in each direction, measured at 8-11 µs a packet here,
which is more than the Server's own work on a relayed call. :class:`LeanSocket` reads and
writes with plain awaits; the one thing those timeouts were for (a client that sends
nothing at all for ``ping_interval + ping_timeout`` is dropped) is kept by
:class:`Patience`, one timer per connection that is re-armed only when it fires.

Everything else (long-polling, pings, closing) is python-engineio's own code; the upgrade
from long-polling to WebSocket (the probe exchange) is done as upstream does it.
:func:`make_lean` turns a socket python-engineio just made into a :class:`LeanSocket`;
the library builds its sockets itself, with no hook for the class.

The functions below are what the rest of the Server asks of an Engine.IO session (by
python-socketio's ``sid`` or Engine.IO's ``eio_sid``) without touching the undocumented
``AsyncServer.sockets`` table or a socket's attributes itself: its queued bytes and
packets, its transport, whether it is alive, closing it without waiting for a drain.
``engineio.packet`` and ``engineio.payload`` are undocumented submodules: the polling
screen decodes with :func:`payload_packet_types`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Final

from engineio import exceptions, packet
from engineio import payload as eio_payload
from engineio.async_socket import AsyncSocket

from a2c_server._floods._inbound import ADMIT, CUT, InboundBudget
from a2c_server._floods._outbox import OutputBudget, packet_size

from ._lean_write import LeanWriter
from ._outqueue import discard_queue, transport_aborter

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

_FAIR_SHARE: Final = 16  # frames one connection handles before the others get a turn
_QUEUE_SCAN_FROM: Final = 16  # packets queued before the byte size is worth adding up

#: Engine.IO packet names, indexed by packet type (``OPEN``, ``CLOSE``, ``PING``...).
eio_packet_names: Final = tuple(packet.packet_names)
#: Engine.IO packet types by name.
eio_packet_types: Final = {name: getattr(packet, name) for name in packet.packet_names}


class Patience:
    """Cancels ``task`` once nothing was :meth:`seen` for ``seconds``. No per-call timer.

    The timer fires at the earliest moment the wait could be over; if something was seen
    meanwhile it is set again for the new deadline, so a busy connection costs a clock read
    per packet and one timer callback per ``seconds``.
    """

    def __init__(self, task: asyncio.Task[Any], seconds: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = task
        self.seconds = seconds
        self.last = self.loop.time()
        self.expired = False
        self._handle = self.loop.call_at(self.last + seconds, self._check)

    def seen(self) -> None:
        self.last = self.loop.time()

    def _check(self) -> None:
        due = self.last + self.seconds
        if self.loop.time() >= due:
            self.expired = True
            self.task.cancel()
        else:
            self._handle = self.loop.call_at(due, self._check)

    def stop(self) -> None:
        self._handle.cancel()


class LeanSocket(LeanWriter, AsyncSocket):  # type: ignore[misc]
    """An Engine.IO socket whose WebSocket transport reads and writes without a task per packet."""

    connected: bool  # set by python-engineio (untyped)
    upgraded: bool
    # Ours (set by make_lean): how to cut the TCP connection under the WebSocket (None:
    # polling, or not uvicorn); the queued bytes and the budget are LeanWriter's.
    abort_transport: Any = None
    inbound: InboundBudget | None = None

    async def send(self, pkt: Any) -> None:
        # Upstream awaits check_ping_timeout() and queue.put() for every packet; the
        # check only has work to do while a ping is out or after close.
        if (self.closed or self.last_ping) and not await self.check_ping_timeout():
            return
        if not self._write_now(pkt):  # nothing ahead of it: written in this turn
            self.queue.put_nowait(pkt)  # the queue is unbounded: put() never waits
            self._charge(packet_size(pkt))
        logger = self.server.logger
        if logger.isEnabledFor(logging.INFO):
            logger.info("%s: Sending packet %s", self.sid, packet.packet_names[pkt.packet_type])

    async def receive(self, pkt: Any) -> None:
        server = self.server
        inbound = self.inbound
        if inbound is not None and pkt.packet_type == packet.MESSAGE:
            verdict = inbound.take(pkt.data, time.monotonic())
            if verdict != ADMIT:  # dropped before python-socketio decodes anything
                if inbound.stats.notify is not None:
                    inbound.stats.notify(self.sid, verdict)
                if verdict == CUT:
                    await self.close(wait=False, abort=True, reason=server.reason.SERVER_DISCONNECT)
                    self.cut()
                    server.sockets.pop(self.sid, None)
                    raise exceptions.SocketIsClosedError()
                return
        handler = server.handlers.get("message")
        if pkt.packet_type != packet.MESSAGE or handler is None or server.async_handlers:
            await super().receive(pkt)
            return
        if self.closed:  # dropped: the client's frames are not dispatched any more
            raise exceptions.SocketIsClosedError()
        logger = server.logger
        if logger.isEnabledFor(logging.INFO):
            logger.info("%s: Received packet MESSAGE", self.sid)
        # What upstream's _trigger_event does for an inline coroutine handler.
        try:
            await handler(self.sid, pkt.data)
        except asyncio.CancelledError:
            pass
        except Exception:
            logger.exception("message async handler error")

    async def _websocket_handler(self, ws: Any) -> None:
        if self.connected:
            if not await self._upgrade(ws):
                return
        else:
            self.connected = True
            self.upgraded = True
        self.abort_transport = transport_aborter(ws)
        writer = asyncio.ensure_future(self._write(ws))
        self.server.logger.info("%s: Upgrade to websocket successful", self.sid)
        task = asyncio.current_task()
        assert task is not None
        patience = Patience(task, self.server.ping_interval + self.server.ping_timeout)
        taken = 0
        try:
            while not patience.expired:
                taken += 1
                if taken % _FAIR_SHARE == 0:
                    # A backlog is read without a pause (the ASGI queue answers at once):
                    # let the other connections' frames in between (issue 42).
                    await asyncio.sleep(0)
                try:
                    data = await self._frame(ws)
                except (Exception, asyncio.CancelledError):
                    break  # the client went away or sent too much, or the wait was cancelled
                if data is None:
                    break
                patience.seen()
                if not await self._take(data):
                    break
        finally:
            patience.stop()
            if patience.expired:
                # The cancel was the idle timer's, whether it ended a wait or a message
                # handler swallowed it (python-engineio's inline handlers do).
                task.uncancel()
        self.queue.put_nowait(None)  # ends the writer
        await writer
        await self.close(wait=False, abort=True, reason=self.server.reason.TRANSPORT_CLOSE)

    async def _take(self, data: Any) -> bool:
        """Decode and handle one frame; False ends the session."""
        try:
            pkt = packet.Packet(encoded_packet=data)
        except Exception as exc:
            # Upstream lets this escape the request and leaves the session (and its
            # writer) to the admission or ping timeout; it ends here instead.
            self.server.logger.warning(
                "%s: undecodable WebSocket frame, session closed (%s)",
                self.sid, type(exc).__name__,
            )  # fmt: skip
            return False
        try:
            await self.receive(pkt)
        except exceptions.UnknownPacketError:
            pass
        except exceptions.SocketIsClosedError:
            self.server.logger.info("Receive error -- socket is closed")
            return False
        except asyncio.CancelledError:
            return False
        except Exception:
            self.server.logger.exception("Unknown receive error")
        return True

    async def _upgrade(self, ws: Any) -> bool:
        """The probe exchange that moves a long-polling session to this WebSocket."""
        logger = self.server.logger
        self.upgrading = True  # holds back long-poll sends meanwhile
        try:
            probe = packet.Packet(encoded_packet=await self._frame(ws))
            if probe.packet_type != packet.PING or probe.data != "probe":
                logger.info("%s: Failed websocket upgrade, no PING packet", self.sid)
                return False
            await ws.send(packet.Packet(packet.PONG, data="probe").encode())
            await self.queue.put(packet.Packet(packet.NOOP))  # ends the pending long-poll
            upgrade = packet.Packet(encoded_packet=await self._frame(ws))
        except OSError:
            return False
        finally:
            self.upgrading = False
        if upgrade.packet_type != packet.UPGRADE:
            self.upgraded = False
            logger.info("%s: Failed websocket upgrade, expected UPGRADE packet, received %s"
                        " instead.", self.sid, upgrade.packet_type)  # fmt: skip
            return False
        self.upgraded = True
        return True

    async def _frame(self, ws: Any) -> Any:
        data = await ws.wait()
        if data and len(data) > self.server.max_http_buffer_size:
            raise ValueError("packet is too large")
        return data

    async def poll(self) -> Any:
        packets = await super().poll()  # a long-poll GET takes what is queued
        self._release(packets)
        return packets

    async def close(self, wait: bool = True, abort: bool = False, reason: Any = None) -> None:
        await super().close(wait=wait, abort=abort, reason=reason)
        if reason == self.server.reason.PING_TIMEOUT:
            # A client that stopped answering pings may also have stopped reading: its
            # CLOSE would queue behind what it never takes, so cut it now (as a drop does).
            if self.budget is not None:
                self.budget.dropped("ping_timeout")
            self.cut()

    def cut(self) -> None:
        """Free the queue and abort the TCP connection now; ends a pending long-poll."""
        discard_queue(self.queue, self.budget)
        self.queued = 0
        self.queue.put_nowait(None)  # ends the websocket writer or a pending long-poll
        if self.abort_transport is not None:
            self.abort_transport()


def make_lean(
    socket: Any, budget: OutputBudget | None = None, inbound: InboundBudget | None = None
) -> None:
    """Give a socket python-engineio just created the lean WebSocket path and its budgets."""
    if type(socket) is AsyncSocket:
        socket.__class__ = LeanSocket
        socket.budget = budget
        socket.inbound = inbound


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
