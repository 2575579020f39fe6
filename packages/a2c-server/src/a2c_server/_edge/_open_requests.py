"""The requests the app is serving, so that a shutdown can answer them instead of
leaving them to uvicorn's cancel.

At shutdown uvicorn waits ``timeout_graceful_shutdown`` seconds for open requests, then
cancels each one: an ERROR ``Cancel N running task(s)`` and a traceback per request
(``Exception in ASGI application``), while the client gets a 500 or nothing. Long-polls
are open by design, and a client can hold a request open by never finishing its body.

:class:`OpenRequests` wraps every HTTP request and WebSocket. :meth:`OpenRequests.end`,
called once the routed calls are drained, answers each open HTTP request with a flat 503
(``details.reason: "server_shutdown"``, the connection closed), closes the long-polling
Engine.IO sessions (their Socket.IO disconnect handlers run, as they do for WebSockets),
and logs one line with the counts. WebSockets are left to uvicorn, which closes them with
1012 (service restart) right after; a client reconnects either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from a2c_server._observe._logs import log

from ._gate import Message, Receive, Scope, Send
from ._polling import send_flat_error

__all__ = ["OpenRequests"]

_log = logging.getLogger("a2c_server.shutdown")

_SHUTDOWN: Final = {"reason": "server_shutdown"}
_MARK: Final = "a2c-server shutdown"  # the cancel message of our own cancels


class _Http:
    """One open HTTP request: whether its response started, and whether shutdown took it."""

    __slots__ = ("_send", "ended", "started", "swallowing")

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.ended = False
        self.swallowing = False

    async def send(self, message: Message) -> None:
        if message.get("type") == "http.response.start":
            if self.ended:  # shutdown answers this request: drop what the app says now
                self.swallowing = True
                return
            self.started = True
        elif self.swallowing:
            return
        await self._send(message)


class OpenRequests:
    """Tracks the app's open HTTP requests and WebSockets (see the module doc)."""

    def __init__(self) -> None:
        self.closing = False
        self._http: dict[asyncio.Task[Any], _Http] = {}
        self._websockets = 0

    @property
    def open_http(self) -> int:
        return len(self._http)

    @property
    def open_websockets(self) -> int:
        return self._websockets

    async def serve(
        self, app: Callable[[Scope, Receive, Send], Awaitable[None]],
        scope: Scope, receive: Receive, send: Send,
    ) -> None:  # fmt: skip
        """Run ``app`` for one request, tracked until it returns."""
        if scope.get("type") == "websocket":
            self._websockets += 1
            try:
                await app(scope, receive, send)
            finally:
                self._websockets -= 1
            return
        if self.closing:  # a keep-alive connection's next request, after end()
            await _unavailable(send)
            return
        task = asyncio.current_task()
        assert task is not None
        entry = self._http[task] = _Http(send)
        try:
            await app(scope, receive, entry.send)
        except asyncio.CancelledError:
            if not entry.ended:
                raise
            task.uncancel()  # our own cancel: the request is answered below
        finally:
            del self._http[task]
        if entry.ended and not entry.started:
            with contextlib.suppress(Exception):  # the client may be gone already
                await _unavailable(send)

    async def end(self, close_sessions: Callable[[], Awaitable[int]], timeout: float) -> None:
        """Answer every open HTTP request (503), close polling sessions, log the counts.

        ``close_sessions()`` closes the long-polling Engine.IO sessions and returns how
        many. Waits up to ``timeout`` seconds for the requests to finish.
        """
        self.closing = True
        tasks = list(self._http)
        for task in tasks:
            self._http[task].ended = True
            task.cancel(_MARK)
        sessions = await close_sessions()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        unfinished = sum(1 for task in tasks if not task.done())
        log(
            _log, logging.WARNING if unfinished else logging.INFO,
            "open requests ended", answered_503=len(tasks) - unfinished,
            polling_sessions_closed=sessions, websockets_left_to_close=self._websockets,
            unfinished=unfinished or None,
        )  # fmt: skip


async def _unavailable(send: Send) -> None:
    await send_flat_error(send, 503, "Server shutting down", details=dict(_SHUTDOWN), close=True)
