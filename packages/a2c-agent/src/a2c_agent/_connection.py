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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from a2c_protocol import Role, with_version_query

__all__ = [
    "DEFAULT_TRANSPORTS",
    "AuthSource",
    "build_auth",
    "check_transports",
    "handshake_probe_url",
    "versioned_url",
]

#: Polling first, then upgrade (C1).
DEFAULT_TRANSPORTS: Final = ("polling", "websocket")

#: Extra ``auth`` fields: a mapping, or a callable evaluated at every (re)connect.
AuthSource: TypeAlias = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


def versioned_url(server_url: str) -> str:
    """``server_url`` with the protocol version query; ValueError if the user set it."""
    return with_version_query(server_url)


def check_transports(transports: Sequence[str]) -> tuple[str, ...]:
    """Validate a transports list (only ``polling`` / ``websocket``, non-empty)."""
    values = tuple(transports)
    if not values or any(t not in ("polling", "websocket") for t in values):
        raise ValueError(f"transports must be 'polling' and/or 'websocket', got {values!r}")
    return values


def build_auth(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """The Socket.IO ``auth`` object: business fields plus ``role: "agent"``."""
    fields = dict(extra or {})
    role = fields.pop("role", Role.AGENT.value)
    if role != Role.AGENT.value:
        raise ValueError(f"an Agent connects with role 'agent', not {role!r}")
    return {**fields, "role": Role.AGENT.value}


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
