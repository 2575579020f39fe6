"""A WARNING when a transport is dropped because one message exceeded the size limit.

python-engineio (4.x) closes the session silently in that case: a long-polling POST over
``max_http_buffer_size`` is refused and the session disconnected; a WebSocket message over
it ends the read loop; one over the ASGI server's ``ws_max_size`` is closed with 1009 by
the WebSocket layer before anyone sees it. This thin ASGI wrapper, placed in front of
Engine.IO, notices each case and logs the Engine.IO sid, the Socket.IO sid, the member's
role and name (looked up *before* the drop removes the session) and the size when it is
known. For the 1009 close the size is not reported by the WebSocket layer; the log says so.
A WebSocket the ASGI server closed with 1007 (a text frame that is not UTF-8) gets one
WARNING with the peer here too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from a2c_server._observe._logs import log

from ._gate import Message, Receive, Scope, Send, first_query_value

__all__ = ["OversizeWatch", "content_length"]

_log = logging.getLogger("a2c_server.limits")

#: ``describe(eio_sid) -> (socketio_sid, role, name)``, each None when unknown.
Describe = Callable[[str], Awaitable[tuple[str | None, str | None, str | None]]]
_WS_MESSAGE_TOO_BIG = 1009
_WS_INVALID_TEXT = 1007  # uvicorn's WebSocket layer closed it (see _uvicorn_log)


def _eio_sid(scope: Scope) -> str | None:
    return first_query_value(scope.get("query_string", b"").decode("latin-1"), "sid") or None


def content_length(scope: Scope) -> int | None:
    """The request's Content-Length header as a number (None when absent or not one)."""
    for key, value in scope.get("headers", ()):
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class OversizeWatch:
    """ASGI wrapper that logs size-limit drops of Engine.IO sessions (see module doc)."""

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        *,
        limit: int,
        describe: Describe,
        on_drop: Callable[[str], None] | None = None,
    ) -> None:
        self._app = app
        self._limit = limit
        self._describe = describe
        self._on_drop = on_drop  # told the transport ("polling"/"websocket") of each drop

    async def _warn(self, eio_sid: str | None, size: int | None, how: str) -> None:
        if self._on_drop is not None:
            self._on_drop("websocket" if how.startswith("WebSocket") else "polling")
        sid, role, name = (None, None, None)
        if eio_sid is not None:
            sid, role, name = await self._describe(eio_sid)
        log(
            _log,
            logging.WARNING,
            f"dropping a transport: a message exceeded max_message_bytes ({how})",
            eio_sid=eio_sid or "unknown",
            sid=sid,
            role=role,
            name=name,
            size=size if size is not None else "not reported by the WebSocket layer",
            limit=self._limit,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "http" and scope.get("method") == "POST":
            length = content_length(scope)
            if length is not None and length > self._limit:
                await self._warn(_eio_sid(scope), length, "long-polling POST")
        elif kind == "websocket":
            receive = self._watch_websocket(scope, receive)
        await self._app(scope, receive, send)

    def _watch_websocket(self, scope: Scope, receive: Receive) -> Receive:
        eio_sid = _eio_sid(scope)

        async def watched() -> Message:
            message = await receive()
            kind = message.get("type")
            if kind == "websocket.receive":
                data = message.get("text") or message.get("bytes") or ""
                size = len(data)
                # Characters are 1-4 bytes: encode only when the count alone cannot tell.
                if isinstance(data, str) and size <= self._limit < 4 * size:
                    size = len(data.encode("utf-8"))
                if size > self._limit:
                    await self._warn(eio_sid, size, "WebSocket message")
            elif kind == "websocket.disconnect":
                code = message.get("code")
                if code == _WS_MESSAGE_TOO_BIG:
                    await self._warn(eio_sid, None, "WebSocket closed with 1009")
                elif code == _WS_INVALID_TEXT:
                    client = scope.get("client")
                    log(_log, logging.WARNING,
                        "WebSocket closed with 1007: a text frame was not valid UTF-8",
                        peer=f"{client[0]}:{client[1]}" if client else "?",
                        eio_sid=eio_sid or "unknown")  # fmt: skip
            return message

        return watched
