"""Test MCP server over Streamable HTTP (``/mcp``) and SSE (``/sse``), for uvicorn.

Run: ``python -m a2c_testkit.mcp_servers.http_server --port 8765`` or, in a test,
``async with serve_http() as base_url: ...`` (uvicorn in a child process on 127.0.0.1,
port 0 by default). ``build_app()`` gives the ASGI app for any uvicorn setup.

Tools: ``search`` (open), ``secure_read`` (needs ``Authorization: Bearer good``: no or another
token → HTTP 401, ``Bearer limited`` → HTTP 403), ``flaky`` (HTTP 502). The refusals are
real HTTP statuses on the JSON-RPC POST, decided by an ASGI middleware, as an OAuth-protected
MCP server would answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from a2c_testkit.mcp_servers._kit import (
    UpstreamGate,
    bearer_status,
    register_raw,
    serve_http_forever,
)

__all__ = ["build_app", "main", "serve_http", "serve_module_http"]


def _build_server() -> tuple[Server[Any], InitializationOptions]:
    server: Server[Any] = Server("a2c-test-http")
    tools = [
        {
            "name": "search",
            "description": "Search (HTTP server).",
            "inputSchema": {"type": "object"},
        },
        {
            "name": "secure_read",
            "description": "Needs authorization.",
            "inputSchema": {"type": "object"},
        },
        {"name": "flaky", "description": "Upstream failure.", "inputSchema": {"type": "object"}},
    ]

    async def list_tools(request: types.ListToolsRequest) -> dict[str, Any]:
        return {"tools": tools}

    async def call_tool(request: types.CallToolRequest) -> dict[str, Any]:
        return {
            "content": [{"type": "text", "text": f"http:{request.params.name}"}],
            "isError": False,
        }

    async def list_resources(request: types.ListResourcesRequest) -> dict[str, Any]:
        return {
            "resources": [
                {
                    "uri": "window://org.a2c.test.http/status",
                    "name": "Status",
                    "annotations": {"priority": 0.5, "audience": ["assistant"]},
                }
            ]
        }

    async def read_resource(request: types.ReadResourceRequest) -> dict[str, Any]:
        return {"contents": [{"uri": str(request.params.uri), "text": "http ok"}]}

    register_raw(server, types.ListToolsRequest, list_tools)
    register_raw(server, types.CallToolRequest, call_tool)
    register_raw(server, types.ListResourcesRequest, list_resources)
    register_raw(server, types.ReadResourceRequest, read_resource)
    options = InitializationOptions(
        server_name="a2c-test-http",
        server_version="0.2.0",
        capabilities=types.ServerCapabilities(
            tools=types.ToolsCapability(list_changed=False),
            resources=types.ResourcesCapability(subscribe=False, list_changed=False),
        ),
    )
    return server, options


def _decide(tool: str, headers: Mapping[str, str]) -> int | None:
    if tool == "flaky":
        return 502
    return bearer_status(headers) if tool == "secure_read" else None


def build_app() -> ASGIApp:
    """The ASGI app: Streamable HTTP at ``/mcp``, SSE at ``/sse`` + ``/messages/``."""
    server, options = _build_server()
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=False)
    sse = SseServerTransport("/messages/")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async with manager.run():
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                message = await receive()
                await send({"type": "lifespan.shutdown.complete"})
            return
        path = scope.get("path", "")
        if path.startswith("/mcp"):
            await manager.handle_request(scope, receive, send)
        elif path.startswith("/sse"):
            async with sse.connect_sse(scope, receive, send) as (read, write):
                await server.run(read, write, options)
        elif path.startswith("/messages"):
            await sse.handle_post_message(scope, receive, send)
        else:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    # The session manager needs the initialization options of the low-level server.
    server.create_initialization_options = lambda *a, **k: options  # type: ignore[method-assign]
    return UpstreamGate(app, _decide)


@contextlib.asynccontextmanager
async def serve_http(port: int = 0, startup_timeout: float = 60.0) -> AsyncIterator[str]:
    """Run this server under uvicorn in a child process on 127.0.0.1; yields its base URL.

    A separate process keeps the MCP server library's own resource leaks (and its event
    loop) out of the test process, as in a real deployment.
    """
    args = ("--port", str(port), "--announce")
    async with serve_module_http("http_server", *args, startup_timeout=startup_timeout) as url:
        yield url


@contextlib.asynccontextmanager
async def serve_module_http(
    module: str, *args: str, startup_timeout: float = 60.0
) -> AsyncIterator[str]:
    """Run ``python -m a2c_testkit.mcp_servers.<module> ARGS`` (a server that prints
    ``PORT <n>`` once it listens on 127.0.0.1); yields its base URL; stops it after."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        f"a2c_testkit.mcp_servers.{module}",
        *args,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), startup_timeout)
        if not line.startswith(b"PORT "):
            raise RuntimeError(f"test HTTP MCP server {module} did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="A2C test MCP server over HTTP")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--announce", action="store_true", help="print 'PORT <n>' once listening")
    args = parser.parse_args()
    serve_http_forever(build_app(), args.port, announce=args.announce)


if __name__ == "__main__":
    main()
