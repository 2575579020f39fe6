"""Streamable HTTP for the bridge: ``/mcp`` under uvicorn, behind the gate of :mod:`._gate`.

Rules:

* served at ``http://HOST:PORT/mcp`` (``/mcp/`` too); anything else is 404;
* every request passes :func:`~._gate.check_request` first (loopback ``Host``, allowed
  ``Origin``, the bearer token); a non-loopback HOST without a token is refused before
  anything starts (see :mod:`._args`);
* without a token given, one is made and left in a file only its owner reads
  (:mod:`._token`), removed when serving stops; ``--no-token`` (loopback only) serves
  without, with a WARNING that every local account can use the bridge;
* both MCP eras are served: a request whose ``MCP-Protocol-Version`` names 2026-07-28 is
  answered on its own (no session), the handshake era keeps its sessions (at most
  10,000, each closed after 30 idle minutes: mcp's defaults);
* the address is bound before serving (a port in use is an OSError naming it); signals
  are the caller's (:mod:`._run`): cancelling :func:`serve_http` stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._gate import check_request, is_loopback
from ._server import Bridge
from ._token import new_token, remove_token, token_dir, token_path, write_token

__all__ = ["Gate", "serve_http"]

logger = logging.getLogger("a2c_agent.bridge")

_PATHS = ("/mcp", "/mcp/")
#: seconds between two WARNINGs about refused requests
_WARN_EVERY = 10.0


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


def _jsonrpc_error(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


class Gate:
    """ASGI middleware: only the requests :func:`~._gate.check_request` allows reach ``app``."""

    def __init__(
        self, app: ASGIApp, *, loopback: bool, token: str | None, origins: Collection[str]
    ) -> None:
        self.app = app
        self._loopback = loopback
        self._token = token
        self._origins = frozenset(origins)
        self._refused = 0
        self._last_warning = float("-inf")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = check_request(
                dict(scope.get("headers") or []),
                loopback=self._loopback,
                token=self._token,
                origins=self._origins,
            )
            if refusal is not None:
                self._refused += 1
                now = time.monotonic()
                if now - self._last_warning >= _WARN_EVERY:  # a page may knock in a loop
                    self._last_warning = now
                    logger.warning("HTTP request refused (%d): %s (%d refused so far)",
                                   refusal.status, refusal.message, self._refused)  # fmt: skip
                extra = [(b"www-authenticate", b'Bearer realm="a2c-agent-mcp"')]
                await _plain(
                    send,
                    refusal.status,
                    _jsonrpc_error(refusal.message),
                    extra if refusal.status == 401 else [],
                )
                return
        await self.app(scope, receive, send)


async def _answered_once(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app``; once its response is complete, later messages and a closed-stream error
    are a host that left while mcp still handled its message (mcp answers 202, then meets
    the session the host's DELETE closed and tries a 500): dropped, with a DEBUG line,
    where uvicorn would log an ERROR with two tracebacks. Nothing is lost: the host is gone.
    """
    import anyio

    complete = False

    async def once(message: Message) -> None:
        nonlocal complete
        if complete:
            logger.debug("dropped %s after the response was complete", message["type"])
            return
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            complete = True
        await send(message)

    try:
        await app(scope, receive, once)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
        if not complete:
            raise
        logger.debug("a host left while its message was handled: %s", type(exc).__name__)


def build_app(bridge: Bridge) -> tuple[ASGIApp, StreamableHTTPSessionManager]:
    """The ASGI app serving ``/mcp`` and the session manager it needs running."""
    # Host and Origin are checked by the Gate, exactly; mcp's own check matches prefixes
    # (it let "Host: localhost:evil" through) and knows only loopback.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    manager = StreamableHTTPSessionManager(app=bridge.server, security_settings=security)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in _PATHS:
            await _answered_once(manager.handle_request, scope, receive, send)
        elif scope["type"] == "http":
            await _plain(send, 404, {"error": "not found: the MCP endpoint is /mcp"}, [])

    return app, manager


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: ``a2c-agent mcp`` handles SIGINT/SIGTERM
    for both transports (uvicorn's re-raises the signal once stopped, which kills the
    process before the bridge has left its office)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, or an OSError saying why there is none (a port in use...)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot serve HTTP on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


async def serve_http(
    bridge: Bridge,
    host: str,
    port: int,
    token: str | None,
    origins: Collection[str] = (),
    *,
    generate: bool = True,
) -> None:
    """Serve until cancelled; says ``serving MCP at <url>`` on stderr once listening.

    Without ``token``, one is made and written to a file (``generate``, the default) or
    none is asked for (``generate=False``: ``--no-token``, said in a WARNING). Raises
    OSError (before serving anything) when the address cannot be listened on or the token
    file cannot be written.
    """
    # Bound here, not by uvicorn: its failure to bind is a SystemExit out of the loop.
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/mcp"
    token_file = None
    if not token and generate:
        token = new_token()
        token_file = token_path(token_dir(os.environ, Path.home()), bound)
        try:
            write_token(token_file, token)
        except OSError:
            sock.close()
            raise
        print(f"a2c-agent: HTTP bearer token in {token_file} (readable by you only); an MCP "
              "host sends it as the header 'Authorization: Bearer <token>'", file=sys.stderr,
              flush=True)  # fmt: skip
    elif not token:
        logger.warning("serving %s without a bearer token (--no-token): every account on "
                       "this machine can use the office's tools through it", url)  # fmt: skip
    try:
        await _serve(bridge, sock, url, token, origins, loopback=is_loopback(host))
    finally:
        sock.close()
        if token_file is not None:
            remove_token(token_file)


async def _serve(
    bridge: Bridge, sock: socket.socket, url: str, token: str | None,
    origins: Collection[str], *, loopback: bool,
) -> None:  # fmt: skip
    app, manager = build_app(bridge)
    gated = Gate(app, loopback=loopback, token=token or None, origins=origins)
    config = uvicorn.Config(gated, log_level="warning", lifespan="off")
    server = _Uvicorn(config)
    async with manager.run():
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.wait({task}, timeout=0.05)
        if server.started:
            print(f"a2c-agent: serving MCP at {url}", file=sys.stderr, flush=True)
        try:
            await task
        finally:
            server.should_exit = True
            await asyncio.gather(task, return_exceptions=True)
