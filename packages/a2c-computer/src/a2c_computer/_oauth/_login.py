"""``auth login``: the authorization-code + PKCE sign-in with a loopback redirect.

Rules:

* ``mcp``'s OAuth provider runs the flow (discovery, dynamic client registration when no
  ``client_id`` is configured, PKCE, token exchange); this module only supplies the
  loopback redirect (``http://127.0.0.1:PORT/callback``, a free port unless the configured
  ``client_metadata.redirect_uris`` names one), shows the URL and opens a browser where
  one exists;
* a sign-in always starts fresh (stored tokens are not reused, a dynamic client registers
  again: the redirect port changes); its new tokens replace the stored record, and the
  sign-in ends with ``initialize`` and ``tools/list`` under them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.shared.auth import AuthorizationCodeResult

from a2c_computer._exceptions import ConfigError
from a2c_computer._upstream import streamable_http_streams
from a2c_protocol import OAuthSettings, SseServerConfig, StreamableServerConfig

from ._provider import ComputerOAuth, ServerTokenStorage, client_metadata, resource_of
from ._store import TokenStore

__all__ = ["sign_in"]

logger = logging.getLogger("a2c_computer.oauth")

_PAGE = b"<!doctype html><title>a2c-computer</title><p>Signed in. You may close this window.</p>"


class _Loopback:
    """A one-shot HTTP listener on 127.0.0.1 that takes the authorization redirect."""

    def __init__(self, port: int, path: str) -> None:
        self._port = port
        self.path = path
        self.result: asyncio.Future[AuthorizationCodeResult] = (
            asyncio.get_running_loop().create_future()
        )
        self._server: asyncio.Server | None = None
        #: The ``state`` of the authorization URL the browser was sent to; a redirect
        #: carrying another one (any local process or web page can reach this port) is
        #: ignored instead of ending the sign-in.
        self.expected_state: str | None = None

    def expect(self, authorization_url: str) -> None:
        states = parse_qs(urlsplit(authorization_url).query).get("state")
        self.expected_state = states[0] if states else None

    def _ours(self, query: dict[str, str]) -> bool:
        state = query.get("state")
        return (
            self.expected_state is not None
            and state is not None
            and hmac.compare_digest(state.encode(), self.expected_state.encode())
        )

    async def __aenter__(self) -> _Loopback:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self._port)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await self._server.wait_closed()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._port}{self.path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 30)
            while (await asyncio.wait_for(reader.readline(), 30)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 else None
            if target is None or target.path != self.path:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            status, page = b"200 OK", _PAGE
            if not self._ours(query):
                status, page = b"400 Bad Request", b"Not the redirect of this sign-in."
            elif not self.result.done():
                if "code" in query:
                    self.result.set_result(
                        # iss (RFC 9207): mcp checks it against the expected issuer.
                        AuthorizationCodeResult(
                            code=query["code"], state=query.get("state"), iss=query.get("iss")
                        )
                    )
                else:
                    error = query.get("error", "no code in the redirect")
                    self.result.set_exception(ConfigError(f"the sign-in was refused: {error}"))
                    status, page = b"400 Bad Request", b"Sign-in refused."
            writer.write(
                b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\n"
                b"Content-Length: "
                + str(len(page)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + page
            )
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()


def _loopback_of(settings: OAuthSettings) -> tuple[int, str, bool]:
    """(port, path, fixed): the configured loopback redirect, else a free port."""
    uris = (settings.client_metadata or {}).get("redirect_uris") or []
    for uri in uris:
        parts = urlsplit(str(uri))
        if parts.hostname in ("127.0.0.1", "localhost") and parts.port:
            return parts.port, parts.path or "/", True
    return 0, "/callback", False


async def sign_in(
    name: str,
    config: StreamableServerConfig | SseServerConfig,
    store: TokenStore,
    *,
    open_url: Callable[[str], Awaitable[None] | None],
    extra_scopes: list[str] | None = None,
    timeout: float = 300.0,
) -> int:
    """Sign in to MCP server ``name``; returns how many tools it lists once signed in."""
    settings = config.auth
    if settings is None:
        raise ConfigError(f'MCP server {name} has no "auth": {{"type": "oauth"}} in its config')
    url = config.server_parameters.url
    if "${" in url:
        raise ConfigError(f"MCP server {name}: auth login cannot resolve inputs in its url")
    headers = {str(k): str(v) for k, v in (config.server_parameters.headers or {}).items()}
    port, path, fixed = _loopback_of(settings)
    async with _Loopback(port, path) as loopback:
        storage = ServerTokenStorage(store, name, resource_of(url), settings, fresh=True)

        async def redirect(authorization_url: str) -> None:
            loopback.expect(authorization_url)
            outcome = open_url(authorization_url)
            if outcome is not None:
                await outcome

        async def callback() -> AuthorizationCodeResult:
            return await asyncio.wait_for(asyncio.shield(loopback.result), timeout)

        metadata = client_metadata(
            settings,
            redirect_uri=None if fixed else loopback.redirect_uri,
            extra_scopes=extra_scopes or [],
        )
        auth = ComputerOAuth(
            url,
            metadata,
            storage,
            interactive=True,
            redirect_handler=redirect,
            callback_handler=callback,
        )
        tools = await _connect(config, url, headers, auth)
        if storage.untouched:
            raise ConfigError(
                f"MCP server {name} did not ask for a sign-in (no HTTP 401): nothing stored"
            )
        storage.keep_discovery(*auth.discovered())
        return tools


async def _connect(
    config: StreamableServerConfig | SseServerConfig,
    url: str,
    headers: dict[str, str],
    auth: httpx2.Auth,
) -> int:
    streams: Any
    if isinstance(config, SseServerConfig):
        streams = sse_client(url, headers=headers or None, auth=auth)
        async with streams as (read, write):
            return await _initialize(read, write)
    async with streamable_http_streams(
        url,
        client_factory=httpx2.AsyncClient,
        headers=headers,
        timeout=httpx2.Timeout(30.0, read=300.0),
        auth=auth,
    ) as (read, write):
        return await _initialize(read, write)


async def _initialize(read: Any, write: Any) -> int:
    async with ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        return len(listed.tools)
