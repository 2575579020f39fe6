"""The lean socket's writes in the sender's turn: order, queued bytes, and the way back.

``Gate`` stands in for uvicorn's WebSocket send only to pause it on demand (uvicorn's own
pause needs a client that stops reading; the floods tests cover that end to end).
"""

from __future__ import annotations

import asyncio
from typing import Any

from engineio import packet

from a2c_server._upstream._lean_write import LeanWriter
from a2c_testkit.triangle import eventually


class Gate:
    """Takes frames while open; a send waits while closed, as uvicorn's does when paused."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.frames: list[str] = []

    async def send(self, text: str) -> None:
        await self.open.wait()
        self.frames.append(text)

    async def close(self) -> None:
        pass


class Writer(LeanWriter):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    def send(self, pkt: Any) -> None:  # what LeanSocket.send does with a packet
        if not self._write_now(pkt):
            self.queue.put_nowait(pkt)
            self._charge(len(pkt.data))


def message(text: str) -> Any:
    return packet.Packet(packet.MESSAGE, data=text)


async def test_packets_keep_their_order_across_a_paused_write() -> None:
    writer, ws = Writer(), Gate()
    task = asyncio.create_task(writer._write(ws))
    await eventually(lambda: writer._direct is ws)
    writer.send(message("one"))
    assert ws.frames == ["4one"], "written in the sender's turn"
    ws.open.clear()  # the client stopped reading
    writer.send(message("two"))  # starts, then waits for the transport
    writer.send(message("three"))  # queued behind it
    writer.send(message("four"))
    assert ws.frames == ["4one"]
    assert writer.queued == len("two") + len("three") + len("four"), "paused bytes are counted"
    ws.open.set()
    await eventually(lambda: len(ws.frames) == 4)
    assert ws.frames == ["4one", "4two", "4three", "4four"]
    await eventually(lambda: writer.queued == 0 and writer._direct is ws)
    writer.send(message("five"))
    assert ws.frames[-1] == "4five", "the sender's turn is back once nothing is ahead"
    writer.queue.put_nowait(None)
    await asyncio.wait_for(task, 10)


async def test_a_failed_write_ends_the_writer() -> None:
    class Broken(Gate):
        async def send(self, text: str) -> None:
            raise ConnectionResetError

    writer = Writer()
    task = asyncio.create_task(writer._write(Broken()))
    await eventually(lambda: writer._direct is not None)
    writer.send(message("lost"))
    await asyncio.wait_for(task, 10)  # ended, as upstream's writer ends on a failed send
    assert writer._direct is None
