"""Who may talk to the bridge over HTTP: ``Host``, ``Origin`` and the bearer token (pure).

Rules, checked in this order on every HTTP request:

1. bound to loopback, ``Host`` must name a loopback host (``localhost``, ``127.x.y.z``,
   ``[::1]``) with at most a numeric port, matched exactly (``localhost:evil`` is refused):
   a web page whose DNS name was rebound to 127.0.0.1 cannot reach the bridge. Off
   loopback ``Host`` is not checked (a reverse proxy may use any name). Refused: 421;
2. an ``Origin`` header (browsers send one; MCP SDK clients and the Inspector CLI do not)
   must be one the bridge allows: a loopback origin when bound to loopback, and any origin
   given with ``--http-origin`` (exact scheme, host and port). Off loopback only the given
   ones: the MCP transport spec says servers MUST validate ``Origin``. Refused: 403;
3. with a token, ``Authorization`` must be ``Bearer <token>``; the scheme is
   case-insensitive (RFC 9110: ``bearer`` works too), the token is compared in constant
   time. Refused: 401 with ``WWW-Authenticate: Bearer``.

A refusal's body is a JSON-RPC error without an id, saying what was wrong; the bridge logs
a WARNING naming the cause (never the token).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Collection
from typing import Final
from urllib.parse import urlsplit

import attrs

__all__ = ["Refusal", "check_request", "is_loopback", "normal_origin"]

#: ``name[:port]`` or ``[v6][:port]``, the whole ``Host`` value
_HOST: Final = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[^:\[\]]+))(?::\d{1,5})?")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (the only hosts served without a token)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@attrs.frozen
class Refusal:
    """An HTTP request the bridge does not serve: the status and why."""

    status: int
    message: str


def _loopback_host(value: str) -> bool:
    match = _HOST.fullmatch(value.strip().lower())
    return match is not None and is_loopback(match["v6"] or match["name"])


def normal_origin(text: str) -> str | None:
    """``scheme://host[:port]`` in lower case, or None when ``text`` is not an origin."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in ("http", "https") or not host or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username or parts.password:
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port is not None else "")


def _origin_allowed(origin: str, *, loopback: bool, allowed: Collection[str]) -> bool:
    normal = normal_origin(origin)
    if normal is None:
        return False
    if normal in allowed:
        return True
    if not loopback:
        return False
    host = urlsplit(normal).hostname
    return host is not None and is_loopback(host)


def _bearer(value: bytes | None, token: str) -> bool:
    if value is None:
        return False
    scheme, _, given = value.decode("latin-1").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("latin-1"), token.encode())


def check_request(
    headers: dict[bytes, bytes],
    *,
    loopback: bool,
    token: str | None,
    origins: Collection[str] = (),
) -> Refusal | None:
    """The refusal of a request with these (lower-cased) headers, or None to serve it."""
    if loopback:
        host = headers.get(b"host", b"").decode("latin-1")
        if not _loopback_host(host):
            return Refusal(421, f"Host {host[:80]!r} is not a loopback name of this bridge")
    origin = headers.get(b"origin")
    if origin is not None:
        text = origin.decode("latin-1")
        if not _origin_allowed(text, loopback=loopback, allowed=origins):
            return Refusal(
                403,
                f"Origin {text[:120]!r} is not allowed: a2c-agent mcp --http-origin "
                "names the web origins that may use this bridge",
            )
    if token is not None and not _bearer(headers.get(b"authorization"), token):
        return Refusal(401, "a valid 'Authorization: Bearer <token>' header is required")
    return None
