"""Routing benchmark: what the Server's hop costs on the tool-call hot path, as ratios.

Run: ``uv run python tools/bench/bench_routing.py [--calls 400] [--concurrency 32]``.

Everything runs on loopback in one process: the real Server app under uvicorn, a Computer
answering ``client:tool_call`` at once (a python-socketio client, no MCP behind it, so only
routing is measured) and the real ``AsyncAgent``. The reference, measured in the same run,
is a bare python-socketio server that acks an event directly (one hop, no validation, no
office rules). The ratio "A2C routed / bare echo" is what stays comparable across machines;
absolute numbers on a shared 2-core machine are not.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import socketio
from _loopback import free_port, serve

from a2c_agent import AsyncAgent
from a2c_server import ServerSettings, create_app
from a2c_testkit.scripted_computer import ScriptedComputer


async def _measure(
    call: Callable[[], Awaitable[object]], calls: int, concurrency: int
) -> tuple[list[float], float]:
    for _ in range(20):  # warm-up: connections, caches, JIT-free but allocator-warm
        await call()
    latencies = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        latencies.append((time.perf_counter() - start) * 1e3)
    started = time.perf_counter()
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    throughput = calls / (time.perf_counter() - started)
    return latencies, throughput


async def bare_echo(calls: int, concurrency: int) -> tuple[list[float], float]:
    sio = socketio.AsyncServer(async_mode="asgi")

    @sio.on("echo")  # type: ignore[untyped-decorator]
    async def echo(sid: str, data: Any) -> Any:
        return data

    port = free_port()
    server, task = await serve(socketio.ASGIApp(sio), port)
    client = socketio.AsyncClient()
    await client.connect(f"http://127.0.0.1:{port}", transports=["polling", "websocket"])
    while client.transport() != "websocket":
        await asyncio.sleep(0.01)
    payload = {"agent": "a", "req_id": "r", "computer": "c", "tool_name": "echo",
               "params": {"text": "hi"}, "timeout": 30}  # fmt: skip
    try:
        return await _measure(lambda: client.call("echo", payload, timeout=30), calls, concurrency)
    finally:
        await client.disconnect()
        server.should_exit = True
        await task


async def a2c_routed(calls: int, concurrency: int) -> tuple[list[float], float]:
    port = free_port()
    server, task = await serve(create_app(ServerSettings(host="127.0.0.1", port=port)), port)
    url = f"http://127.0.0.1:{port}"
    office = f"bench-{uuid.uuid4()}"
    try:
        async with (
            AsyncAgent(url, name="bench-agent", tool_cache=False) as agent,
            ScriptedComputer(url, name="bench-box", office_id=office) as computer,
        ):
            reply = {"content": [{"type": "text", "text": "hi"}], "isError": False, "meta": None}
            computer.tool_results["echo"] = reply
            await agent.join_office(office)
            return await _measure(
                lambda: agent.call_tool("bench-box", "echo", {"text": "hi"}, timeout=30),
                calls,
                concurrency,
            )
    finally:
        server.should_exit = True
        await task


def _summary(label: str, latencies: list[float], throughput: float) -> tuple[float, float]:
    median = statistics.median(latencies)
    p95 = statistics.quantiles(latencies, n=20)[-1]
    print(f"{label:<22}{median:>10.3f}{p95:>10.3f}{throughput:>12.0f}")
    return median, throughput


async def main_async(calls: int, concurrency: int) -> None:
    print(f"{calls} sequential calls for latency, then {calls} with {concurrency} in flight\n")
    print(f"{'path':<22}{'p50 ms':>10}{'p95 ms':>10}{'calls/s':>12}")
    bare = _summary("bare socket.io echo", *await bare_echo(calls, concurrency))
    routed = _summary("A2C routed tool call", *await a2c_routed(calls, concurrency))
    print(f"\nratio routed/bare: latency x{routed[0] / bare[0]:.2f}, "
          f"throughput x{routed[1] / bare[1]:.2f} (two hops + validation vs one hop)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    asyncio.run(main_async(args.calls, args.concurrency))


if __name__ == "__main__":
    main()
