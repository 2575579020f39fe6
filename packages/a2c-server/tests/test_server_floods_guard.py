"""The fence's reach into the ASGI server (a2c_server._upstream._outqueue), pinned.

Dropping a slow consumer aborts its TCP connection through uvicorn's WebSocket protocol
object (the ``send`` callable's owner and its ``transport``). A uvicorn release that
reshapes that would silently bring back the slow-consumer leak (a client that stops reading): this fails
first. A real uvicorn serves a real WebSocket here.
"""

from __future__ import annotations

from a2c_server import ServerSettings
from a2c_server._upstream._engineio import LeanSocket
from a2c_testkit import connect_raw, running_server


async def test_guard_each_websocket_session_can_abort_its_tcp_connection() -> None:
    async with (
        running_server(ServerSettings()) as single,
        connect_raw(single, "agent", transports=["websocket"]),
    ):
        sockets = list(single.app.sio.eio.sockets.values())
        assert sockets and all(isinstance(s, LeanSocket) for s in sockets)
        assert all(callable(s.abort_transport) for s in sockets), (
            "uvicorn's WebSocket protocol no longer exposes its transport through send: "
            "dropped slow consumers would keep their TCP connection and queue"
        )
        assert single.app.sio.output_budget.total >= 0
