"""The HTTP edge below Socket.IO (issue 30): the pure parts, and guards on the
python-engineio and uvicorn internals the Server relies on there.

Process-level tests are in ``tests-integration/test_http_edge.py`` and
``test_http_fuzz.py``.
"""

from __future__ import annotations

import inspect
import logging

import pytest
from engineio import packet as eio_packet
from engineio.async_server import AsyncServer as EngineServer
from engineio.async_socket import AsyncSocket

from a2c_server._polling import CLIENT_PACKET_TYPES, screen_body
from a2c_server._uvicorn_log import CLIENT_FAULTS, quiet_client_faults


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
