"""The HTTP edge below Socket.IO: the pure parts, and guards on the
python-engineio and uvicorn internals the Server relies on there.

Process-level tests are in ``tests-integration/test_http_edge.py`` and
``test_http_fuzz.py``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging

import pytest
from engineio import packet as eio_packet
from engineio.async_server import AsyncServer as EngineServer
from engineio.async_socket import AsyncSocket

from a2c_server._edge._polling import CLIENT_PACKET_TYPES, screen_body
from a2c_server._edge._uvicorn_log import (
    CLIENT_FAULTS,
    guard_loop,
    quiet_client_faults,
    unguard_loop,
)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"6", "server_packet"),
        (b"2", "server_packet"),
        (b"0", "server_packet"),
        (b"4hi\x1e6", "server_packet"),
        (b"9", "undecodable"),
        (b"\xff", "undecodable"),
        (b"bnot base64!", "undecodable"),
    ],
)
def test_screen_refuses_what_python_engineio_leaves_unanswered(body: bytes, reason: str) -> None:
    refusal = screen_body(body)
    assert refusal is not None and refusal.status == 400 and refusal.reason == reason


@pytest.mark.parametrize("body", [b"", b"3", b"1", b"5", b"4hello", b'42/smcp,["x"]\x1e3'])
def test_screen_passes_what_a_client_may_send(body: bytes) -> None:
    assert screen_body(body) is None


# ----------------------------------------------------------------- upstream shapes


def test_engineio_leaves_refused_posts_waiting_and_reads_only_content_length() -> None:
    # PostScreen exists because a refused POST makes upstream disconnect(sid), whose
    # close() waits for the queue to drain; and it rewrites Content-Length because
    # upstream reads exactly that many bytes (none for a chunked body).
    handle = inspect.getsource(EngineServer.handle_request)
    assert "await socket.handle_post_request(environ)" in handle
    assert "except exceptions.EngineIOError:" in handle and "await self.disconnect(sid)" in handle
    post = inspect.getsource(AsyncSocket.handle_post_request)
    assert "environ.get('CONTENT_LENGTH', '0')" in post
    assert "raise exceptions.ContentTooLongError()" not in handle  # raised in the socket
    assert "ContentTooLongError" in post
    receive = inspect.getsource(AsyncSocket.receive)
    accepted = {eio_packet.PONG, eio_packet.MESSAGE, eio_packet.UPGRADE, eio_packet.CLOSE}
    for name in ("PONG", "MESSAGE", "UPGRADE", "CLOSE"):
        assert f"packet.{name}" in receive
    assert "raise exceptions.UnknownPacketError()" in receive
    assert accepted == CLIENT_PACKET_TYPES
    close = inspect.signature(AsyncSocket.close)
    assert list(close.parameters) == ["self", "wait", "abort", "reason"]
    assert "self.queue.join()" in inspect.getsource(AsyncSocket.close)


def test_uvicorn_reports_invalid_utf8_as_an_error_and_closes_with_1007() -> None:
    # _uvicorn_log filters this exact record out; the 1007 disconnect the app receives is
    # what the Server logs instead (one WARNING with the peer).
    from uvicorn.protocols.websockets import websockets_sansio_impl

    source = inspect.getsource(websockets_sansio_impl.WebSocketsSansIOProtocol)
    assert 'self.logger.exception("Invalid UTF-8 sequence received from client.")' in source
    assert "self.conn.send_close(1007)" in source
    assert '"type": "websocket.disconnect", "code": code' in source
    assert CLIENT_FAULTS[0] in "Invalid UTF-8 sequence received from client."


def test_the_client_fault_filter_keeps_everything_else(caplog: pytest.LogCaptureFixture) -> None:
    quiet_client_faults()
    quiet_client_faults()  # idempotent
    uvicorn_error = logging.getLogger("uvicorn.error")
    assert len([f for f in uvicorn_error.filters if type(f).__name__ == "_ClientFaults"]) == 1
    with caplog.at_level(logging.DEBUG):
        try:
            b"\xff".decode()
        except UnicodeDecodeError:
            uvicorn_error.exception("Invalid UTF-8 sequence received from client.")
        uvicorn_error.error("Exception in ASGI application")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == ["Exception in ASGI application"]
    assert any(r.name == "a2c_server.guard" and r.exc_info for r in caplog.records)


def test_the_loop_guard_turns_only_uvicorns_closing_race_into_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.exceptions import InvalidState
    from websockets.protocol import Protocol, Side, State

    # The race itself: websockets refuses a second close once a close frame was parsed.
    conn = Protocol(Side.SERVER, state=State.OPEN)
    conn.receive_data(
        b"\x88\x82abcd" + bytes(x ^ y for x, y in zip(b"\x03\xe8", b"ab", strict=True))
    )
    try:
        b"\xff".decode()
    except UnicodeDecodeError:
        with pytest.raises(InvalidState) as raised:
            conn.send_close(1007)
    protocol = WebSocketsSansIOProtocol.__new__(WebSocketsSansIOProtocol)
    protocol.client = ("10.0.0.7", 5555)
    seen: list[dict[str, object]] = []
    loop = asyncio.new_event_loop()
    try:
        loop.set_exception_handler(lambda _loop, context: seen.append(context))
        guard_loop(loop)
        guard_loop(loop)  # idempotent
        handler = loop.get_exception_handler()
        assert handler is not None
        with caplog.at_level(logging.WARNING):
            handler(loop, {"message": "Fatal error", "exception": raised.value,
                           "protocol": protocol})  # fmt: skip
            handler(loop, {"message": "other", "exception": ValueError("x")})
        unguard_loop(loop)
        assert loop.get_exception_handler() is not handler
    finally:
        loop.close()
    assert [c["message"] for c in seen] == ["other"]  # everything else is passed on
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "peer=10.0.0.7:5555" in warnings[0], warnings


def test_uvicorn_websocket_protocol_keeps_the_peer_as_client() -> None:
    # The loop guard names the peer from the protocol object's ``client``.
    from uvicorn.protocols.websockets import websockets_sansio_impl

    source = inspect.getsource(websockets_sansio_impl.WebSocketsSansIOProtocol.connection_made)
    assert "self.client = get_remote_addr(transport)" in source
