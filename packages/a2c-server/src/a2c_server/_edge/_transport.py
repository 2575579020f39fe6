"""The ASGI edge of Engine.IO: whatever a request does to python-engineio, no traceback.

python-engineio lets some client-caused exceptions escape ``handle_request`` (a polling
POST for a session that just closed, a malformed packet header, an empty frame during the
WebSocket upgrade probe; after it, :mod:`a2c_server._socket` ends the session itself);
the ASGI server then logs them at ERROR with a traceback and answers HTTP 500.
:func:`serve_engineio` turns each into one rate-limited WARNING, closes the Engine.IO
session involved (its writer would otherwise stay parked) and answers a plain 400 when no
response has started. A GET with ``transport=websocket`` that is not a WebSocket handshake
is refused before python-engineio opens a session for it (it would answer nothing), and
any request python-engineio returns from without a response gets the same 400.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from a2c_server._relay._sio import SmcpSocketServer

from ._gate import Message, Receive, Scope, Send, first_query_value

__all__ = ["serve_engineio"]


async def serve_engineio(sio: SmcpSocketServer, scope: Scope, receive: Receive, send: Send) -> None:
    """Hand one ASGI request to python-socketio, containing what it raises."""
    websocket = scope.get("type") == "websocket"
    started = False

    async def tracking_send(message: Message) -> None:
        nonlocal started
        started = started or message.get("type") == "http.response.start"
        await send(message)

    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    if not websocket and _websocket_over_http(query):
        sio.noise.warning(
            "websocket over http", "request refused: transport=websocket without an upgrade",
            peer=_peer(scope),
        )  # fmt: skip
        await _refuse(scope, send)
        return
    try:
        # A WebSocket can be closed whatever it has sent so far, so only HTTP needs to know
        # whether a response started; its frames, the hot path, go to ``send`` unwrapped.
        await sio.handle_request(scope, receive, send if websocket else tracking_send)
    except Exception as exc:
        eio_sid = first_query_value(query, "sid")
        sio.noise.warning(
            "transport error", "request refused: Engine.IO could not handle it",
            transport=scope.get("type"), eio_sid=eio_sid, error=type(exc).__name__,
        )  # fmt: skip
        if eio_sid is not None:
            await sio.close_transport(eio_sid)
        if websocket:
            with contextlib.suppress(Exception):  # already closed by the client or the server
                await _refuse(scope, send)
        elif not started:
            await _refuse(scope, send)
    else:
        if not websocket and not started:
            # Not seen since the check above; kept so that no request goes unanswered.
            sio.noise.warning(
                "unanswered", "request refused: Engine.IO returned no response",
                peer=_peer(scope),
            )  # fmt: skip
            await _refuse(scope, send)


def _websocket_over_http(query: str) -> bool:
    # python-engineio opens a session for a GET with transport=websocket and an Upgrade
    # header but no "Connection: Upgrade", polls it as if it were long-polling, and then
    # returns the packets instead of a response (uvicorn logs an ERROR and answers 500).
    # A real WebSocket handshake never arrives as an http scope.
    return (
        first_query_value(query, "transport") == "websocket"
        and first_query_value(query, "sid") is None
    )


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


async def _refuse(scope: Scope, send: Send) -> None:
    if scope.get("type") == "websocket":
        await send({"type": "websocket.close", "code": 1002})
        return
    body = json.dumps({"code": 400, "message": "Bad request"}).encode()
    headers: list[tuple[bytes, Any]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})
