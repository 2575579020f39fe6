"""The ASGI side of :mod:`a2c_server._floods._pacing`: new handshakes wait their turn.

Only a request without an Engine.IO ``sid`` (a new handshake, long-polling or WebSocket)
is paced, and only while connects are being refused in numbers. A waiting request holds
a future that one timer resolves when the pacer says its turn came (or that it waited too
long, or was refused and held until then); a request refused is answered 503 (HTTP) /
closed with 1013 "try again later" (WebSocket, before it is accepted). At shutdown every
waiting request is answered so at once.
"""

from __future__ import annotations

import asyncio
import time

from a2c_server._floods._pacing import REFUSE, STARTED, HandshakePacer, Ticket

from ._gate import Receive, Scope, Send, first_query_value

__all__ = ["HandshakeTurns"]

_BUSY = b'{"code":503,"message":"Service Unavailable: too many refused connects, try again"}'


class HandshakeTurns:
    """Runs a :class:`HandshakePacer` on the event loop: its waiters and its one timer."""

    def __init__(self, pacer: HandshakePacer) -> None:
        self.pacer = pacer
        self._timer: asyncio.TimerHandle | None = None

    async def wait_turn(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """True when the request may go on (at once or after its wait); False when it
        was answered here."""
        pacer = self.pacer
        now = time.monotonic()
        if not pacer.active(now):
            return True
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        if first_query_value(query, "sid") is not None:
            return True
        client = scope.get("client")
        verdict = pacer.admit(str(client[0]) if client else "?", now)
        if isinstance(verdict, Ticket):
            if await self._wait(verdict):
                return True
        elif verdict != REFUSE:
            return True
        await _busy(scope, receive, send)
        return False

    async def _wait(self, ticket: Ticket) -> bool:
        ticket.waker = asyncio.get_running_loop().create_future()
        self._arm()
        try:
            await ticket.waker
        finally:
            self.pacer.withdraw(ticket)  # cancelled: the next one takes the turn
        return ticket.state == STARTED

    def _arm(self) -> None:
        if self._timer is not None:
            return
        when = self.pacer.next_due()
        if when is not None:
            delay = max(0.0, when - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        _wake(self.pacer.due(time.monotonic()))
        self._arm()

    def close(self) -> int:
        """At shutdown: answer every waiting handshake busy now; how many there were."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        ended = self.pacer.release_all()
        _wake(ended)
        return len(ended)


def _wake(tickets: list[Ticket]) -> None:
    for ticket in tickets:
        waker = ticket.waker
        if waker is not None and not waker.done():
            waker.set_result(None)


async def _busy(scope: Scope, receive: Receive, send: Send) -> None:
    if scope.get("type") == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": 1013})
    else:
        await send({"type": "http.response.start", "status": 503, "headers": [
            (b"content-type", b"application/json"), (b"retry-after", b"1"),
            (b"content-length", str(len(_BUSY)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": _BUSY})
