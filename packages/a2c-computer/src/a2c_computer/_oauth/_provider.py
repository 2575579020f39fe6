"""The ``httpx2`` auth of an OAuth-protected MCP server, on ``mcp.client.auth`` (whose private
steps it reaches through :class:`a2c_computer._upstream.HookedOAuthProvider` only).

Rules:

* tokens and the registered client come from the :mod:`._store` record of this server name
  and resource; a loaded access token keeps its expiry, so it is refreshed *before* it
  expires (``mcp``'s provider does that), and a 401 is answered by one refresh and one
  retry before anything else;
* a running Computer never starts an interactive sign-in: when a 401 remains (no token,
  refresh refused) or a 403 names ``insufficient_scope``, the refused answer goes back to
  the caller as it is and :attr:`ComputerOAuth.needs_sign_in` / ``missing_scope`` say why;
  only ``auth login`` (``interactive=True``) lets ``mcp`` run discovery, registration and the
  browser step;
* a response the Computer's HTTP refusal transport rewrote carries the real status in the
  ``a2c-http-status`` header: that status is what counts here.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final

import httpx2
from mcp.client.auth import TokenStorage
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import resource_url_from_server_url
from pydantic import PrivateAttr

from a2c_computer._upstream import AuthFlow, HookedOAuthProvider
from a2c_protocol import OAuthSettings

from ._store import TokenStore, expires_at

__all__ = [
    "CONFIG_PATH",
    "STATUS_HEADER",
    "ComputerOAuth",
    "ServerTokenStorage",
    "client_metadata",
    "resource_of",
    "sign_in_hint",
]

logger = logging.getLogger("a2c_computer.oauth")

#: Set by the Computer's refusal transport on a response it rewrote: the real HTTP status.
STATUS_HEADER: Final = "a2c-http-status"
#: Refresh this long before the access token's end, not at it.
_EARLY: Final = 30.0
_PLACEHOLDER_REDIRECT: Final = "http://127.0.0.1/callback"


def resource_of(url: str) -> str:
    """The canonical resource URL (RFC 8707) tokens of ``url`` are stored under."""
    return resource_url_from_server_url(url)


#: The config file the Computer was started from, named in sign-in hints. The CLI sets it
#: (a context variable, so each task tree started from it sees its own); the Python API
#: with a config dict has none and the hints keep a placeholder.
CONFIG_PATH: ContextVar[str | None] = ContextVar("a2c_computer_config_path", default=None)


def sign_in_hint(server: str) -> str:
    """What a user runs to sign in to ``server``."""
    path = CONFIG_PATH.get()
    config = shlex.quote(path) if path else "<the Computer's config file>"
    return f"a2c-computer auth login {shlex.quote(server)} --config {config}"


class _ScopedMetadata(OAuthClientMetadata):
    """Client metadata whose ``scope`` always keeps the configured scopes.

    ``mcp`` replaces the scope with what the server asks for (``WWW-Authenticate`` or the
    protected-resource metadata); the scopes the config names are added to that.
    """

    _wanted: list[str] = PrivateAttr(default_factory=list)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope" and self._wanted:
            have = value.split() if isinstance(value, str) else []
            value = " ".join(dict.fromkeys([*self._wanted, *have]))
        super().__setattr__(name, value)


def client_metadata(
    settings: OAuthSettings,
    *,
    redirect_uri: str | None = None,
    extra_scopes: list[str] = (),  # type: ignore[assignment]
) -> OAuthClientMetadata:
    """The client metadata for ``settings`` (``redirect_uri``: the loopback of a sign-in)."""
    fields: dict[str, Any] = {
        "client_name": "a2c-computer",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **(settings.client_metadata or {}),
    }
    if redirect_uri is not None or "redirect_uris" not in fields:
        fields["redirect_uris"] = [redirect_uri or _PLACEHOLDER_REDIRECT]
    wanted = list(dict.fromkeys([*settings.scopes, *extra_scopes]))
    fields["scope"] = " ".join(wanted) or fields.get("scope")
    metadata = _ScopedMetadata.model_validate(fields)
    metadata._wanted = wanted
    return metadata


class ServerTokenStorage(TokenStorage):
    """``mcp``'s storage protocol over one (server, resource) record of a :class:`TokenStore`."""

    def __init__(
        self,
        store: TokenStore,
        server: str,
        resource: str,
        settings: OAuthSettings,
        *,
        fresh: bool = False,
    ) -> None:
        self._store = store
        self._server = server
        self._resource = resource
        self._settings = settings
        # A sign-in starts from nothing; the record is replaced once it has new tokens.
        self._fresh: dict[str, Any] | None = {} if fresh else None

    @property
    def untouched(self) -> bool:
        """A sign-in that stored nothing (the server never asked for one)."""
        return self._fresh is not None

    def _record(self) -> dict[str, Any]:
        if self._fresh is not None:
            return self._fresh
        return self._store.get(self._server, self._resource) or {}

    def _update(self, **fields: Any) -> None:
        record = self._record()
        record.update(fields)
        if self._fresh is not None and "tokens" not in record:
            return  # a sign-in's new client is stored with its first tokens
        self._fresh = None
        self._store.put(self._server, self._resource, record)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._record().get("tokens")
        if not isinstance(raw, dict):
            return None
        token = OAuthToken.model_validate(raw)
        ends = self._record().get("expires_at")
        if isinstance(ends, int | float):
            token.expires_in = max(0, int(ends - time.time()))
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._update(
            tokens=tokens.model_dump(mode="json", exclude_none=True),
            expires_at=expires_at(tokens.expires_in, early=_EARLY),
            saved_at=time.time(),
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._settings.client_id:
            metadata = client_metadata(self._settings).model_dump(exclude={"scope"})
            return OAuthClientInformationFull(client_id=self._settings.client_id, **metadata)
        raw = self._record().get("client")
        return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None

    def discovery(self) -> tuple[OAuthMetadata | None, ProtectedResourceMetadata | None]:
        """The metadata the sign-in discovered (a running Computer does not rediscover)."""
        record = self._record()
        server, resource = record.get("server_metadata"), record.get("resource_metadata")
        return (
            OAuthMetadata.model_validate(server) if isinstance(server, dict) else None,
            ProtectedResourceMetadata.model_validate(resource)
            if isinstance(resource, dict)
            else None,
        )

    def keep_discovery(
        self, server: OAuthMetadata | None, resource: ProtectedResourceMetadata | None
    ) -> None:
        fields: dict[str, Any] = {}
        if server is not None:
            fields["server_metadata"] = server.model_dump(mode="json", exclude_none=True)
        if resource is not None:
            fields["resource_metadata"] = resource.model_dump(mode="json", exclude_none=True)
        if fields:
            self._update(**fields)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update(client=client_info.model_dump(mode="json", exclude_none=True))


def _status(response: httpx2.Response) -> int:
    raw = response.headers.get(STATUS_HEADER)
    return int(raw) if raw and raw.isdigit() else response.status_code


class ComputerOAuth(HookedOAuthProvider):
    """``mcp``'s OAuth provider with refresh-on-401 and no browser unless ``interactive``."""

    def __init__(
        self,
        server_url: str,
        metadata: OAuthClientMetadata,
        storage: TokenStorage,
        *,
        interactive: bool = False,
        redirect_handler: Callable[[str], Awaitable[None]] | None = None,
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
    ) -> None:
        super().__init__(
            server_url,
            metadata,
            storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self.interactive = interactive
        #: Why the server needs a sign-in now (None: it does not, as far as we know).
        self.needs_sign_in: str | None = None
        #: The scope a 403 ``insufficient_scope`` asked for.
        self.missing_scope: str | None = None
        #: The authorization server refused a refresh (a revoked or expired grant).
        self.refresh_refused = False

    def on_refresh_answer(self, ok: bool) -> None:
        self.refresh_refused = not ok

    async def on_loaded(self) -> None:
        storage = self.token_storage
        if isinstance(storage, ServerTokenStorage):
            # The token endpoint of the sign-in, not a guess at the MCP server's origin.
            self.seed_discovery(*storage.discovery())
        self.keep_token_expiry()

    async def oauth_flow(
        self, request: httpx2.Request, upstream: AuthFlow
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        refreshed = False
        try:
            outgoing = await upstream.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request:
                    status = _status(response)
                    if status == 401 and not refreshed and self.can_refresh():
                        refreshed = True
                        refresh = yield await self.refresh_request()
                        if await self.read_refresh_answer(refresh):
                            self.add_bearer(request)
                        else:
                            logger.info("OAuth refresh refused by the authorization server")
                            request.headers.pop("Authorization", None)
                        # Sent again either way: httpx2 answers the caller with the last
                        # response of the flow, which must be this request's, not the
                        # token endpoint's.
                        response = yield request
                        status = _status(response)
                    if status == 401 and not self.interactive:
                        self.needs_sign_in = (
                            "the sign-in is no longer valid: its refresh was refused"
                            if self.refresh_refused
                            else "the access token was refused"
                            if self.held_tokens is not None or refreshed
                            else "not signed in"
                        )
                        return
                    if status == 403 and not self.interactive:
                        if extract_field_from_www_auth(response, "error") == "insufficient_scope":
                            self.missing_scope = extract_field_from_www_auth(response, "scope")
                        return
                    if status < 400:
                        self.needs_sign_in = None
                outgoing = await upstream.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await upstream.aclose()


def make_auth(server: str, url: str, settings: OAuthSettings, store: TokenStore) -> ComputerOAuth:
    """The non-interactive auth a running Computer hands to the server's transport."""
    resource = resource_of(url)
    storage = ServerTokenStorage(store, server, resource, settings)
    return ComputerOAuth(url, client_metadata(settings), storage)
