"""The write side of the lean Engine.IO socket: a packet goes out in its sender's own turn.

python-engineio hands every outgoing packet to a writer task through the socket's queue,
so each packet costs a queue put, a wake-up of the writer and a trip through the event
loop before its frame is written. On the relay's hot path that is two of the seven task
steps of a call (the request to the Computer, the answer to the Agent), and with one call
in flight nothing is ever batched to spread them over.

:class:`LeanWriter` writes a packet at once, in the sender's turn, when nothing is ahead of
it: the writer task is parked on an empty queue and no earlier write is unfinished. The
ASGI ``send`` of uvicorn's WebSocket protocols completes without suspending while the
transport accepts data; when it does suspend (the client stopped reading and uvicorn paused
the writes), the rest of that send is finished by a task of its own, and every later packet
queues behind it as before, so the order never changes and the slow-consumer bound
(queued bytes) still sees what piles up. Anything else keeps python-engineio's path: the
queue, the writer, a batch per wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from a2c_server._floods._outbox import OutputBudget, packet_size

__all__ = ["LeanWriter"]


class LeanWriter:
    """Mixin of :class:`~a2c_server._upstream._lean_socket.LeanSocket`: its WebSocket writes."""

    queue: asyncio.Queue[Any]  # python-engineio's outgoing queue
    queued: int = 0
    budget: OutputBudget | None = None
    #: The WebSocket a sender may write to itself; None while anything is ahead of it.
    _direct: Any = None
    #: A direct write that suspended, finished by a task of its own.
    _finishing: asyncio.Future[None] | None = None

    def _write_now(self, pkt: Any) -> bool:
        """Write ``pkt`` in this turn if nothing is ahead of it; False: queue it instead."""
        ws = self._direct
        if ws is None or not self.queue.empty():
            return False
        self._direct = None
        send = ws.send(pkt.encode())
        try:
            step = send.send(None)
        except StopIteration:
            self._direct = ws  # written: the next packet may go the same way
            return True
        except Exception:
            send.close()
            self.queue.put_nowait(None)  # the connection failed: end the writer, as it would
            return True
        size = packet_size(pkt)
        self._charge(size)
        self._finishing = asyncio.ensure_future(self._finish(ws, send, step, size))
        return True

    async def _finish(self, ws: Any, send: Coroutine[Any, Any, Any], step: Any, size: int) -> None:
        """Drive a suspended direct write to its end (it awaits what it yielded first)."""
        try:
            await _resume(send, step)
        except (Exception, asyncio.CancelledError):
            self.queue.put_nowait(None)  # the connection failed: end the writer
        finally:
            self._release_bytes(size)
            self._finishing = None
            if self.queue.empty():
                self._direct = ws  # the writer is still parked: senders may write again

    def _charge(self, size: int) -> None:
        self.queued += size
        if self.budget is not None:
            self.budget.charge(size)

    def _release_bytes(self, size: int) -> None:
        self.queued = max(0, self.queued - size)
        if self.budget is not None:
            self.budget.release(size)

    def _release(self, packets: Any) -> None:
        self._release_bytes(sum(packet_size(pkt) for pkt in packets))

    async def _write(self, ws: Any) -> None:
        queue = self.queue
        while True:
            if self._finishing is None:
                self._direct = ws  # parked on an empty queue: senders may write themselves
            pkt = await queue.get()
            self._direct = None
            queue.task_done()
            if pkt is None:
                break
            packets = [pkt]
            while not queue.empty():  # what queued meanwhile goes out now, as upstream's poll
                pkt = queue.get_nowait()
                queue.task_done()
                if pkt is None:
                    queue.put_nowait(None)  # ends the loop after this batch
                    break
                packets.append(pkt)
            try:
                if self._finishing is not None:  # a direct write is ahead of this batch
                    await asyncio.shield(self._finishing)
                for pkt in packets:
                    await ws.send(pkt.encode())
            except (Exception, asyncio.CancelledError):
                break
            finally:
                # Counted as queued until the transport took the whole batch: a client
                # that stops reading holds its writer inside it.
                self._release(packets)
                del packets
        self._direct = None
        if self._finishing is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(self._finishing)
        await ws.close()


async def _resume(send: Coroutine[Any, Any, Any], step: Any) -> None:
    """Run the coroutine ``send``, already started and suspended on ``step``, to its end."""
    while True:
        try:
            if step is None:  # a bare yield (sleep(0)): give the loop one turn
                await asyncio.sleep(0)
            else:
                await step
        except BaseException as exc:
            try:
                step = send.throw(exc)
            except StopIteration:
                return
            continue
        try:
            step = send.send(None)
        except StopIteration:
            return
