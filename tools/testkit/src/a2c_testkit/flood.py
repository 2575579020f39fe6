"""A tokenless connect flood from one process: ``lanes`` WebSocket handshakes in flight.

Each lane opens an Engine.IO WebSocket session, sends a Socket.IO CONNECT without a token,
reads the refusal and starts again, for as long as the flood lasts; a handshake the Server
answers busy (503, or a WebSocket closed before accept) is counted and retried at once, as
a closed-loop attacker does. Run it as its own process so its CPU is not the Server's or
the honest client's:

    python -m a2c_testkit.flood PORT LANES [--source 127.0.0.1] [--nice 19]

It prints ``ready`` once imported, floods until its stdin closes, then prints its counts
as one JSON line (``refused``: CONNECTs refused 401, ``busy``: handshakes answered busy,
``errors``: anything else).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION

__all__ = ["flood"]


async def _attempt(port: int, source: str, counts: dict[str, int]) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.bind((source, 0))
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    try:
        writer.write(
            f"GET /socket.io/?EIO=4&transport=websocket&a2c_version={PROTOCOL_VERSION} HTTP/1.1"
            f"\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            .encode()
        )  # fmt: skip
        status = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            counts["busy"] += 1
            return
        body = f'40{NAMESPACE},{{"role":"agent"}}'.encode()
        writer.write(bytes([0x81, 0x80 | len(body)]) + b"\0\0\0\0" + body)
        while True:  # frames up to the CONNECT answer (the OPEN packet comes first)
            head = await reader.readexactly(2)
            size = head[1] & 0x7F
            if size == 126:
                size = int.from_bytes(await reader.readexactly(2), "big")
            text = await reader.readexactly(size)
            if head[0] & 0x0F == 0x8:
                counts["busy"] += 1  # closed 1013 after accept would land here
                return
            if text.startswith(f"44{NAMESPACE},".encode()):
                counts["refused" if b"401" in text else "errors"] += 1
                return
    finally:
        writer.transport.abort()


async def _lane(port: int, source: str, stop: asyncio.Event, counts: dict[str, int]) -> None:
    while not stop.is_set():
        try:
            await _attempt(port, source, counts)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            counts["errors"] += 1
            await asyncio.sleep(0.01)  # the Server's backlog is full: no busy loop here


async def flood(port: int, lanes: int, source: str, stop: asyncio.Event) -> dict[str, int]:
    """Flood ``port`` from ``source`` with ``lanes`` attempts in flight until ``stop``."""
    counts = {"refused": 0, "busy": 0, "errors": 0}
    await asyncio.gather(*(_lane(port, source, stop, counts) for _ in range(lanes)))
    return counts


async def _main(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    task = asyncio.create_task(flood(args.port, args.lanes, args.source, stop))
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    stop.set()
    print(json.dumps(await task), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("lanes", type=int)
    parser.add_argument("--source", default="127.0.0.1", help="the address to flood from")
    parser.add_argument("--nice", type=int, default=19, help="the flooder's nice value")
    arguments = parser.parse_args()
    os.nice(arguments.nice)  # an attacker's CPU is not the victim's: lowest priority here
    asyncio.run(_main(arguments))
