"""The ASGI side of :mod:`a2c_server._floods._pacing`: new handshakes wait their turn.

Only a request without an Engine.IO ``sid`` (a new handshake, long-polling or WebSocket)
is paced, and only while connects are being refused in numbers; it sleeps, or is answered
503 (HTTP) / closed with 1013 "try again later" (WebSocket, before it is accepted) when
its turn is too far away.
"""

from __future__ import annotations

import asyncio
import time

from a2c_server._edge._gate import Receive, Scope, Send, first_query_value
from a2c_server._floods._pacing import REFUSE, HandshakePacer

__all__ = ["wait_turn"]

_BUSY = b'{"code":503,"message":"Service Unavailable: too many refused connects, try again"}'


async def wait_turn(pacer: HandshakePacer, scope: Scope, receive: Receive, send: Send) -> bool:
    """True when the request may go on (at once or after its wait); False when it was
    answered here."""
    now = time.monotonic()
    if not pacer.active(now):
        return True
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    if first_query_value(query, "sid") is not None:
        return True
    wait = pacer.delay(now)
    if wait == REFUSE:
        if scope.get("type") == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1013})
        else:
            await send({"type": "http.response.start", "status": 503, "headers": [
                (b"content-type", b"application/json"), (b"retry-after", b"1"),
                (b"content-length", str(len(_BUSY)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": _BUSY})
        return False
    if wait > 0:
        await asyncio.sleep(wait)
    return True
