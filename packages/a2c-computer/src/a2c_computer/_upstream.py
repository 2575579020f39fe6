"""The Computer's fence around upstream internals: the only module of a2c-computer that
touches a private or undocumented name of ``mcp``.

Checked against mcp 2.3.0 (mcp-types 2.3.0) and httpx2 2.17.0 (python-socketio 5.18.1 and
python-engineio 4.15.1: the Computer uses their public API only, nothing of theirs is
fenced here). The upper bound of the ``mcp`` pin in ``packages/a2c-computer/pyproject.toml``
admits only the checked minor; ``tools/check_latest.sh`` runs
``tests/test_computer_upstream_guard.py`` (which pins every name below) against the newest
releases: raise the bound, and the versions here, when it passes.

What is touched, and why:

* ``ClientSession._stamp`` (:func:`send_raw`): what the session adds to each request in the
  era it negotiated (the ``MCP-Protocol-Version`` header in the handshake era; the
  per-request ``_meta`` envelope and the ``Mcp-Method`` / ``Mcp-Name`` headers in
  2026-07-28). The Computer sends its requests through the session's dispatcher itself
  (``JSONRPCDispatcher.send_raw_request``, public) so that results stay plain JSON: the
  session's typed ``send_request`` validates every result against the protocol schema
  first, and one out-of-range ``annotations.priority`` would fail a whole
  ``resources/list`` (the SDK's own ``subscriptions/listen`` driver sends the same way).
* ``mcp.client.streamable_http.streamable_http_client`` (:func:`streamable_http_streams`):
  public, kept here as the one place that opens it with a ready ``httpx2`` client.
* ``OAuthClientProvider`` (:class:`HookedOAuthProvider`): overrides the private
  ``_auth_flow`` (the flow ``async_auth_flow`` drives), ``_initialize`` (loads the stored
  tokens and client) and ``_handle_refresh_response``; calls the private ``_refresh_token``
  and ``_add_auth_header``; reads and writes the undocumented ``context`` (``OAuthContext``):
  ``storage``, ``current_tokens``, ``oauth_metadata``, ``protected_resource_metadata``,
  ``auth_server_url``, ``can_refresh_token()``, ``update_token_expiry()``. mcp 2 still
  answers a 401 with a full authorization flow, never a refresh first.

Gone with mcp 2: ``ClientSession._request_id`` (the dispatcher sends
``notifications/cancelled`` for an abandoned request itself, and a request can carry an id
the Computer chooses, ``CallOptions["request_id"]``, public) and the probe of which
Streamable HTTP entry point the release has.

The rest of the package reaches these through the names defined here only.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeAlias

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from mcp.shared.dispatcher import CallOptions, Dispatcher

__all__ = ["AuthFlow", "HookedOAuthProvider", "send_raw", "streamable_http_streams"]

#: An ``httpx2`` auth flow: yields requests, is sent their responses.
AuthFlow: TypeAlias = AsyncGenerator[httpx2.Request, httpx2.Response]


async def send_raw(
    session: ClientSession,
    dispatcher: Dispatcher[Any],
    method: str,
    params: dict[str, Any] | None,
    opts: CallOptions,
) -> dict[str, Any]:
    """Send ``method`` over ``session``'s ``dispatcher`` as the session would; the result
    as plain JSON.

    ``params`` is the request's params (this call may add the era's ``_meta`` envelope to
    it); ``opts`` the dispatcher's call options (progress, request id), to which the era's
    headers are added. Raises what ``send_raw_request`` raises (``MCPError`` ...).
    """
    data: dict[str, Any] = {"method": method}
    if params:
        data["params"] = params
    session._stamp(data, opts)
    result: dict[str, Any] = await dispatcher.send_raw_request(method, data.get("params"), opts)
    return result


@contextlib.asynccontextmanager
async def streamable_http_streams(
    url: str,
    *,
    client_factory: Callable[..., httpx2.AsyncClient],
    headers: dict[str, str] | None,
    timeout: httpx2.Timeout,
    auth: httpx2.Auth | None,
    terminate_on_close: bool = True,
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of a Streamable HTTP session to ``url``.

    ``client_factory(headers=, timeout=, auth=)`` makes the ``httpx2`` client.
    """
    async with (
        client_factory(headers=headers, timeout=timeout, auth=auth) as client,
        streamable_http_client(
            url, http_client=client, terminate_on_close=terminate_on_close
        ) as streams,
    ):
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

    def oauth_flow(self, request: httpx2.Request, upstream: AuthFlow) -> AuthFlow:
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

    async def refresh_request(self) -> httpx2.Request:
        """The token request that refreshes the held tokens."""
        return await self._refresh_token()

    async def read_refresh_answer(self, response: httpx2.Response) -> bool:
        """Take the answer to :meth:`refresh_request`; True if new tokens were stored."""
        return await self._handle_refresh_response(response)

    def add_bearer(self, request: httpx2.Request) -> None:
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

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        ok = await super()._handle_refresh_response(response)
        self.on_refresh_answer(ok)
        return ok

    async def _initialize(self) -> None:
        await super()._initialize()
        await self.on_loaded()

    def _auth_flow(self, request: httpx2.Request) -> AuthFlow:
        return self.oauth_flow(request, super()._auth_flow(request))
