"""Connection parameters the Agent derives from what the user gave (no I/O).

Rules:

* ``a2c_version=PROTOCOL_VERSION`` is appended by the SDK; a URL that already carries it
  is refused (handshake-and-versioning.md C3).
* The first handshake is HTTP long-polling: the default transports are
  ``("polling", "websocket")`` (C1). A caller may force WebSocket-only; the version gate
  still applies and close code 4900 is then handled as R4 says.
* ``auth`` is ``{"role": "agent"}`` plus the application's business fields; the role
  cannot be overridden.
* A refused handshake is diagnosed with one plain GET of the Engine.IO polling handshake
  URL, whose HTTP 400 body is authoritative (C4).
* A refusal that carries the Server's flat ErrorPayload (a refused token 401, a refused
  version 4008, 403, ...) is final: it is a :class:`RemoteError` and reconnects stop. Two
  kinds are retried: a 5xx payload (the Server or its auth provider failed, not a verdict
  on this client; the Computer judges it the same way) and an HTTP error without an A2C
  body (a proxy's 502 while the Server restarts), which is an
  :class:`AgentConnectionError`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from a2c_agent._exceptions import AgentConnectionError
from a2c_protocol import (
    PUT_BLOB_EXTENSION,
    A2CError,
    ProtocolVersionError,
    RemoteError,
    Role,
    error_from_handshake_response,
    remote_error_of,
    with_version_query,
)

__all__ = [
    "DEFAULT_TRANSPORTS",
    "AuthSource",
    "build_auth",
    "check_transports",
    "connect_error_text",
    "handshake_probe_url",
    "handshake_refusal",
    "refusal_is_final",
    "resolve_auth",
    "versioned_url",
]

#: Polling first, then upgrade (C1).
DEFAULT_TRANSPORTS: Final = ("polling", "websocket")

#: Extra ``auth`` fields: a mapping, or a callable (sync or async) evaluated at every
#: (re)connect, so a token provider hands a fresh token to each connection.
AuthSource: TypeAlias = (
    Mapping[str, Any]
    | Callable[[], Mapping[str, Any]]
    | Callable[[], Awaitable[Mapping[str, Any]]]
    | None
)


def versioned_url(server_url: str) -> str:
    """``server_url`` with the protocol version query.

    ValueError if the user set the query, or the URL has no host or a port that is not a
    number (caught here rather than as a transport library's traceback at connect time).
    """
    versioned = with_version_query(server_url)
    parts = urlsplit(server_url)
    if not parts.hostname:
        raise ValueError(f"server URL has no host: {server_url!r}")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise ValueError(f"server URL has an invalid port: {server_url!r}") from None
    return versioned


def connect_error_text(exc: BaseException) -> str:
    """``exc``'s text for a "cannot connect" message, without aiohttp's ``ssl:default``
    (printed for every URL, ``http://`` ones too, where it only misleads)."""
    return (str(exc) or type(exc).__name__).replace(" ssl:default", "")


def check_transports(transports: Sequence[str]) -> tuple[str, ...]:
    """Validate a transports list (only ``polling`` / ``websocket``, non-empty)."""
    values = tuple(transports)
    if not values or any(t not in ("polling", "websocket") for t in values):
        raise ValueError(f"transports must be 'polling' and/or 'websocket', got {values!r}")
    return values


async def resolve_auth(source: AuthSource) -> dict[str, Any]:
    """The ``auth`` object for one connection attempt: ``source`` asked now, awaited if needed."""
    extra = source() if callable(source) else source
    if inspect.isawaitable(extra):
        extra = await extra
    return build_auth(extra)


def build_auth(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """The Socket.IO ``auth`` object: business fields plus ``role: "agent"``."""
    fields = dict(extra or {})
    role = fields.pop("role", Role.AGENT.value)
    if role != Role.AGENT.value:
        raise ValueError(f"an Agent connects with role 'agent', not {role!r}")
    # Announces the upload extension to a 0.2 Server (docs/compatibility.md).
    return {**fields, "role": Role.AGENT.value, "a2c_extensions": [PUT_BLOB_EXTENSION]}


def handshake_probe_url(versioned: str, socketio_path: str) -> str:
    """The plain-HTTP Engine.IO polling handshake URL for ``versioned`` (which has the query).

    ``ws://`` / ``wss://`` become ``http://`` / ``https://``; the user's own query
    parameters (and ``a2c_version``) are kept.
    """
    parts = urlsplit(versioned)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = "/" + socketio_path.strip("/") + "/"
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [("EIO", "4"), ("transport", "polling")]
    return urlunsplit((scheme, parts.netloc, path, urlencode(query), ""))


def handshake_refusal(status: int, headers: Mapping[str, str], body: bytes) -> A2CError | None:
    """The error for the probe's answer: None when not refused.

    The Server's own flat ErrorPayload gives its typed :class:`RemoteError` (final); a
    refusal without one gives :class:`AgentConnectionError` (transient).
    """
    error = error_from_handshake_response(status, headers, body)
    if error is None or isinstance(error, ProtocolVersionError) or _carries_payload(body):
        return error
    return AgentConnectionError(f"the handshake was refused with HTTP {status} (no A2C error body)")


def _carries_payload(body: bytes) -> bool:
    try:
        return remote_error_of(json.loads(body)) is not None
    except ValueError:  # also UnicodeDecodeError
        return False


def refusal_is_final(error: RemoteError) -> bool:
    """Whether a refused (re)connect must not be tried again (see the module rules)."""
    return isinstance(error, ProtocolVersionError) or not 500 <= error.code < 1000
