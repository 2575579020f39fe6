"""Long-polling POSTs screened before python-engineio sees them, so each one is answered.

python-engineio (4.x) leaves some client POSTs without any answer: a body over
``max_http_buffer_size`` (``ContentTooLongError``) and a packet only a server may send
(OPEN, PING, NOOP: ``UnknownPacketError``). For both, ``AsyncServer.handle_request`` calls
``disconnect(sid)``, which queues a CLOSE packet and waits for the session's queue to be
drained by a GET that never comes; the request then waits until shutdown, where it is
cancelled with a traceback. A body that does not decode is logged at ERROR and answered
``200 OK``, and a chunked body (no Content-Length) is not read at all.

:class:`PostScreen` reads the body of each POST for a live polling session itself (never
more than the limit), decodes it with python-engineio's own payload class and refuses:

* a body over the limit: 413 (the connection is closed, the rest is not read);
* a body that does not decode (not UTF-8, an unknown packet type, bad base64): 400;
* a packet type a client may not send (OPEN, PING, NOOP): 400.

A refused POST closes its Engine.IO session (a pending GET receives the CLOSE packet),
gets the flat ``{"code", "message"}`` body the version gate uses, one rate-limited
WARNING naming the peer and the reason, and ``a2c_server_polling_refusals_total``.
Everything else goes on to python-engineio with the body replayed and Content-Length set
to its real length. The upstream names this relies on (``AsyncServer.sockets``, the
socket's ``connected``/``upgraded``/``closed``/``queue``/``close()``, ``engineio.payload``)
are read in the fence, :mod:`a2c_server._upstream` (pinned by ``test_server_http_edge.py``
and ``test_server_upstream_guard.py``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Final

from a2c_protocol import ErrorPayload, to_wire
from a2c_server._relay._sio import SmcpSocketServer
from a2c_server._upstream import (
    eio_packet_names,
    eio_packet_types,
    payload_packet_types,
    polling_socket,
    refuse_polling,
)

from ._gate import ASGIApp, Message, Receive, Scope, Send, first_query_value
from ._oversize import content_length

__all__ = ["CLIENT_PACKET_TYPES", "PostRefusal", "PostScreen", "screen_body", "send_flat_error"]

_log = logging.getLogger("a2c_server.limits")

#: Engine.IO packet types a client may send over long-polling (EIO 4).
CLIENT_PACKET_TYPES: Final = frozenset(
    eio_packet_types[name] for name in ("CLOSE", "PONG", "MESSAGE", "UPGRADE")
)

_KNOWN_TYPES: Final = frozenset(range(len(eio_packet_names)))


class PostRefusal:
    """Why a polling POST is refused: HTTP status, metric reason, message for the client."""

    __slots__ = ("message", "reason", "status")

    def __init__(self, status: int, reason: str, message: str) -> None:
        self.status = status
        self.reason = reason
        self.message = message


def screen_body(body: bytes) -> PostRefusal | None:
    """Refuse a polling POST body python-engineio would not answer properly (None: pass)."""
    try:
        packet_types = payload_packet_types(body.decode("utf-8"))
    except Exception:  # ValueError, UnicodeDecodeError, binascii.Error, IndexError...
        return PostRefusal(400, "undecodable", "Undecodable Engine.IO payload")
    for packet_type in packet_types:
        if packet_type not in CLIENT_PACKET_TYPES:
            if packet_type not in _KNOWN_TYPES:  # upstream's decoder lets "9" through
                return PostRefusal(400, "undecodable", "Undecodable Engine.IO payload")
            name = eio_packet_names[packet_type]
            return PostRefusal(
                400, "server_packet", f"Engine.IO packet {name} may not be sent by a client"
            )
    return None


async def send_flat_error(
    send: Send, status: int, message: str, *, details: dict[str, Any] | None = None,
    close: bool = False,
) -> None:  # fmt: skip
    """Answer with the flat error body the version gate uses (``close``: end the connection)."""
    body = json.dumps(
        to_wire(ErrorPayload(code=status, message=message, details=details)),
        separators=(",", ":"),
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Gone(Exception):
    pass


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it is over ``limit`` (the rest left unread)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            raise _Gone  # the client went away: there is nobody to answer
        chunk = bytes(message.get("body") or b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _with_length(scope: Scope, length: int) -> Scope:
    headers = [(k, v) for k, v in scope.get("headers", ()) if k.lower() != b"content-length"]
    headers.append((b"content-length", str(length).encode()))
    copy = dict(scope)
    copy["headers"] = headers
    return copy


class PostScreen:
    """ASGI wrapper answering the polling POSTs python-engineio would leave pending.

    ``on_refusal(reason)`` counts each refusal; ``on_oversize("polling")`` is told of a
    body over the limit that had no Content-Length (the size watch in front of this
    wrapper logs and counts the others).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        sio: SmcpSocketServer,
        limit: int,
        on_refusal: Callable[[str], None] | None = None,
        on_oversize: Callable[[str], None] | None = None,
    ) -> None:
        self._app = app
        self._sio = sio
        self._limit = limit
        self._on_refusal = on_refusal
        self._on_oversize = on_oversize

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        eio_sid = first_query_value(query, "sid")
        socket = polling_socket(self._sio, eio_sid)
        if socket is None:
            await self._app(scope, receive, send)  # python-engineio answers these itself
            return
        declared = content_length(scope)
        # A declared size over the limit is refused unread (the size watch logged it).
        announced = declared is not None and declared > self._limit
        try:
            body = None if announced else await _read_body(receive, self._limit)
        except _Gone:
            return
        refusal: PostRefusal | None
        if body is None:
            refusal = PostRefusal(
                413, "too_large", f"Request body over max_message_bytes ({self._limit})"
            )
            if not announced and self._on_oversize is not None:
                self._on_oversize("polling")
        else:
            refusal = screen_body(body)
        if refusal is None:
            assert body is not None
            await self._app(_with_length(scope, len(body)), _replay(body, receive), send)
            return
        await self._refuse(scope, send, eio_sid, socket, refusal, logged=announced)

    async def _refuse(
        self, scope: Scope, send: Send, eio_sid: str | None, socket: Any, refusal: PostRefusal,
        *, logged: bool,
    ) -> None:  # fmt: skip
        if self._on_refusal is not None:
            self._on_refusal(refusal.reason)
        if not logged:  # the size watch in front logged the declared-too-large ones
            client = scope.get("client")
            self._sio.noise.warning(
                f"polling {refusal.reason}", "long-polling POST refused, session closed",
                peer=f"{client[0]}:{client[1]}" if client else "?", eio_sid=eio_sid,
                status=refusal.status, reason=refusal.message,
            )  # fmt: skip
        await refuse_polling(self._sio, eio_sid, socket)
        await send_flat_error(send, refusal.status, refusal.message, close=refusal.status == 413)
