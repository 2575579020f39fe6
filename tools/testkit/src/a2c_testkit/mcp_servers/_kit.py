"""Small helpers shared by the test MCP servers: raw JSON results and tool plumbing.

The servers answer ``resources/list`` with raw JSON (through an ``extra="allow"`` result)
so that they can send what real-world servers send, including values the typed ``mcp``
models would refuse (a priority of 5, a query in a window URI).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server

__all__ = ["paged", "raw_result", "register_raw", "text"]


def raw_result(payload: Mapping[str, Any]) -> types.ServerResult:
    """A result sent exactly as given (no model validation of its fields)."""
    return types.ServerResult(types.EmptyResult(**dict(payload)))


def register_raw(
    server: Server[Any, Any],
    request_type: type[Any],
    handler: Callable[[Any], Awaitable[Mapping[str, Any]]],
) -> None:
    """Answer ``request_type`` with the raw JSON returned by ``handler``."""

    async def wrapped(request: Any) -> types.ServerResult:
        return raw_result(await handler(request))

    server.request_handlers[request_type] = wrapped


def paged(items: Sequence[Any], cursor: str | None, page_size: int) -> tuple[list[Any], str | None]:
    """One page of ``items``; cursors are ``"page-<start>"``."""
    start = 0
    if cursor:
        start = int(cursor.removeprefix("page-"))
    end = start + page_size
    return list(items[start:end]), (f"page-{end}" if end < len(items) else None)


def text(value: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=value)]
