"""The Computer's fence around upstream internals: the only module of a2c-computer that
touches a private or undocumented name of ``mcp`` or probes which ``mcp`` release it runs on.

Checked against mcp 1.30.0 and httpx 0.29.0 (python-socketio 5.18.1 and python-engineio
4.15.1: the Computer uses their public API only, nothing of theirs is fenced here). The upper
bound of the ``mcp`` pin in ``packages/a2c-computer/pyproject.toml`` admits only the checked
minor; ``tools/check_latest.sh`` runs ``tests/test_computer_upstream_guard.py`` (which pins
every name below) against the newest releases: raise the bound, and the versions here, when
it passes.

What is touched, and why:

* ``BaseSession._request_id`` (:func:`request_id_of`): the id ``send_request`` gives the
  next request. The ``mcp`` client does not announce an abandoned request itself, so the
  Computer notes the id to send ``notifications/cancelled`` and to match an SSE POST's HTTP
  refusal to the call waiting for it.
* ``mcp.client.streamable_http`` (:func:`streamable_http_streams`): ``streamable_http_client``
  (mcp >= 1.24, a ready ``httpx`` client) where it exists, else ``streamablehttp_client``
  (a client factory): public names, but which one exists depends on the release.
* ``OAuthClientProvider`` (:class:`HookedOAuthProvider`): overrides the private
  ``_auth_flow`` (the flow ``async_auth_flow`` drives), ``_initialize`` (loads the stored
  tokens and client) and ``_handle_refresh_response``; calls the private ``_refresh_token``
  and ``_add_auth_header``; reads and writes the undocumented ``context`` (``OAuthContext``):
  ``storage``, ``current_tokens``, ``oauth_metadata``, ``protected_resource_metadata``,
  ``auth_server_url``, ``can_refresh_token()``, ``update_token_expiry()``.

The rest of the package reaches these through the names defined here only.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeAlias

import httpx
from mcp import ClientSession
from mcp.client import streamable_http as _streamable_http
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import OAuthMetadata, OAuthToken, ProtectedResourceMetadata

__all__ = ["AuthFlow", "HookedOAuthProvider", "request_id_of", "streamable_http_streams"]

#: An ``httpx`` auth flow: yields requests, is sent their responses.
AuthFlow: TypeAlias = AsyncGenerator[httpx.Request, httpx.Response]


def request_id_of(session: ClientSession) -> int:
    """The id the next ``session.send_request`` takes (synchronously, on entry)."""
    return session._request_id


@contextlib.asynccontextmanager
async def streamable_http_streams(
    url: str,
    *,
    client_factory: Callable[..., httpx.AsyncClient],
    headers: dict[str, str] | None,
    timeout: httpx.Timeout,
    auth: httpx.Auth | None,
    terminate_on_close: bool = True,
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of a Streamable HTTP session to ``url``.

    ``client_factory(headers=, timeout=, auth=)`` makes the ``httpx`` client either way.
    """
    # mcp >= 1.24 takes a ready httpx client; older releases only the factory-based function.
    modern = getattr(_streamable_http, "streamable_http_client", None)
    if modern is not None:
        async with (
            client_factory(headers=headers, timeout=timeout, auth=auth) as client,
            modern(url, http_client=client, terminate_on_close=terminate_on_close) as streams,
        ):
            yield streams[0], streams[1]
        return
    async with _streamable_http.streamablehttp_client(
        url,
        headers=headers,
        timeout=timeout.connect or 30.0,
        sse_read_timeout=timeout.read or 300.0,
        terminate_on_close=terminate_on_close,
        httpx_client_factory=client_factory,
        auth=auth,
    ) as streams:
        yield streams[0], streams[1]


class HookedOAuthProvider(OAuthClientProvider):
    """``mcp``'s OAuth provider whose private steps a subclass reaches under our own names.

    A subclass overrides the hooks (:meth:`oauth_flow`, :meth:`on_loaded`,
    :meth:`on_refresh_answer`; by default ``mcp`` behaves as it does alone) and calls the
    steps (:meth:`can_refresh`, :meth:`refresh_request`, :meth:`read_refresh_answer`,
    :meth:`add_bearer`, :meth:`seed_discovery`, :meth:`keep_token_expiry`, ...). No name of
    them may exist upstream (the guard tests check), so none replaces ``mcp``'s own.
    """

    # -- hooks ---------------------------------------------------------------

    def oauth_flow(self, request: httpx.Request, upstream: AuthFlow) -> AuthFlow:
        """The auth flow of ``request``; ``upstream`` is ``mcp``'s own flow of it."""
        return upstream

    async def on_loaded(self) -> None:
        """``mcp`` has (re)loaded the stored tokens and client, before a flow uses them."""

    def on_refresh_answer(self, ok: bool) -> None:
        """The authorization server answered a refresh (``ok``: its new tokens are stored)."""

    # -- steps ---------------------------------------------------------------

    @property
    def token_storage(self) -> TokenStorage:
        return self.context.storage

    @property
    def held_tokens(self) -> OAuthToken | None:
        """The tokens the provider holds now (None: none loaded, or cleared)."""
        return self.context.current_tokens

    def can_refresh(self) -> bool:
        return self.context.can_refresh_token()

    async def refresh_request(self) -> httpx.Request:
        """The token request that refreshes the held tokens."""
        return await self._refresh_token()

    async def read_refresh_answer(self, response: httpx.Response) -> bool:
        """Take the answer to :meth:`refresh_request`; True if new tokens were stored."""
        return await self._handle_refresh_response(response)

    def add_bearer(self, request: httpx.Request) -> None:
        """Put the held access token on ``request``."""
        self._add_auth_header(request)

    def discovered(self) -> tuple[OAuthMetadata | None, ProtectedResourceMetadata | None]:
        """The authorization server and protected resource metadata known now."""
        return self.context.oauth_metadata, self.context.protected_resource_metadata

    def seed_discovery(
        self, server: OAuthMetadata | None, resource: ProtectedResourceMetadata | None
    ) -> None:
        """Metadata found earlier, where none is known yet; the resource names the server."""
        context = self.context
        context.oauth_metadata = context.oauth_metadata or server
        context.protected_resource_metadata = context.protected_resource_metadata or resource
        if resource is not None and resource.authorization_servers:
            context.auth_server_url = str(resource.authorization_servers[0])

    def keep_token_expiry(self) -> None:
        """The held tokens' ``expires_in`` becomes the expiry ``mcp`` refreshes before."""
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            self.context.update_token_expiry(tokens)

    # -- the private overrides (the only ones) -------------------------------

    async def _handle_refresh_response(self, response: httpx.Response) -> bool:
        ok = await super()._handle_refresh_response(response)
        self.on_refresh_answer(ok)
        return ok

    async def _initialize(self) -> None:
        await super()._initialize()
        await self.on_loaded()

    def _auth_flow(self, request: httpx.Request) -> AuthFlow:
        return self.oauth_flow(request, super()._auth_flow(request))
