"""Connection authentication: a small async provider protocol and two built-ins.

The protocol only requires ``auth.role`` (checked by the namespace before any provider
runs); everything else in ``auth`` is business data that a provider may judge. A provider
returns an :class:`Identity` to accept or raises :class:`AuthenticationError` to refuse.
An identity may carry a :class:`Grant` (the offices, role and name it may use) and an
expiry; the Server enforces both. Tokens are compared in constant time and never logged
or repr'd.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from a2c_protocol import Role
from a2c_server._exceptions import AuthenticationError

from ._grants import Grant

__all__ = [
    "AllowAllAuth",
    "AuthProvider",
    "AuthRequest",
    "Identity",
    "JoinAuthorizer",
    "SharedTokenAuth",
    "is_loopback_host",
]

_log = logging.getLogger("a2c_server.auth")


@attrs.frozen(kw_only=True)
class AuthRequest:
    """What a provider sees about a connecting client.

    ``auth`` is the Socket.IO auth object as sent (``{}`` when none was), ``headers`` the
    HTTP handshake headers with lower-case names, ``peer`` the ``"host:port"`` of the
    remote end when known. ``role`` is None when the client did not say (the official SDKs
    never do): its first ``server:join_office`` settles it.
    """

    role: Role | None
    auth: Mapping[str, Any]
    headers: Mapping[str, str]
    peer: str | None


@attrs.frozen(kw_only=True)
class Identity:
    """Who a provider says the client is; ``subject`` shows up in logs.

    ``grant`` limits the role, name and offices the session may use (None: no limit);
    ``expires_at`` (Unix time) is when the Server disconnects the session (None: never).
    ``per_address``: the subject names no one in particular (a shared token, allow-all),
    so ``max_connections_per_subject`` counts its sessions per client address; the
    built-in :class:`SharedTokenAuth` and :class:`AllowAllAuth` set it.
    """

    subject: str
    attributes: Mapping[str, Any] = attrs.field(factory=dict)
    grant: Grant | None = None
    expires_at: float | None = None
    per_address: bool = False


@runtime_checkable
class AuthProvider(Protocol):
    """Decides whether a connection is allowed.

    Return an :class:`Identity` to accept; raise :class:`AuthenticationError` with a
    client-safe message to refuse. Any other exception also refuses (and is logged).
    """

    async def authenticate(self, request: AuthRequest) -> Identity: ...


@runtime_checkable
class JoinAuthorizer(Protocol):
    """The optional second method of an :class:`AuthProvider`: judge each office join.

    Return None to allow, or a client-safe reason to refuse with 403 (the Server has
    already applied the identity's :class:`Grant`). A provider without this method
    allows every join its grant allows. Called for every ``server:join_office``,
    including re-joins after a reconnect.
    """

    async def authorize_join(
        self, identity: Identity, office_id: str, role: Role, name: str
    ) -> str | None: ...


def _offices_grant(allow_offices: Iterable[str]) -> Grant | None:
    patterns = tuple(allow_offices)
    return Grant.of_patterns(patterns) if patterns else None


class AllowAllAuth:
    """Accepts everybody. For local development only.

    The app factory logs a WARNING when it is used on a non-loopback address.
    ``allow_offices`` (patterns, ``team-*``) limits the offices anyone may join.
    """

    def __init__(self, allow_offices: Iterable[str] = ()) -> None:
        self._grant = _offices_grant(allow_offices)

    async def authenticate(self, request: AuthRequest) -> Identity:
        return Identity(subject=f"anonymous-{_role_label(request.role)}", grant=self._grant,
                        per_address=True)  # fmt: skip

    def __repr__(self) -> str:
        return "AllowAllAuth()"


class SharedTokenAuth:
    """Accepts clients whose ``auth["token"]`` equals one shared secret.

    ``allow_offices`` (patterns, ``team-*``) limits the offices token holders may join.
    """

    def __init__(self, token: str, allow_offices: Iterable[str] = ()) -> None:
        if not token:
            raise ValueError("the shared token must not be empty")
        self._token = token.encode()
        self._grant = _offices_grant(allow_offices)

    async def authenticate(self, request: AuthRequest) -> Identity:
        refusal = self.refusal_at_once(request.auth)
        if refusal is not None:
            raise refusal
        return Identity(subject=f"token-{_role_label(request.role)}", grant=self._grant,
                        per_address=True)  # fmt: skip

    def refusal_at_once(self, auth: Mapping[str, Any]) -> AuthenticationError | None:
        """Why ``auth`` is refused (no token, a wrong one), or None when it is accepted.

        Synchronous and decided by ``auth`` alone, so the Server refuses such a connect
        before it builds a Socket.IO session for it.
        """
        offered = auth.get("token")
        if not isinstance(offered, str) or not offered:
            return AuthenticationError("Authentication failed: auth.token is required")
        try:
            encoded = offered.encode()
        except UnicodeEncodeError:  # a lone surrogate: no token can be equal to it
            return AuthenticationError("Authentication failed: invalid token")
        if not hmac.compare_digest(encoded, self._token):
            return AuthenticationError("Authentication failed: invalid token")
        return None

    def __repr__(self) -> str:
        return "SharedTokenAuth(token=***)"


def is_loopback_host(host: str) -> bool:
    """Whether binding to ``host`` only exposes the server to this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _role_label(role: Role | None) -> str:
    # A role-less connect is one kind of subject until its join settles the role.
    return role.value if role is not None else "client"
