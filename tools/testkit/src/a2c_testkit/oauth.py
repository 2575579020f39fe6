"""A small OAuth 2.1 world on loopback for tests: an authorization server and MCP servers.

The authorization server is ``mcp``'s own auth routes (discovery, dynamic registration,
PKCE, refresh, revocation) over :class:`MemoryAS`; an MCP server is FastMCP with a token
verifier and protected-resource metadata (:func:`oauth_mcp_app`), wrapped in :class:`Watch`,
which records the Authorization headers it saw and asks for the ``admin`` scope for the
tool ``admin_tool`` (a 403 ``insufficient_scope``). :func:`serve_app` runs any of them under
uvicorn in the test's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

__all__ = [
    "MemoryAS",
    "Watch",
    "authorization_app",
    "free_loopback_port",
    "oauth_mcp_app",
    "serve_app",
]

TTL = 3600


class MemoryAS:
    """An authorization server's state: clients, codes and tokens, all in memory."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.issued: set[str] = set()
        self.refreshes = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "no identity assertions here")

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.issued |= {access, refresh}
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + TTL,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=TTL,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.refreshes += 1
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.load_access_token(token)

    def expire_access_tokens(self) -> None:
        for token in self.access.values():
            token.expires_at = int(time.time()) - 10

    def revoke_everything(self) -> None:
        self.access.clear()
        self.refresh.clear()


class Watch:
    """ASGI middleware: records Authorization headers and statuses, asks ``admin`` for one
    tool (403 ``insufficient_scope``)."""

    def __init__(self, app: Any, tokens: MemoryAS | None) -> None:
        self.app = app
        self.tokens = tokens
        self.authorizations: list[str] = []
        self.hosts: list[str] = []  # the Host of each request that carried an Authorization
        self.statuses: list[int] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if "authorization" in headers:
            self.authorizations.append(headers["authorization"])
            self.hosts.append(headers.get("host", ""))
        body = b""
        if scope["method"] == "POST":
            more = True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
        if self.tokens is not None and b'"admin_tool"' in body:
            token = headers.get("authorization", "").removeprefix("Bearer ")
            found = self.tokens.access.get(token)
            if found is not None and "admin" not in found.scopes:
                challenge = 'Bearer error="insufficient_scope", scope="admin"'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [(b"www-authenticate", challenge.encode())],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                self.statuses.append(403)
                return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def record(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.statuses.append(message["status"])
            await send(message)

        await self.app(scope, replay if scope["method"] == "POST" else receive, record)


def free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def serve_app(app: Any, port: int) -> AsyncIterator[None]:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    task = asyncio.ensure_future(server.serve())
    async with asyncio.timeout(20):
        while not server.started:
            await asyncio.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 20)


def oauth_mcp_app(
    name: str, auth: MemoryAS | None, port: int, as_url: str, transport: str = "streamable"
) -> Any:
    path = "/sse" if transport == "sse" else "/mcp"
    if auth is None:
        server = MCPServer(name)
    else:
        server = MCPServer(
            name,
            token_verifier=auth,
            auth=AuthSettings(
                issuer_url=AnyHttpUrl(as_url),
                resource_server_url=AnyHttpUrl(f"http://127.0.0.1:{port}{path}"),
                required_scopes=["mcp"],
                validate_token_resource=True,
            ),
        )

    @server.tool()
    def whoami() -> str:
        return f"{name}: hello"

    @server.tool()
    def admin_tool() -> str:
        return f"{name}: admin ok"

    return server.sse_app() if transport == "sse" else server.streamable_http_app()


def authorization_app(provider: MemoryAS, url: str) -> Starlette:
    """The authorization server at ``url`` (scopes ``mcp`` and ``admin``)."""
    return Starlette(
        routes=create_auth_routes(
            provider,
            AnyHttpUrl(url),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp", "admin"], default_scopes=["mcp"]
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
    )
