"""Small helpers shared by the test MCP servers: raw JSON results and tool plumbing.

The servers answer with raw JSON so that they can send what real-world servers send,
including values the typed ``mcp`` models would refuse (a priority of 5, a query in a
window URI): mcp 2 validates every handler's result against the protocol schema, so a raw
answer is given by a server middleware before that step (:func:`register_raw`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "UpstreamGate",
    "bearer_status",
    "current_session",
    "paged",
    "register_raw",
    "run_from_argv",
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


_SESSION: ContextVar[ServerSession | None] = ContextVar("a2c_test_session", default=None)


def current_session() -> ServerSession:
    """The session of the request a raw handler answers (to send it notifications)."""
    session = _SESSION.get()
    if session is None:
        raise RuntimeError("current_session() outside a raw handler")
    return session


def register_raw(
    server: Server[Any],
    request_type: type[Any],
    handler: Callable[[Any], Awaitable[Mapping[str, Any]]],
) -> None:
    """Answer ``request_type`` with the raw JSON returned by ``handler``.

    ``handler`` gets the request as its typed model (v1's request objects); what it
    returns is sent as it is, unvalidated. A stub typed handler is registered too, so the
    server's capabilities (which mcp 2 derives from its handlers) name the method.
    """
    method: str = request_type.model_fields["method"].default
    raw: dict[str, Callable[[Any], Awaitable[Mapping[str, Any]]]] | None = getattr(
        server, "_a2c_raw", None
    )
    if raw is None:
        raw = {}
        server._a2c_raw = raw  # type: ignore[attr-defined]

        async def answer_raw(
            ctx: ServerRequestContext[Any, Any], call_next: CallNext
        ) -> HandlerResult:
            chosen = raw.get(ctx.method)
            if chosen is None or ctx.request_id is None:
                return await call_next(ctx)
            payload: dict[str, Any] = {"method": ctx.method}
            if ctx.params is not None:
                payload["params"] = dict(ctx.params)
            request = type_of[ctx.method].model_validate(payload)
            token = _SESSION.set(ctx.session)
            try:
                return dict(await chosen(request))
            finally:
                _SESSION.reset(token)

        type_of: dict[str, Any] = {}
        server._a2c_raw_types = type_of  # type: ignore[attr-defined]
        server.middleware.append(answer_raw)
    raw[method] = handler
    server._a2c_raw_types[method] = request_type  # type: ignore[attr-defined]

    async def stub(ctx: Any, params: Any) -> Any:
        raise RuntimeError(f"{method} is answered by the raw middleware")

    server.add_request_handler(method, types.RequestParams, stub)


def paged(items: Sequence[Any], cursor: str | None, page_size: int) -> tuple[list[Any], str | None]:
    """One page of ``items``; cursors are ``"page-<start>"``."""
    start = 0
    if cursor:
        start = int(cursor.removeprefix("page-"))
    end = start + page_size
    return list(items[start:end]), (f"page-{end}" if end < len(items) else None)


def text(value: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=value)]


def run_stdio(server: Server[Any], options: InitializationOptions) -> None:
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


def run_from_argv(build: Callable[[], MCPServer]) -> None:
    """The entry point of a test server built on ``MCPServer``: over stdio, or with
    ``--http PORT`` (0 picks one) over streamable HTTP, announcing the port."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    args = parser.parse_args()
    server = build()
    if args.http is None:
        server.run("stdio")
    else:
        serve_http_forever(server.streamable_http_app(), args.http, announce=True)
