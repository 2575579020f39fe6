"""Fuzz the layer below Socket.IO: raw HTTP, Engine.IO and WebSocket frames.

A seeded generator makes at least 500 cases (``A2C_HTTP_FUZZ_CASES`` for more,
``A2C_HTTP_FUZZ_SEED`` for another sequence; the default seed is fixed, so CI sees the
same cases every run): random methods, paths, query strings and headers, polling bodies of
every Engine.IO packet type on live sessions, WebSocket text/binary/control frames,
fragmented, unmasked, oversized and truncated frames, the polling-to-WebSocket probe, and
connections dropped half-way. The real app runs under uvicorn in this process, so its
event loop's tasks and the process's file descriptors can be counted before and after.

For each case: an HTTP status line or a clean close within ``BOUND`` seconds (a case that
drops its own connection early only has to leave nothing behind). For the run: no
ERROR record and no traceback at WARNING or above, and afterwards no Engine.IO session, no
open request, no extra task and no extra file descriptor. The counts (answers by status,
closes) are printed (``-s``) and, with ``A2C_HTTP_FUZZ_REPORT=path``, written as JSON.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import logging
import os
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from a2c_protocol import PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_testkit.server import RunningServer, running_server
from a2c_testkit.triangle import eventually

CASES = int(os.environ.get("A2C_HTTP_FUZZ_CASES", "600"))
SEED = int(os.environ.get("A2C_HTTP_FUZZ_SEED", "30"))
BOUND = 10.0  # an answer comes in milliseconds; this is for a loaded 2-core machine
LIMIT = 4096
CONCURRENCY = 12

SETTINGS = ServerSettings(
    max_message_bytes=LIMIT, ping_interval=1.0, ping_timeout=1.0, admission_timeout=2.0,
    max_unadmitted_per_address=10_000,
)  # fmt: skip


class Early(Exception):
    """The case dropped its connection on purpose: no answer is owed."""


class Client:
    """One raw TCP connection to the Server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def status(self) -> str:
        """``http NNN`` for a status line, ``closed`` when the Server closed first."""
        line = await asyncio.wait_for(self.reader.readline(), BOUND)
        if not line:
            return "closed"
        parts = line.split(b" ", 2)
        assert parts[0].startswith(b"HTTP/1."), line
        return f"http {int(parts[1])}"

    async def head(self) -> tuple[str, bytes]:
        """The status and the whole head of the response."""
        status = await self.status()
        if status == "closed":
            return status, b""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), BOUND)
        return status, head

    async def body(self, head: bytes) -> bytes:
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
                return await asyncio.wait_for(self.reader.readexactly(length), BOUND)
        if b"chunked" in head.lower():
            size = int(await asyncio.wait_for(self.reader.readline(), BOUND), 16)
            data = await asyncio.wait_for(self.reader.readexactly(size + 2), BOUND)
            await asyncio.wait_for(self.reader.readline(), BOUND)  # the last chunk
            await asyncio.wait_for(self.reader.readline(), BOUND)
            return data[:-2]
        return b""

    async def frame(self) -> tuple[int, bytes] | None:
        """The next frame from the Server (opcode, payload); None when it closed."""
        try:
            head = await asyncio.wait_for(self.reader.readexactly(2), BOUND)
            size = head[1] & 0x7F
            if size == 126:
                size = int.from_bytes(await self.reader.readexactly(2), "big")
            elif size == 127:
                size = int.from_bytes(await self.reader.readexactly(8), "big")
            return head[0] & 0x0F, await asyncio.wait_for(self.reader.readexactly(size), BOUND)
        except asyncio.IncompleteReadError:
            return None

    async def until_closed(self) -> str:
        """Read frames until the close frame or EOF: ``ws close N`` or ``closed``."""
        while True:
            got = await self.frame()
            if got is None:
                return "closed"
            if got[0] == 8:
                code = int.from_bytes(got[1][:2], "big") if len(got[1]) >= 2 else 1005
                return f"ws close {code}"

    def close(self) -> None:
        self.writer.close()


def ws_frame(
    payload: bytes, opcode: int = 1, *, fin: bool = True, masked: bool = True, rsv: int = 0,
    claimed: int | None = None,
) -> bytes:  # fmt: skip
    """A client frame; ``claimed`` announces another length than the payload's."""
    size = len(payload) if claimed is None else claimed
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    bit = 0x80 if masked else 0
    if size < 126:
        head += bytes([bit | size])
    elif size < 65536:
        head += bytes([bit | 126]) + size.to_bytes(2, "big")
    else:
        head += bytes([bit | 127]) + size.to_bytes(8, "big")
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


# ------------------------------------------------------------------ generators

METHODS = ["GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH", "get", "G\x00T", "CONNECT",
           "TRACE", "X" * 40]  # fmt: skip
PATHS = ["/socket.io/", "/socket.io", "/socket.io/x/y", "/healthz", "/metrics", "/", "/nope",
         "/socket.io/../healthz", "/%2e%2e/", "/socket.io/?", "/" + "a" * 3000, "/s\xe9"]  # fmt: skip


def query(rng: random.Random, sid: str | None) -> str:
    parts = []
    for key, values in (
        ("EIO", ["4", "3", "5", "", "x", None]),
        ("transport", ["polling", "websocket", "xhr", "", None]),
        ("a2c_version", [PROTOCOL_VERSION, "0.2.0", "0.3.0", "00.2.0", "x", "", None]),
        ("sid", [sid, "nope", "", None] if sid else ["nope", "", None, None]),
        ("j", ["0", "x", None, None, None]),
        ("t", ["abc", None]),
    ):
        value = rng.choice(values)
        if value is not None:
            parts.append(f"{key}={value}")
    if rng.random() < 0.1:
        parts.append("a2c_version=0.2.0&a2c_version=9.9.9")
    if rng.random() < 0.05:
        parts.append("x=" + "%" * rng.randrange(1, 2000))
    rng.shuffle(parts)
    return "&".join(parts)


def headers(rng: random.Random, body: bytes) -> tuple[list[str], bytes, bool]:
    """Header lines, the body to send, and whether the request is left unfinished."""
    lines = ["Host: 127.0.0.1"]
    unfinished = False
    choice = rng.randrange(8)
    if choice == 0:
        lines.append(f"Content-Length: {len(body)}")
    elif choice == 1:
        lines.append("Transfer-Encoding: chunked")
        chunks = [body[i : i + 700] for i in range(0, len(body), 700)]
        body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    elif choice == 2:
        lines.append(f"Content-Length: {len(body) + rng.randrange(1, 50)}")
        unfinished = True  # the Server waits for the rest: this case drops its connection
    elif choice == 3:
        lines.append(
            rng.choice(
                [
                    "Content-Length: -1",
                    "Content-Length: x",
                    "Content-Length: 1, 2",
                    "Transfer-Encoding: gzip",
                    "Content-Length: 99999999999999999",
                ]
            )
        )
        unfinished = lines[-1].endswith("99999")  # a body that cannot be finished
    elif choice == 4:
        lines.append(f"Content-Length: {len(body)}")
        lines.append(rng.choice([
            "Origin: http://evil.example", "Upgrade: websocket", "Connection: Upgrade",
            "Accept-Encoding: gzip, deflate", "X-Forwarded-For: 1.2.3.4", "Cookie: io=abc",
            "X-Long: " + "v" * rng.choice([100, 9000, 70000]), "Bad Header: x", "\xff: \xfe",
        ]))  # fmt: skip
    elif choice == 5:
        lines.append(f"Content-Length: {len(body)}")
        lines.append("Expect: 100-continue")
    else:
        lines.append(f"Content-Length: {len(body)}")
    return lines, body, unfinished


def packet_body(rng: random.Random) -> bytes:
    """An Engine.IO polling payload: valid, invalid or hostile."""
    pick = rng.randrange(16)
    if pick == 0:
        return str(rng.randrange(10)).encode()  # every packet type, bare
    if pick == 1:
        return b"6"
    if pick == 2:
        return b"4" + rng.randbytes(rng.randrange(1, 40))  # not UTF-8, mostly
    if pick == 3:
        return b"b" + base64.b64encode(rng.randbytes(rng.randrange(40)))
    if pick == 4:
        return b"b!!!not base64"
    if pick == 5:
        return b"4" + b"x" * rng.choice([LIMIT - 10, LIMIT + 1, 3 * LIMIT])
    if pick == 6:
        return b"\x1e".join(str(rng.randrange(7)).encode() for _ in range(rng.randrange(1, 5)))
    if pick == 7:
        return b'42/smcp,["server:list_room",{"agent":"a","req_id":"r","office_id":"o"}]'
    if pick == 8:
        return b"40/other,{}" if rng.random() < 0.5 else b"41/smcp,"
    if pick == 9:
        return b"42/smcp," + b"[" * rng.choice([10, 2000]) + b"]"
    if pick == 10:
        return b""
    if pick == 11:
        return b"3" + b"\x1e" + b"3probe"
    if pick == 12:
        return b"1"
    if pick == 13:
        return b"5"
    if pick == 14:
        return b'4{"x":' + b"9" * 5000 + b"}"
    return b"\x1e\x1e\x1e"


def ws_messages(rng: random.Random) -> list[bytes]:
    """Frames for a WebSocket session after its OPEN packet."""
    frames: list[bytes] = []
    for _ in range(rng.randrange(1, 5)):
        pick = rng.randrange(18)
        if pick == 0:
            frames.append(ws_frame(b'40/smcp,{"role":"agent"}'))
        elif pick == 1:
            frames.append(ws_frame(packet_body(rng)))  # text, maybe not UTF-8
        elif pick == 2:
            frames.append(ws_frame(rng.randbytes(rng.randrange(1, 64)), opcode=2))
        elif pick == 3:
            frames.append(ws_frame(b"ping me", opcode=9))
        elif pick == 4:
            frames.append(ws_frame(b"x" * 200, opcode=9))  # control frame over 125 bytes
        elif pick == 5:
            frames.append(ws_frame(b"", opcode=10))
        elif pick == 6:  # a fragmented text message, finished or not
            frames.append(ws_frame(b"42/smcp,", fin=False))
            if rng.random() < 0.6:
                frames.append(ws_frame(b'["server:list_room",{}]', opcode=0))
        elif pick == 7:
            frames.append(ws_frame(b"orphan", opcode=0))  # continuation without a start
        elif pick == 8:
            frames.append(ws_frame(b"4hi", masked=False))  # a client must mask
        elif pick == 9:
            frames.append(ws_frame(b"4hi", rsv=rng.randrange(1, 8)))
        elif pick == 10:
            frames.append(ws_frame(b"4hi", opcode=rng.choice([3, 7, 11, 15])))
        elif pick == 11:
            frames.append(ws_frame(b"4" + b"y" * (LIMIT + rng.randrange(1, 3000))))
        elif pick == 12:
            frames.append(ws_frame(b"4", claimed=2**40))  # announces a terabyte
        elif pick == 13:
            code = rng.choice([1000, 1001, 1005, 999, 4000, 65535, 1015])
            frames.append(ws_frame(code.to_bytes(2, "big") + b"bye", opcode=8))
        elif pick == 14:
            frames.append(ws_frame(b"\x03", opcode=8))  # a one-byte close payload
        elif pick == 15:
            frames.append(ws_frame(b"2probe"))
        elif pick == 16:
            frames.append(ws_frame(b""))  # an empty text frame
        else:
            frames.append(ws_frame(b"4\xed\xa0\x80"))  # a UTF-16 surrogate: not UTF-8
    return frames


# ------------------------------------------------------------------- the cases


async def polling_sid(port: int) -> str | None:
    """A polling session admitted to /smcp, or None if the Server refused one."""
    client = await Client.open(port)
    try:
        base = "/socket.io/?EIO=4&transport=polling"
        await client.send(f"GET {base}&a2c_version={PROTOCOL_VERSION} HTTP/1.1\r\n"
                          f"Host: 127.0.0.1\r\n\r\n".encode())  # fmt: skip
        status, head = await client.head()
        if status != "http 200":
            return None
        sid: str = json.loads((await client.body(head))[1:])["sid"]
        connect = b'40/smcp,{"role":"agent"}'
        await client.send(f"POST {base}&sid={sid} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          f"Content-Length: {len(connect)}\r\n\r\n".encode() + connect)  # fmt: skip
        status, head = await client.head()
        await client.body(head)
        await client.send(f"GET {base}&sid={sid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        status, head = await client.head()
        await client.body(head)
        return sid
    finally:
        client.close()


async def http_case(port: int, rng: random.Random, sid: str | None) -> str:
    method = rng.choice(METHODS)
    path = rng.choice(PATHS)
    target = f"{path}?{query(rng, sid)}" if rng.random() < 0.9 else path
    body = packet_body(rng) if method not in ("GET", "HEAD") or rng.random() < 0.1 else b""
    lines, body, unfinished = headers(rng, body)
    request = f"{method} {target} HTTP/1.1\r\n".encode("latin-1", "replace")
    request += "\r\n".join(lines).encode("utf-8", "replace") + b"\r\n\r\n" + body
    client = await Client.open(port)
    try:
        if rng.random() < 0.1:  # dropped half-way through the request
            await client.send(request[: rng.randrange(1, max(2, len(request)))])
            raise Early
        await client.send(request)
        if unfinished:
            raise Early
        return await client.status()
    finally:
        client.close()


async def polling_case(port: int, rng: random.Random) -> str:
    sid = await polling_sid(port)
    if sid is None:
        return "refused session"
    base = f"/socket.io/?EIO=4&transport=polling&sid={sid}"
    client = await Client.open(port)
    try:
        body = packet_body(rng)
        if rng.random() < 0.2:
            request = (f"POST {base} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                       .encode() + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))  # fmt: skip
        else:
            request = (f"POST {base} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n"
                       .encode() + body)  # fmt: skip
        if rng.random() < 0.2:
            # A GET waiting on the session while the POST arrives on another connection.
            waiting = await Client.open(port)
            try:
                await waiting.send(f"GET {base} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                await client.send(request)
                first = await client.status()
                return f"{first} (+GET {await waiting.status()})"
            finally:
                waiting.close()
        await client.send(request)
        return await client.status()
    finally:
        client.close()


async def websocket_case(port: int, rng: random.Random) -> str:
    sid = await polling_sid(port) if rng.random() < 0.25 else None  # the upgrade path
    version = rng.choice([PROTOCOL_VERSION] * 6 + ["0.3.0", ""])
    target = f"/socket.io/?EIO=4&transport=websocket&a2c_version={version}"
    if sid is not None:
        target += f"&sid={sid}"
    key = base64.b64encode(os.urandom(16)).decode()
    lines = ["Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]  # fmt: skip
    if rng.random() < 0.08:
        lines.remove(rng.choice(lines[1:]))
    if rng.random() < 0.05:
        lines.append("Sec-WebSocket-Extensions: permessage-deflate")
    client = await Client.open(port)
    try:
        await client.send(f"GET {target} HTTP/1.1\r\n".encode()
                          + "\r\n".join(lines).encode() + b"\r\n\r\n")  # fmt: skip
        status, _ = await client.head()
        if status != "http 101":
            return status
        if sid is None:
            opened = await client.frame()
            if opened is None:
                return "closed"
        else:
            await client.send(ws_frame(b"2probe") if rng.random() < 0.7 else ws_frame(b"3"))
        for data in ws_messages(rng):
            await client.send(data)
        if rng.random() < 0.15:
            raise Early
        await client.send(ws_frame(b"\x03\xe8", opcode=8))  # our close, 1000
        return await client.until_closed()
    except (ConnectionError, asyncio.IncompleteReadError):
        return "closed"
    finally:
        client.close()


# ------------------------------------------------------------------------- run


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def leftovers(srv: RunningServer, tasks: set[asyncio.Task[Any]], files: int) -> dict[str, Any]:
    """What the run left behind, beyond what was there before it (empty: nothing)."""
    now = asyncio.all_tasks()
    # Counted, not matched: python-engineio's session sweeper waits in a new task each turn.
    extra = [t for t in now if t not in tasks] if len(now) > len(tasks) else []
    found = {
        "engineio_sessions": len(srv.app.sio.eio.sockets),
        "open_http_requests": srv.app.requests.open_http,
        "open_websockets": srv.app.requests.open_websockets,
        "tasks": [repr(t.get_coro())[:120] for t in extra],
        "fds": fds() - files if fds() > files else 0,
    }
    return {key: value for key, value in found.items() if value}


async def test_http_and_engineio_fuzz(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    rng = random.Random(SEED)
    kinds: list[tuple[str, Callable[[int, random.Random], Awaitable[str]]]] = [
        ("http", lambda port, r: http_case(port, r, None)),
        ("polling", polling_case),
        ("websocket", websocket_case),
    ]
    async with running_server(SETTINGS) as srv:
        # python-engineio starts its session sweeper with the first session: one first.
        sid = await polling_sid(srv.port)
        assert sid is not None
        client = await Client.open(srv.port)
        await client.send(f"POST /socket.io/?EIO=4&transport=polling&sid={sid} HTTP/1.1\r\n"
                          f"Host: 127.0.0.1\r\nContent-Length: 1\r\n\r\n1".encode())  # fmt: skip
        assert await client.status() == "http 200"
        client.close()
        await eventually(lambda: not srv.app.sio.eio.sockets, what="the first session closed")
        await eventually(lambda: srv.app.requests.open_http == 0, what="a quiet start")
        tasks, files = set(asyncio.all_tasks()), fds()
        outcomes: collections.Counter[str] = collections.Counter()
        failures: list[str] = []
        limit = asyncio.Semaphore(CONCURRENCY)

        async def one(number: int) -> None:
            case_rng = random.Random(rng.random())
            kind, run = kinds[number % len(kinds)]
            async with limit:
                try:
                    outcome = await run(srv.port, case_rng)
                except Early:
                    outcome = "early close"
                except TimeoutError:
                    failures.append(f"case {number} ({kind}): no answer in {BOUND}s")
                    return
                except Exception as exc:  # a client-side surprise is a finding too
                    failures.append(f"case {number} ({kind}): {type(exc).__name__}: {exc}")
                    return
            outcomes[f"{kind}: {outcome}"] += 1

        await asyncio.gather(*(one(n) for n in range(CASES)))
        assert failures == [], failures[:10]
        assert sum(outcomes.values()) == CASES >= 500
        # Nothing left: sessions expire (ping 1+1 s, admission 2 s), requests end.
        left: dict[str, Any] = {}
        for _ in range(300):
            left = leftovers(srv, tasks, files)
            if not left:
                break
            await asyncio.sleep(0.1)
        assert left == {}
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    tracebacks = [r for r in caplog.records if r.exc_info]
    shown = [r.getMessage()[:200] for r in errors + tracebacks][:5]
    assert errors == [] and tracebacks == [], shown
    print(f"\nHTTP fuzz seed={SEED} cases={CASES}: " + json.dumps(dict(sorted(outcomes.items())),
          indent=1))  # fmt: skip
    Path(os.environ.get("A2C_HTTP_FUZZ_REPORT", os.devnull)).write_text(
        json.dumps({"seed": SEED, "cases": CASES, "outcomes": dict(outcomes)}, indent=1)
    )
