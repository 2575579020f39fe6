"""Streamable HTTP for the bridge: ``/mcp`` under uvicorn, behind a bearer-token gate.

Rules:

* served at ``http://HOST:PORT/mcp`` (``/mcp/`` too); anything else is 404;
* with a token every request must carry ``Authorization: Bearer <token>`` (compared in
  constant time), else 401 with ``WWW-Authenticate: Bearer``; a non-loopback HOST without a
  token is refused before anything starts (see :mod:`._args`);
* on loopback, ``Host`` and ``Origin`` must be loopback too (the MCP library's DNS
  rebinding protection): a web page the user visits cannot drive the bridge.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import sys
from typing import Any

import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ._args import is_loopback
from ._server import Bridge

__all__ = ["BearerGate", "serve_http"]

logger = logging.getLogger("a2c_agent.bridge")

_PATHS = ("/mcp", "/mcp/")
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


async def _plain(send: Send, status: int, body: dict[str, Any], headers: list[Any]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": data})


class BearerGate:
    """ASGI middleware: only requests with the bearer token reach ``app``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                logger.warning("HTTP request without the right bearer token refused")
                await _plain(
                    send,
                    401,
                    {"error": "a valid 'Authorization: Bearer <token>' header is required"},
                    [(b"www-authenticate", b'Bearer realm="a2c-agent-mcp"')],
                )
                return
        await self.app(scope, receive, send)


def build_app(bridge: Bridge, host: str) -> tuple[ASGIApp, StreamableHTTPSessionManager]:
    """The ASGI app serving ``/mcp`` and the session manager it needs running."""
    security = (
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=_LOOPBACK_HOSTS,
            allowed_origins=_LOOPBACK_ORIGINS,
        )
        if is_loopback(host)
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    manager = StreamableHTTPSessionManager(app=bridge.server, security_settings=security)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in _PATHS:
            await manager.handle_request(scope, receive, send)
        elif scope["type"] == "http":
            await _plain(send, 404, {"error": "not found: the MCP endpoint is /mcp"}, [])

    return app, manager


async def serve_http(bridge: Bridge, host: str, port: int, token: str | None) -> None:
    """Serve until cancelled; says ``serving MCP at <url>`` on stderr once listening."""
    app, manager = build_app(bridge, host)
    gated: ASGIApp = BearerGate(app, token) if token else app
    config = uvicorn.Config(gated, host=host, port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with manager.run():
        task = asyncio.ensure_future(server.serve())
        while not server.started and not task.done():
            await asyncio.wait({task}, timeout=0.05)
        if server.started:
            bound = server.servers[0].sockets[0].getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            url = f"http://{shown}:{bound}/mcp"
            print(f"a2c-agent: serving MCP at {url}", file=sys.stderr, flush=True)
        try:
            await task
        finally:
            server.should_exit = True
            await asyncio.gather(task, return_exceptions=True)
