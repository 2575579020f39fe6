"""Blob benchmark: MB/s of one large blob pulled Agent <- Computer through the Server.

Run: ``uv run python tools/bench/bench_blobs.py [--mb 50] [--rounds 3]``.

Everything runs on loopback in one process: the real Server app under uvicorn, a real
``a2c_computer.Computer`` (no MCP servers; the blob is put into its store with
``put_bytes``, as a tool result would be) and the real ``AsyncAgent.read_blob`` (chunks of
256 KiB, 4 in flight, SHA-256 verified). The reference, measured in the same run, is a
bare python-socketio server that answers "chunk" events with the base64 of a slice of the
same bytes, pulled by a bare client with the same chunk size and the same number in
flight (one hop, no validation, no hashing). The ratio is what stays comparable across
machines; the goal is at least 0.5x.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import socketio
from _loopback import free_port, serve

from a2c_agent import AsyncAgent
from a2c_computer import BlobSettings, Computer
from a2c_server import ServerSettings, create_app

CHUNK = 256 * 1024
IN_FLIGHT = 4


async def bare_pull(data: bytes, rounds: int) -> list[float]:
    sio = socketio.AsyncServer(async_mode="asgi", max_http_buffer_size=1_000_000)

    @sio.on("chunk")  # type: ignore[untyped-decorator]
    async def chunk(sid: str, offset: int) -> Any:
        return base64.b64encode(data[offset : offset + CHUNK]).decode("ascii")

    port = free_port()
    server, task = await serve(socketio.ASGIApp(sio), port)
    client = socketio.AsyncClient()
    await client.connect(f"http://127.0.0.1:{port}", transports=["polling", "websocket"])
    while client.transport() != "websocket":
        await asyncio.sleep(0.01)
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def fetch(offset: int, buf: bytearray) -> None:
        async with gate:
            piece = base64.b64decode(await client.call("chunk", offset, timeout=60))
            buf[offset : offset + len(piece)] = piece

    seconds = []
    try:
        for _ in range(rounds):
            buf = bytearray(len(data))
            started = time.perf_counter()
            await asyncio.gather(*(fetch(off, buf) for off in range(0, len(data), CHUNK)))
            seconds.append(time.perf_counter() - started)
            assert buf == data
    finally:
        await client.disconnect()
        server.should_exit = True
        await task
    return seconds


async def a2c_pull(data: bytes, rounds: int, spool: Path) -> list[float]:
    port = free_port()
    server, task = await serve(create_app(ServerSettings(host="127.0.0.1", port=port)), port)
    url = f"http://127.0.0.1:{port}"
    office = f"bench-{uuid.uuid4()}"
    seconds = []
    try:
        async with AsyncAgent(url, name="bench-agent", tool_cache=False) as agent:
            await agent.join_office(office)
            computer = Computer(
                {"servers": {}},
                name="bench-box",
                server_url=url,
                office_id=office,
                blobs=BlobSettings(spool_dir=spool),
            )
            async with computer:
                info = await asyncio.to_thread(
                    computer.blob_store.put_bytes, data, "application/octet-stream"
                )
                for _ in range(rounds):
                    started = time.perf_counter()
                    blob = await agent.read_blob("bench-box", info.handle)
                    seconds.append(time.perf_counter() - started)
                    assert blob.data == data
    finally:
        server.should_exit = True
        await task
    return seconds


async def main_async(megabytes: int, rounds: int) -> None:
    data = os.urandom(megabytes * 1_000_000)
    print(
        f"{megabytes} MB, {rounds} rounds each, {CHUNK // 1024} KiB chunks, {IN_FLIGHT} in flight\n"
    )
    bare = await bare_pull(data, rounds)
    with tempfile.TemporaryDirectory() as tmp:
        routed = await a2c_pull(data, rounds, Path(tmp) / "spool")
    best_bare = len(data) / min(bare) / 1e6
    best_a2c = len(data) / min(routed) / 1e6
    print(f"{'path':<34}{'best MB/s':>10}{'worst MB/s':>12}")
    for label, best, runs in (
        ("bare socket.io chunk pull", best_bare, bare),
        ("A2C read_blob via the Server", best_a2c, routed),
    ):
        print(f"{label:<34}{best:>10.1f}{len(data) / max(runs) / 1e6:>12.1f}")
    print(f"\nratio A2C/bare (best rounds): x{best_a2c / best_bare:.2f} (goal >= 0.5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main_async(args.mb, args.rounds))


if __name__ == "__main__":
    main()
