"""Pure helpers for the client side of the handshake (handshake-and-versioning.md §4).

* The SDK, never the application, puts ``a2c_version`` in the URL (C3).
* A refused handshake is diagnosed from the HTTP 400 body, the single source of truth;
  ``X-A2C-Error-Code`` is the fallback when the body is unreadable (C4).
* Reconnects after transient failures back off exponentially with jitter; a version
  refusal is never retried (C7).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._codes import WS_CLOSE_VERSION_REJECTED, ErrorCode
from ._exceptions import ProtocolVersionError, RemoteError
from ._versioning import PROTOCOL_VERSION
from ._wire import remote_error_of

__all__ = [
    "ERROR_CODE_HEADER",
    "VERSION_QUERY_PARAM",
    "error_from_handshake_response",
    "reconnect_delays",
    "version_rejected_by_close",
    "with_version_query",
]

VERSION_QUERY_PARAM: Final = "a2c_version"
ERROR_CODE_HEADER: Final = "X-A2C-Error-Code"


def with_version_query(url: str, version: str = PROTOCOL_VERSION) -> str:
    """``url`` with ``a2c_version=<version>`` appended to its query.

    Raises ``ValueError`` when the caller already put ``a2c_version`` in the URL: only the
    SDK may set it, so it can never drift from ``PROTOCOL_VERSION``.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        raise ValueError(f"server URL must be http(s):// or ws(s)://, got {url!r}")
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key == VERSION_QUERY_PARAM for key, _ in query):
        raise ValueError(
            f"do not put {VERSION_QUERY_PARAM} in the server URL; the SDK adds "
            f"{VERSION_QUERY_PARAM}={version} itself"
        )
    query.append((VERSION_QUERY_PARAM, version))
    return urlunsplit(parts._replace(query=urlencode(query)))


def error_from_handshake_response(
    status: int, headers: Mapping[str, str], body: bytes | str
) -> RemoteError | None:
    """The typed error for a refused handshake response, or None if it was not refused.

    A 4008 body gives :class:`ProtocolVersionError` with all four version fields; other
    flat bodies give their typed :class:`RemoteError`. When the body is unreadable but the
    ``X-A2C-Error-Code: 4008`` header is present, a ProtocolVersionError with empty version
    fields is returned.
    """
    if 200 <= status < 300:
        return None
    data: object = None
    try:
        data = json.loads(body)
    except (TypeError, ValueError):
        data = None
    error = remote_error_of(data)
    if error is not None:
        return error
    header = {k.lower(): v for k, v in headers.items()}.get(ERROR_CODE_HEADER.lower())
    if header is not None and header.strip() == str(int(ErrorCode.PROTOCOL_VERSION_MISMATCH)):
        return ProtocolVersionError(
            "Protocol version mismatch (body unreadable; from X-A2C-Error-Code)",
            server_version="",
            client_version=PROTOCOL_VERSION,
            min_supported="",
            max_supported="",
        )
    return RemoteError(f"handshake refused with HTTP {status}", code=status)


def version_rejected_by_close(client_version: str = PROTOCOL_VERSION) -> ProtocolVersionError:
    """The error to raise after WebSocket close 4900 when no 4008 body could be fetched."""
    return ProtocolVersionError(
        "WebSocket-only handshake was rejected for a protocol version mismatch; reconnect "
        "with HTTP long-polling to read the server's supported versions",
        server_version="",
        client_version=client_version,
        min_supported="",
        max_supported="",
        code=WS_CLOSE_VERSION_REJECTED,
    )


def reconnect_delays(
    *,
    initial: float = 0.5,
    maximum: float = 30.0,
    factor: float = 2.0,
    jitter: float = 0.25,
    rng: random.Random | None = None,
) -> Iterator[float]:
    """Endless exponential backoff delays in seconds, each with +/- ``jitter`` fraction."""
    source = rng or random.Random()
    delay = initial
    while True:
        spread = delay * jitter
        yield max(0.0, delay + source.uniform(-spread, spread))
        delay = min(maximum, delay * factor)
