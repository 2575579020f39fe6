"""The lean Engine.IO socket: a WebSocket transport without a task per packet.

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
the library builds its sockets itself, with no hook for the class. Its write side is
:mod:`._lean_write`; what the rest of the Server asks of a session is :mod:`._engineio`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Final

from engineio import exceptions, packet
from engineio.async_socket import AsyncSocket

from a2c_server._floods._inbound import ADMIT, CUT, InboundBudget
from a2c_server._floods._outbox import OutputBudget, packet_size

from ._lean_write import LeanWriter
from ._outqueue import discard_queue, transport_aborter

__all__ = ["LeanSocket", "Patience", "make_lean"]

_FAIR_SHARE: Final = 16  # frames one connection handles before the others get a turn


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
                    # let the other connections' frames in between.
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
