"""The two streams between a transport and the MCP session: the checked writer (a message
that cannot be encoded fails its own send, not the session) and the watched receiver (the
session's end is noticed without a relay task)."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio

from ._failures import McpCallFailure

__all__ = ["CheckedWriter", "WatchedReceive"]


class CheckedWriter:
    """The session's write stream, encoding each message before the transport does.

    A transport encodes in its own writer task, where a failure (a lone surrogate in an
    argument) ends the task and with it the session and every call in flight. Encoding
    here first fails only the send of that message, in its caller.
    """

    def __init__(self, inner: Any, server: str, encoding: str, errors: str) -> None:
        self._inner = inner
        self._server = server
        self._encoding = encoding
        self._errors = errors

    async def send(self, item: Any) -> None:
        try:
            text = item.message.model_dump_json(by_alias=True, exclude_none=True)
            text.encode(self._encoding, self._errors)
        except (ValueError, UnicodeError) as exc:  # PydanticSerializationError is a ValueError
            raise McpCallFailure(
                f"MCP server {self._server}: the request cannot be encoded "
                f"({type(exc).__name__}); nothing was sent"
            ) from exc
        await self._inner.send(item)

    async def __aenter__(self) -> CheckedWriter:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class WatchedReceive:
    """The transport's receiving stream, handed to the MCP session as is, that sets
    ``closed`` when it ends.

    The session must learn that the MCP server went away (the stream ended or broke)
    without an extra hop: a relay task between transport and session cost every message
    one more stream hand-off and event-loop turn, a measurable share of a tool call.
    """

    _ENDED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)

    def __init__(self, source: Any, closed: anyio.Event) -> None:
        self._source = source
        self._closed = closed

    async def receive(self) -> Any:
        try:
            return await self._source.receive()
        except self._ENDED:
            self._closed.set()
            raise

    def __aiter__(self) -> WatchedReceive:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed.set()
        with contextlib.suppress(Exception):
            await self._source.aclose()

    async def __aenter__(self) -> WatchedReceive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
