"""A hand-made Engine.IO WebSocket client that reads only when told (what a hostile or stuck
client does): for flood, slow-consumer and budget tests against a real ``a2c-server``.

:meth:`RawWs.open` connects with a small ``SO_RCVBUF`` and a tiny stream buffer, so a
client that stops reading fills the Server's send buffer after a few kilobytes. Frames
are sent with an all-zero mask (valid, and no per-byte work).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION, Event

__all__ = ["RawWs", "server_connections", "server_rss"]


class RawWs:
    """One Engine.IO WebSocket session over a plain TCP socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.eio_sid = ""
        self.ack_id = 0

    @classmethod
    async def open(
        cls, port: int, *, rcvbuf: int | None = 4096, path: str = "socket.io",
        host: str = "127.0.0.1", headers: dict[str, str] | None = None,
    ) -> RawWs:  # fmt: skip
        """Connect, upgrade, and read the Engine.IO OPEN packet."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=1024)
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        writer.write(
            f"GET /{path}/?EIO=4&transport=websocket&a2c_version={PROTOCOL_VERSION} HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            f"{extra}\r\n".encode()
        )
        status = await reader.readuntil(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n", 1)[0]:
            writer.transport.abort()
            raise ConnectionError(status.decode("latin-1", "replace"))
        client = cls(reader, writer)
        opened = await client.recv()
        if not opened.startswith("0"):
            raise ConnectionError(f"expected Engine.IO OPEN, got {opened[:80]!r}")
        client.eio_sid = json.loads(opened[1:])["sid"]
        return client

    def send(self, text: str) -> None:
        """Queue one text frame (masked with zeros) without waiting for the socket."""
        data = text.encode()
        n = len(data)
        if n < 126:
            head = bytes([0x81, 0x80 | n])
        elif n < 65536:
            head = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
        self.writer.write(head + b"\0\0\0\0" + data)

    async def drain(self) -> None:
        await self.writer.drain()

    async def recv(self) -> str:
        """The next text frame (pings and other control frames are skipped)."""
        while True:
            b0, b1 = await self.reader.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(await self.reader.readexactly(2), "big")
            elif n == 127:
                n = int.from_bytes(await self.reader.readexactly(8), "big")
            data = await self.reader.readexactly(n)
            if b0 & 0x0F == 0x1:
                return data.decode()
            if b0 & 0x0F == 0x8:
                raise ConnectionError("closed by the server")

    async def recv_until(self, prefix: str | tuple[str, ...], timeout: float = 30.0) -> str:
        """Read frames until one starts with ``prefix`` (answering Engine.IO pings)."""
        async with asyncio.timeout(timeout):
            while True:
                text = await self.recv()
                if text == "2":
                    self.send("3")
                elif text.startswith(prefix):
                    return text

    async def connect(self, role: str, **auth: Any) -> str:
        """Socket.IO CONNECT to the namespace; the Server's answer (``40...`` or ``44...``)."""
        self.send(f"40{NAMESPACE}," + json.dumps({"role": role, **auth}))
        return await self.recv_until((f"40{NAMESPACE},", f"44{NAMESPACE},"))

    def emit(self, event: str, data: Any, *, ack: bool = True) -> int | None:
        """Send one Socket.IO EVENT; its ack id (None without one)."""
        ack_id: int | None = None
        if ack:
            ack_id = self.ack_id = self.ack_id + 1
        body = json.dumps([event, data], separators=(",", ":"))
        self.send(f"42{NAMESPACE},{'' if ack_id is None else ack_id}{body}")
        return ack_id

    async def join(self, role: str, name: str, office: str) -> str:
        ack_id = self.emit(Event.JOIN_OFFICE.value,
                           {"role": role, "name": name, "office_id": office})  # fmt: skip
        return await self.recv_until(f"43{NAMESPACE},{ack_id}")

    async def closed_by_server(self, timeout: float = 30.0) -> bool:
        """Read (and discard) until the server ends the connection; False on timeout."""
        try:
            async with asyncio.timeout(timeout):
                while await self.reader.read(65536):
                    pass
        except TimeoutError:
            return False
        except (ConnectionError, OSError):
            pass
        return True

    def close(self) -> None:
        self.writer.transport.abort()


def _proc_net_tcp_port_states(port: int) -> list[str]:
    states: list[str] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as file:
                lines = file.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port:
                states.append(fields[3])
    return states


def server_connections(port: int) -> int:
    """How many ESTABLISHED TCP connections have ``port`` as their local port (the server side)."""
    return sum(1 for state in _proc_net_tcp_port_states(port) if state == "01")


def server_rss(pid: int) -> int:
    """The resident set size of process ``pid`` in bytes (Linux ``/proc``)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")
