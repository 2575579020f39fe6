"""Small helpers shared by the test MCP servers: raw JSON results and tool plumbing.

The servers answer ``resources/list`` with raw JSON (through an ``extra="allow"`` result)
so that they can send what real-world servers send, including values the typed ``mcp``
models would refuse (a priority of 5, a query in a window URI).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "UpstreamGate",
    "bearer_status",
    "paged",
    "raw_result",
    "register_raw",
    "run_stdio",
    "serve_http_forever",
    "text",
]

#: Decides the HTTP status for a ``tools/call`` of ``tool`` with these request headers
#: (lower-cased names); None lets the call through.
ToolCallDecision = Callable[[str, Mapping[str, str]], int | None]


def bearer_status(headers: Mapping[str, str]) -> int | None:
    """How an OAuth-protected server answers: ``Bearer good`` passes, ``Bearer limited`` is
    signed in without the scope (403), anything else is not authorized (401)."""
    token = headers.get("authorization", "")
    if token == "Bearer good":
        return None
    return 403 if token == "Bearer limited" else 401


class UpstreamGate:
    """ASGI middleware refusing chosen ``tools/call`` POSTs with real HTTP statuses, before
    the MCP server sees them, as an authorization gateway in front of it would."""

    def __init__(self, app: ASGIApp, decide: ToolCallDecision) -> None:
        self.app = app
        self.decide = decide

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        status = self._status(scope, body)
        if status is not None:
            headers = [(b"content-type", b"application/json")]
            if status == 401:
                headers.append((b"www-authenticate", b'Bearer realm="a2c-test"'))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send(
                {"type": "http.response.body", "body": json.dumps({"error": status}).encode()}
            )
            return
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _status(self, scope: Scope, body: bytes) -> int | None:
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        tool = (message.get("params") or {}).get("name")
        if not isinstance(tool, str):
            return None
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        return self.decide(tool, headers)


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


def run_stdio(server: Server[Any, Any], options: InitializationOptions) -> None:
    """Serve ``server`` over stdin/stdout until the client goes away."""

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


def serve_http_forever(app: ASGIApp, port: int, *, announce: bool) -> None:
    """Serve ``app`` under uvicorn on 127.0.0.1:``port`` (0 picks one); with ``announce``,
    print ``PORT <n>`` once it listens so a parent process can find it."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve, [sock])
            while not web.started:
                await anyio.sleep(0.02)
            if announce:
                print(f"PORT {sock.getsockname()[1]}", flush=True)

    anyio.run(run)
