"""The version gate: a plain ASGI middleware that refuses incompatible handshakes.

Rules (handshake-and-versioning.md §3):

* It guards every ``http`` and ``websocket`` request on the Engine.IO mount path, before
  any Socket.IO code (and so before any connect handler) runs.
* Only *new* Engine.IO sessions are checked: a request carrying ``sid`` belongs to a
  session that already passed the gate (polling round trips, the WebSocket upgrade).
* Order, first failure wins: ``a2c_version`` absent or empty → 400 ``Missing a2c_version
  query parameter``; not canonical ``MAJOR.MINOR.PATCH`` (no leading zeros, at most six
  digits a part) → 400 ``Invalid a2c_version: …``; not
  compatible with any protocol line the server serves → 400 + ``X-A2C-Error-Code: 4008`` +
  the flat six-field 4008 body (the range of the nearest served line) plus
  ``a2c_supported_ranges``, every accepted range. The first occurrence of a repeated
  parameter counts.
* On a ``websocket`` scope the same bytes are sent through the ASGI WebSocket denial
  response; a stack without it gets the socket accepted and closed with code 4900.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final
from urllib.parse import parse_qsl

import attrs

from a2c_protocol import (
    ERROR_CODE_HEADER,
    VERSION_QUERY_PARAM,
    WS_CLOSE_VERSION_REJECTED,
    ErrorCode,
    ErrorPayload,
    InvalidVersionError,
    ProtocolVersion,
    VersionMismatchPayload,
    is_compatible,
    supported_range,
    to_wire,
)

__all__ = [
    "SUPPORTED_RANGES_KEY",
    "ASGIApp",
    "GateRefusal",
    "VersionGate",
    "check_version_query",
    "first_query_value",
    "mount_matches",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger("a2c_server.gate")

_DENIAL_EXTENSION: Final = "websocket.http.response"
_MAX_ECHO: Final = 64  # how much of a malformed version the error message repeats
# Canonical MAJOR.MINOR.PATCH only: no leading zeros ("00.02.00" is a different string
# for the same version, which log readers and caches would disagree on) and at most six
# digits per part (a 4,000-digit patch is not a version, only an expensive integer).
_CANONICAL: Final = re.compile(
    r"(?:0|[1-9][0-9]{0,5})\.(?:0|[1-9][0-9]{0,5})\.(?:0|[1-9][0-9]{0,5})"
)


@attrs.frozen
class GateRefusal:
    """Why a handshake is refused: the payload plus the extra headers to send."""

    payload: ErrorPayload | VersionMismatchPayload
    #: Extension keys after the payload's own (``a2c_supported_ranges`` on a 4008).
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def body(self) -> bytes:
        """The exact response body; polling and WebSocket paths send these same bytes."""
        return json.dumps({**to_wire(self.payload), **self.extra}, separators=(",", ":")).encode()

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(self.body)).encode()),
        ]
        if self.payload.code == ErrorCode.PROTOCOL_VERSION_MISMATCH:
            code = str(int(ErrorCode.PROTOCOL_VERSION_MISMATCH)).encode()
            headers.append((ERROR_CODE_HEADER.lower().encode(), code))
        return headers


def first_query_value(query: str, key: str) -> str | None:
    """The first value of ``key`` in a raw query string (None when absent)."""
    if "%" not in query and "+" not in query:
        # Nothing to unquote: a plain split says what parse_qsl would, at a fraction of
        # its cost (the gate reads every Engine.IO request's query, a flood's too).
        for field in query.split("&"):
            name, _, value = field.partition("=")
            if name == key and field:
                return value
        return None
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name == key:
            return value
    return None


#: The 4008 extension key listing every range a multi-line Server accepts.
SUPPORTED_RANGES_KEY: Final = "a2c_supported_ranges"


def _versions(server_version: str | Sequence[str]) -> tuple[ProtocolVersion, ...]:
    texts = (server_version,) if isinstance(server_version, str) else tuple(server_version)
    return tuple(ProtocolVersion.parse(text) for text in texts)


def _nearest(client: ProtocolVersion, served: Sequence[ProtocolVersion]) -> ProtocolVersion:
    return min(served, key=lambda v: (abs(v.major - client.major), abs(v.minor - client.minor)))


def check_version_query(query: str, server_version: str | Sequence[str]) -> GateRefusal | None:
    """Decide the version handshake from a raw query string; None means accepted.

    ``server_version`` is one version or one per served protocol line (``0.2.3``,
    ``0.4.2``): a client compatible with any of them is accepted.
    """
    raw = first_query_value(query, VERSION_QUERY_PARAM)
    served = (server_version,) if isinstance(server_version, str) else tuple(server_version)
    if raw is not None and len(raw) > _CACHED_LENGTH:
        return _verdict(raw, served)
    return _cached_verdict(raw, served)


def _verdict(raw: str | None, server_version: tuple[str, ...]) -> GateRefusal | None:
    if not raw:
        return GateRefusal(
            ErrorPayload(code=ErrorCode.BAD_REQUEST, message="Missing a2c_version query parameter")
        )
    try:
        if not _CANONICAL.fullmatch(raw):
            raise InvalidVersionError(raw)
        client = ProtocolVersion.parse(raw)
    except InvalidVersionError:
        shown = raw if len(raw) <= _MAX_ECHO else raw[:_MAX_ECHO] + "…"
        return GateRefusal(
            ErrorPayload(
                code=ErrorCode.BAD_REQUEST,
                message=f"Invalid a2c_version: {shown!r} is not MAJOR.MINOR.PATCH",
            )
        )
    served = _versions(server_version)
    if any(is_compatible(client, version) for version in served):
        return None
    nearest = _nearest(client, served)
    low, high = supported_range(nearest)
    ranges = []
    for version in served:
        first, last = supported_range(version)
        ranges.append({"min_supported": first, "max_supported": last})
    return GateRefusal(
        VersionMismatchPayload(
            code=ErrorCode.PROTOCOL_VERSION_MISMATCH,
            message="Protocol version mismatch",
            server_version=str(nearest),
            client_version=str(client),
            min_supported=low,
            max_supported=high,
        ),
        {SUPPORTED_RANGES_KEY: ranges},
    )


# Clients send a handful of distinct versions: parsing them again for every handshake (a
# flood's too) cost as much as the rest of the gate. Junk versions only evict entries,
# and long ones (never canonical) are not kept.
_CACHED_LENGTH: Final = 24
_cached_verdict: Final = functools.lru_cache(maxsize=256)(_verdict)


def mount_matches(path: str, mount: str) -> bool:
    """Whether ``path`` is under the Engine.IO ``mount`` (``"socket.io"``).

    The same test Engine.IO's own ASGI adapter uses, so the gate guards exactly the
    requests that reach Engine.IO.
    """
    prefix = "/" + mount.strip("/") + "/"
    return (path if path.endswith("/") else path + "/").startswith(prefix)


class VersionGate:
    """ASGI middleware enforcing the version handshake in front of ``app``.

    Requests outside ``mount`` and lifespan events pass straight through.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        server_version: str | Sequence[str],
        mount: str,
        on_refusal: Callable[[str], None] | None = None,
        log_refusal: Callable[..., object] | None = None,
    ) -> None:
        _versions(server_version)
        self._app = app
        self._on_refusal = on_refusal
        #: ``(cause, message, peer)``, logging folded per cause and address (the Server
        #: passes :meth:`~a2c_server._floods._refusals.RefusalLog.refused`): a flood of
        #: handshakes without a version must not write a WARNING each.
        self._log_refusal = log_refusal
        self._server_version = server_version
        self._mount = mount

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket") or not mount_matches(
            scope.get("path", ""), self._mount
        ):
            await self._app(scope, receive, send)
            return
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        if first_query_value(query, "sid") is not None:
            await self._app(scope, receive, send)  # an Engine.IO session that passed already
            return
        refusal = check_version_query(query, self._server_version)
        if refusal is None:
            await self._app(scope, receive, send)
            return
        client = scope.get("client")
        peer = f"{client[0]}:{client[1]}" if client else "?"
        code = refusal.payload.code
        if self._log_refusal is not None:
            self._log_refusal(f"handshake {code} {kind}",
                              f"handshake refused code={code} transport={kind}", peer)  # fmt: skip
        else:
            _log.warning("handshake refused code=%s transport=%s peer=%s", code, kind, peer,
                         extra={"a2c": {"code": code, "transport": kind}})  # fmt: skip
        if self._on_refusal is not None:
            self._on_refusal(kind)
        if kind == "http":
            await _drain_http(receive)
            await send({"type": "http.response.start", "status": 400, "headers": refusal.headers})
            await send({"type": "http.response.body", "body": refusal.body})
        else:
            await _refuse_websocket(scope, receive, send, refusal)


async def _drain_http(receive: Receive) -> None:
    # Read the (small) request body so the server can reuse the connection cleanly.
    while True:
        message = await receive()
        if message.get("type") != "http.request" or not message.get("more_body"):
            return


async def _refuse_websocket(
    scope: Scope, receive: Receive, send: Send, refusal: GateRefusal
) -> None:
    message = await receive()
    if message.get("type") != "websocket.connect":
        return  # the peer went away before the handshake finished
    if _DENIAL_EXTENSION in (scope.get("extensions") or {}):
        await send(
            {"type": "websocket.http.response.start", "status": 400, "headers": refusal.headers}
        )
        await send({"type": "websocket.http.response.body", "body": refusal.body})
        return
    # Closing before accept would surface as HTTP 403 with no close code; accept first so
    # the client sees 4900 (handshake-and-versioning.md §3.3).
    await send({"type": "websocket.accept"})
    await send(
        {
            "type": "websocket.close",
            "code": WS_CLOSE_VERSION_REJECTED,
            "reason": "a2c version rejected",
        }
    )
