"""Below Socket.IO, against the real ``a2c-server`` process.

Raw HTTP (httpx) and raw WebSocket frames: every request is answered or closed cleanly,
client mistakes are one WARNING line each (never ERROR, never a traceback), and SIGTERM
with requests still pending ends within the grace period with one summary line.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect

from a2c_protocol import PROTOCOL_VERSION
from a2c_testkit.triangle import ServerProcess, eventually, server_process

LIMIT = 20_000
ANSWER = 15.0  # generous: an answer that comes at all comes in milliseconds


def polling_url(server: ServerProcess, sid: str | None = None) -> str:
    base = f"{server.url}/socket.io/?EIO=4&transport=polling"
    return f"{base}&sid={sid}" if sid else f"{base}&a2c_version={PROTOCOL_VERSION}"


async def polling_session(http: httpx.AsyncClient, server: ServerProcess) -> str:
    """A polling Engine.IO session admitted to /smcp as an Agent; its Engine.IO sid."""
    opened = await http.get(polling_url(server))
    sid: str = json.loads(opened.text[1:])["sid"]
    connect = await http.post(polling_url(server, sid), content=b'40/smcp,{"role":"agent"}')
    assert connect.status_code == 200
    admitted = await http.get(polling_url(server, sid))
    assert admitted.text.startswith("40/smcp,"), admitted.text
    return sid


def problems(logs: str) -> list[str]:
    """ERROR lines and tracebacks in a Server log."""
    return [
        line for line in logs.splitlines()
        if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")
    ]  # fmt: skip


async def stop_cleanly(server: ServerProcess) -> str:
    os.kill(server.process.pid, signal.SIGTERM)
    await eventually(lambda: not server.process.running, timeout=60, what="server exit")
    assert server.process.popen.returncode == 0
    return server.process.logs()


@pytest.fixture
async def server(procs: Any) -> AsyncIterator[ServerProcess]:
    async with server_process(
        procs.log_dir, track=procs.track, extra_args=["--max-message-bytes", str(LIMIT)]
    ) as srv:
        yield srv


def unread_bytes(server_port: int, client_port: int) -> int | None:
    """Bytes the Server has not read yet on its socket to ``client_port`` (None: no socket)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1].split(":")[1], fields[2].split(":")[1]
        if int(local, 16) == server_port and int(remote, 16) == client_port:
            return int(fields[4].split(":")[1], 16)
    return None


class PendingGet:
    """A long-poll GET sent by hand; ``sent()`` returns once the Server has read it.

    uvicorn starts the request's task as it reads the bytes, so a later request on
    another connection finds this one waiting.
    """

    def __init__(self, server: ServerProcess, sid: str) -> None:
        self.server = server
        self.sid = sid

    async def sent(self) -> PendingGet:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.server.port)
        path = polling_url(self.server, self.sid).split(str(self.server.port), 1)[1]
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await self.writer.drain()
        port = self.writer.get_extra_info("sockname")[1]
        await eventually(lambda: unread_bytes(self.server.port, port) == 0, timeout=ANSWER, interval=0.01,
                         what="the Server read the GET")  # fmt: skip
        return self

    async def answer(self) -> tuple[int, bytes]:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), ANSWER)
        status = int(head.split(b" ", 2)[1])
        length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        if length:
            body = await asyncio.wait_for(self.reader.readexactly(int(length[1])), ANSWER)
        else:  # chunked: one chunk and the terminator is all a poll answer needs
            size = int(await asyncio.wait_for(self.reader.readline(), ANSWER), 16)
            body = await self.reader.readexactly(size)
        self.writer.close()
        return status, body


def chunked(body: bytes) -> Any:
    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096]

    return chunks()


# ---------------------------------------------- Engine.IO requests answered or refused


REFUSED = [
    ("noop", b"6", 400, "NOOP"),
    ("ping", b"2", 400, "PING"),
    ("open", b"0", 400, "OPEN"),
    ("noop after a message", b'42/smcp,["server:list_room",{}]\x1e6', 400, "NOOP"),
    ("not utf-8", b"4\xff\xfe", 400, "Undecodable"),
    ("unknown type", b"9zz", 400, "Undecodable"),
    ("over the limit", b"4" + b"x" * (LIMIT + 10), 413, "max_message_bytes"),
    ("over the limit, chunked", b"4" + b"x" * (LIMIT + 10), 413, "max_message_bytes"),
]


async def test_refused_polling_posts_are_answered_at_once_and_close_the_session(
    server: ServerProcess,
) -> None:
    async with httpx.AsyncClient(timeout=ANSWER) as http:
        for name, body, status, words in REFUSED:
            sid = await polling_session(http, server)
            pending = await PendingGet(server, sid).sent()
            content = chunked(body) if "chunked" in name else body
            started = time.monotonic()
            answer = await http.post(polling_url(server, sid), content=content)
            assert answer.status_code == status, (name, answer.text)
            error = answer.json()
            assert set(error) == {"code", "message"} and error["code"] == status, name
            assert words in error["message"], (name, error)
            assert time.monotonic() - started < ANSWER
            # The session is closed: the pending GET gets the CLOSE packet, the sid is gone.
            assert await pending.answer() == (200, b"1"), name
            after = await http.get(polling_url(server, sid))
            assert after.status_code == 400, name
        # transport=websocket without "Connection: Upgrade": python-engineio answered nothing.
        half = await http.get(
            f"{server.url}/socket.io/?EIO=4&transport=websocket&a2c_version={PROTOCOL_VERSION}",
            headers={"Upgrade": "websocket"},
        )
        assert half.status_code == 400 and half.json()["code"] == 400
        # A chunked POST the Server accepts is read (python-engineio alone reads nothing).
        sid = await polling_session(http, server)
        sent = await http.post(
            polling_url(server, sid), content=chunked(b'42/smcp,["server:list_room",{}]')
        )
        assert sent.status_code == 200
        metrics = (await http.get(f"{server.url}/metrics")).text
    counts = dict(re.findall(r'a2c_server_polling_refusals_total\{reason="(\w+)"\} (\d+)', metrics))
    assert counts == {"server_packet": "4", "undecodable": "2", "too_large": "2"}, counts
    logs = await stop_cleanly(server)
    assert problems(logs) == []
    assert "long-polling POST refused" in logs


# -------------------------------------------------------------- raw WebSocket frames


def frame(payload: bytes, opcode: int = 1, fin: bool = True) -> bytes:
    """One masked client frame (RFC 6455 §5.2)."""
    mask = os.urandom(4)
    head = bytes([(0x80 if fin else 0) | opcode])
    size = len(payload)
    if size < 126:
        head += bytes([0x80 | size])
    elif size < 65536:
        head += bytes([0x80 | 126]) + size.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + size.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def raw_websocket(server: ServerProcess) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket Engine.IO session opened by hand, its OPEN packet read."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET /socket.io/?EIO=4&transport=websocket&a2c_version={PROTOCOL_VERSION} HTTP/1.1\r\n"
        f"Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ANSWER)
    assert head.startswith(b"HTTP/1.1 101"), head
    opened = await asyncio.wait_for(reader.readexactly(2), ANSWER)
    await asyncio.wait_for(reader.readexactly(opened[1] & 0x7F), ANSWER)  # the OPEN packet
    return reader, writer


async def close_code(reader: asyncio.StreamReader) -> int:
    """Read frames until the Server's close frame; its status code."""
    while True:
        head = await asyncio.wait_for(reader.readexactly(2), ANSWER)
        size = head[1] & 0x7F
        if size == 126:
            size = int.from_bytes(await reader.readexactly(2), "big")
        elif size == 127:
            size = int.from_bytes(await reader.readexactly(8), "big")
        body = await reader.readexactly(size)
        if head[0] & 0x0F == 8:
            return int.from_bytes(body[:2], "big")


async def test_invalid_utf8_text_frame_is_one_warning_with_the_peer(
    server: ServerProcess,
) -> None:
    reader, writer = await raw_websocket(server)
    writer.write(frame(b'40/smcp,{"role":"agent"}'))
    writer.write(frame(b"4\xff\xfe\xfd"))
    await writer.drain()
    assert await close_code(reader) == 1007
    writer.close()
    await server.process.wait_for_log("not valid UTF-8", timeout=ANSWER)
    # The websockets library's own client: the connection stays usable for others.
    url = server.url.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket"
    async with ws_connect(f"{url}&a2c_version={PROTOCOL_VERSION}") as ws:
        assert str(await asyncio.wait_for(ws.recv(), ANSWER)).startswith("0{")
    logs = await stop_cleanly(server)
    assert problems(logs) == []
    warnings = [line for line in logs.splitlines() if "UTF-8" in line]
    assert len(warnings) == 1 and " WARNING " in warnings[0], warnings
    assert "peer=127.0.0.1:" in warnings[0]


# ------------------------------------------------- SIGTERM with requests still pending

GRACE = 15.0  # the bound on the exit; it takes well under a second here


async def raw_request(server: ServerProcess, head: bytes) -> tuple[asyncio.StreamReader, Any]:
    """Send ``head`` (a request the client never finishes) and wait until it was read."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(head)
    await writer.drain()
    port = writer.get_extra_info("sockname")[1]
    await eventually(lambda: unread_bytes(server.port, port) == 0, timeout=ANSWER,
                     interval=0.01, what="the Server read the request")  # fmt: skip
    return reader, writer


async def test_sigterm_with_stuck_requests_answers_them_and_logs_one_line(procs: Any) -> None:
    async with (
        server_process(procs.log_dir, track=procs.track,
                       extra_args=["--shutdown-grace", str(GRACE)]) as server,
        httpx.AsyncClient(timeout=ANSWER) as http,
    ):  # fmt: skip
        waiting = await PendingGet(server, await polling_session(http, server)).sent()
        live = await polling_session(http, server)
        path = polling_url(server, live).split(str(server.port), 1)[1]
        unfinished_body = await raw_request(
            server,
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n4".encode(),
        )
        refused_unfinished = await raw_request(
            server, b"POST /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Length: 100\r\n\r\n4",
        )  # fmt: skip
        half_headers = await raw_request(server, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        half_open, ws_writer = await raw_websocket(server)
        ws_writer.write(frame(b'40/smcp,{"role":"agent"}'))  # then it never reads again
        await ws_writer.drain()
        await eventually(lambda: server.process.logs().count("connected sid=") == 3,
                         timeout=ANSWER, what="three sessions admitted")  # fmt: skip

        started = time.monotonic()
        os.kill(server.process.pid, signal.SIGTERM)
        status, body = await waiting.answer()
        assert status == 503 and json.loads(body) == {
            "code": 503, "message": "Server shutting down",
            "details": {"reason": "server_shutdown"},
        }  # fmt: skip
        for reader, writer in (unfinished_body, refused_unfinished):
            answer = await asyncio.wait_for(reader.read(), ANSWER)  # until the Server closes
            assert answer.startswith(b"HTTP/1.1 503 "), answer
            assert answer.endswith(b'"details":{"reason":"server_shutdown"}}'), answer
            writer.close()
        assert await asyncio.wait_for(half_headers[0].read(), ANSWER) == b""
        half_headers[1].close()
        assert await close_code(half_open) == 1012
        ws_writer.close()
        await eventually(lambda: not server.process.running, timeout=60, what="server exit")
        assert time.monotonic() - started < GRACE
        assert server.process.popen.returncode == 0
        logs = server.process.logs()
    assert problems(logs) == []
    summary = [line for line in logs.splitlines() if "open requests ended" in line]
    assert len(summary) == 1, summary
    assert "answered_503=3 polling_sessions_closed=2 websockets_left_to_close=1" in summary[0]
    assert logs.count("disconnected sid=") == 3
