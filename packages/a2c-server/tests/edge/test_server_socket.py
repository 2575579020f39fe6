"""The lean Engine.IO WebSocket path (a2c_server._upstream._engineio) against real clients.

Calls, acks and notifications cross it in every other Server test; here: it is the path
in use for WebSocket-only and upgraded sessions alike, a silent client is still dropped,
a session still ends cleanly, the idle timer works, and the python-engineio shapes it
relies on are pinned.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
from engineio.async_server import AsyncServer as EngineServer
from engineio.async_socket import AsyncSocket
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from a2c_protocol import NAMESPACE, Event
from a2c_server import ServerSettings
from a2c_server._upstream._engineio import LeanSocket, Patience
from a2c_testkit.server import RawClient, RunningServer, connect_raw, running_server

CALL = {"agent": "alice", "req_id": "r1", "computer": "c1", "tool_name": "echo",
        "params": {}, "timeout": 30}  # fmt: skip
PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}


@pytest.fixture
async def server() -> AsyncIterator[RunningServer]:
    async with running_server(ServerSettings()) as srv:
        yield srv


# ------------------------------------------------------------------------ Patience


async def test_patience_waits_again_while_something_arrives() -> None:
    task = asyncio.get_running_loop().create_task(asyncio.Event().wait())
    patience = Patience(task, 60.0)
    patience.last -= 59.0  # nearly due...
    patience.seen()  # ...but a packet just came in
    patience._check()
    assert not patience.expired and not task.cancelled()
    patience.stop()
    task.cancel()


async def test_patience_cancels_the_reader_after_silence() -> None:
    task = asyncio.get_running_loop().create_task(asyncio.Event().wait())
    patience = Patience(task, 0.05)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    assert patience.expired


class FakeWebSocket:
    """python-engineio's ASGI WebSocket, reduced to what the socket calls: ``frames`` are
    read in order, then nothing ever arrives."""

    def __init__(self, frames: list[str]) -> None:
        self.frames = frames
        self.sent: list[Any] = []
        self.closed = False

    async def wait(self) -> str:
        if self.frames:
            return self.frames.pop(0)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(self, data: Any) -> None:
        self.sent.append(data)

    async def close(self) -> None:
        self.closed = True


async def test_a_silent_session_ends_even_when_a_handler_swallows_the_cancel() -> None:
    # python-engineio's inline handlers swallow CancelledError; the idle timer's cancel
    # may land in one, and the session must end all the same.
    eio = EngineServer(async_mode="asgi", async_handlers=False, ping_interval=0.05,
                       ping_timeout=0.05)  # fmt: skip

    async def on_message(sid: str, data: Any) -> None:
        await asyncio.sleep(60)

    eio.on("message", on_message)
    socket = LeanSocket(eio, "s1")
    ws = FakeWebSocket(["4hello"])
    # asyncio.wait, not wait_for: the loop ends quietly when cancelled, as upstream's does,
    # so a timeout that cancels it would pass for an end.
    reader = asyncio.get_running_loop().create_task(socket._websocket_handler(ws))
    try:
        await asyncio.wait({reader}, timeout=10)
        assert reader.done(), "the silent session was kept"
    finally:
        reader.cancel()
    assert ws.closed and socket.closed


# ------------------------------------------------------------ through real clients


async def joined(
    stack: AsyncExitStack, srv: RunningServer, role: str, name: str, transports: list[str]
) -> RawClient:
    client = await stack.enter_async_context(connect_raw(srv, role, transports=transports))
    assert await client.join(role, name, "o1") == (True, None)
    return client


@pytest.mark.parametrize(
    "transports", [["websocket"], ["polling", "websocket"]], ids=["websocket", "upgraded"]
)
async def test_websocket_sessions_use_the_lean_socket_and_relay_calls(
    server: RunningServer, transports: list[str]
) -> None:
    async with AsyncExitStack() as stack:
        computer = await joined(stack, server, "computer", "c1", transports)
        agent = await joined(stack, server, "agent", "alice", transports)

        async def answer(payload: Any) -> dict[str, Any]:
            return PONG

        computer.sio.on(Event.TOOL_CALL.value, answer, namespace=NAMESPACE)
        while agent.sio.transport() != "websocket" or computer.sio.transport() != "websocket":
            await asyncio.sleep(0.01)
        sockets = list(server.app.sio.eio.sockets.values())
        assert len(sockets) == 2
        assert all(type(s) is LeanSocket and s.upgraded for s in sockets)
        answers = await asyncio.gather(*(agent.call(Event.TOOL_CALL, CALL) for _ in range(20)))
        assert answers == [PONG] * 20
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while server.app.sio.eio.sockets:  # both sessions end when the clients leave
        assert loop.time() < deadline, "an Engine.IO session was kept"
        await asyncio.sleep(0.05)


async def test_a_websocket_client_that_never_answers_pings_is_dropped() -> None:
    settings = ServerSettings(ping_interval=0.2, ping_timeout=0.2)
    async with running_server(settings) as srv:
        url = srv.url.replace("http://", "ws://")
        async with ws_connect(
            f"{url}/{srv.socketio_path}/?EIO=4&transport=websocket&a2c_version=0.2.0"
        ) as ws:
            assert (await ws.recv()).startswith("0{")  # OPEN
            with contextlib.suppress(ConnectionClosed):
                async with asyncio.timeout(30):
                    while True:
                        await ws.recv()  # PINGs, never answered
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while srv.app.sio.eio.sockets:
            assert loop.time() < deadline, "the silent session was kept"
            await asyncio.sleep(0.05)


# ----------------------------------------------------------------- upstream shapes


def test_engineio_makes_its_sockets_itself_before_the_connect_handler() -> None:
    # make_lean swaps the class of the socket python-engineio just made, from the
    # connect handler; that only works while the library makes and stores it first and
    # hands the transport to the socket after the handler.
    source = inspect.getsource(EngineServer._handle_connect)
    made = source.index("async_socket.AsyncSocket(self, sid)")
    stored = source.index("self.sockets[sid] = s")
    handler = source.index("self._trigger_event('connect'")
    transport = source.index("s.handle_get_request(")
    assert made < stored < handler < transport
    upstream = inspect.getsource(AsyncSocket._websocket_handler)
    assert "self.connected" in upstream and "packet.UPGRADE" in upstream
    assert not hasattr(LeanSocket, "__slots__")
