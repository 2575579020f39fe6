"""What the Agent SDK costs on the client side: per tool call, and per tool-cache refresh.

Run: ``uv run python tools/bench/bench_agent.py [--calls 1000] [--refreshes 20]``.

A real ``a2c-server`` and a Computer (a plain python-socketio client in its own process,
offering 1,000 tools) run as separate processes, so this process's CPU time is the client
side alone. Each figure is set against a plain python-socketio client doing the same wire
exchange in the same run (no decoding into models, no cache, no listeners):

- tool call: ``AsyncAgent.call_tool`` vs a bare ``call("client:tool_call", ...)``;
- cache refresh: the Computer announces ``server:update_tool_list``; the Agent gets
  ``notify:update_tool_list``, fetches and decodes the 1,000 tools and fires its tools
  listener. The reference fetches the same list with a bare ``call("client:get_tools")``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import uuid
from typing import Any

import socketio
from _benchkit import NAMESPACE, join, server

from a2c_agent import AsyncAgent

REPLY = {"content": [{"type": "text", "text": "hi"}], "isError": False}
TOOLS = [
    {
        "name": f"tool_{i:04d}",
        "description": f"Tool number {i}: does one thing well, described in a sentence.",
        "params_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["text"],
        },
        "return_schema": None,
        "meta": {"a2c_tool_meta": '{"tags": ["bench"]}'},
    }
    for i in range(1000)
]


async def host_computer(url: str) -> None:
    """The Computer's process: answer calls and get_tools; announce on each stdin line."""
    computer = socketio.AsyncClient(reconnection=False, handle_sigint=False)

    @computer.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def answer(data: dict[str, Any]) -> dict[str, Any]:
        return REPLY

    @computer.on("client:get_tools", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def tools(data: dict[str, Any]) -> dict[str, Any]:
        return {"tools": TOOLS, "req_id": data["req_id"]}

    await join(computer, url, "a2c", "computer", "box", "office")
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):
        await computer.emit("server:update_tool_list", {"computer": "box"}, namespace=NAMESPACE)
    await computer.disconnect()


def _cpu(start: float, count: int) -> float:
    return (time.process_time() - start) / count * 1e6


async def bare(url: str, calls: int, refreshes: int) -> tuple[float, float]:
    client = socketio.AsyncClient(reconnection=False, handle_sigint=False)
    await join(client, url, "a2c", "agent", "bare", "office")

    async def call() -> None:
        payload = {"agent": "bare", "req_id": uuid.uuid4().hex, "computer": "box",
                   "tool_name": "echo", "params": {"text": "hi"}, "timeout": 30}  # fmt: skip
        await client.call("client:tool_call", payload, namespace=NAMESPACE, timeout=60)

    async def fetch() -> None:
        payload = {"agent": "bare", "req_id": uuid.uuid4().hex, "computer": "box"}
        ret = await client.call("client:get_tools", payload, namespace=NAMESPACE, timeout=60)
        assert len(ret["tools"]) == 1000

    for _ in range(50):
        await call()
    start = time.process_time()
    for _ in range(calls):
        await call()
    per_call = _cpu(start, calls)
    await fetch()
    start = time.process_time()
    for _ in range(refreshes):
        await fetch()
    per_fetch = _cpu(start, refreshes)
    await client.disconnect()
    return per_call, per_fetch


async def sdk(url: str, announce: subprocess.Popen[bytes], calls: int, refreshes: int) -> Any:
    async with AsyncAgent(url, name="sdk") as agent:
        arrived: asyncio.Queue[int] = asyncio.Queue()
        agent.add_tools_listener(
            lambda computer, tools: arrived.put_nowait(len(tools)) if tools else None
        )
        await agent.join_office("office")
        assert await asyncio.wait_for(arrived.get(), 60) == 1000
        for _ in range(50):
            await agent.call_tool("box", "echo", {"text": "hi"}, timeout=30)
        start = time.process_time()
        for _ in range(calls):
            await agent.call_tool("box", "echo", {"text": "hi"}, timeout=30)
        per_call = _cpu(start, calls)
        assert announce.stdin is not None
        cpu = 0.0
        wall: list[float] = []
        for _ in range(refreshes):
            c0, w0 = time.process_time(), time.perf_counter()
            announce.stdin.write(b"announce\n")
            announce.stdin.flush()
            assert await asyncio.wait_for(arrived.get(), 60) == 1000
            cpu += time.process_time() - c0
            wall.append((time.perf_counter() - w0) * 1e3)
        return per_call, cpu / refreshes * 1e6, sorted(wall)[len(wall) // 2]


async def main_async(calls: int, refreshes: int) -> None:
    async with server("a2c") as (url, _pid):
        computer = subprocess.Popen(
            [sys.executable, __file__, "--computer", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert computer.stdout is not None
            loop = asyncio.get_running_loop()
            if (await loop.run_in_executor(None, computer.stdout.readline)).strip() != b"ready":
                raise RuntimeError("the Computer's process did not start")
            bare_call, bare_fetch = await bare(url, calls, refreshes)
            sdk_call, sdk_refresh, refresh_ms = await sdk(url, computer, calls, refreshes)
        finally:
            if computer.stdin is not None:
                computer.stdin.close()
            computer.wait(timeout=30)
    print(f"client-side CPU, {calls} calls and {refreshes} refreshes of 1,000 tools\n")
    print(f"{'':<34}{'bare µs':>10}{'AsyncAgent µs':>15}{'ratio':>8}")
    print(f"{'per tool call':<34}{bare_call:>10.0f}{sdk_call:>15.0f}{sdk_call / bare_call:>7.2f}x")
    print(f"{'per tool list (1,000 tools)':<34}{bare_fetch:>10.0f}{sdk_refresh:>15.0f}"
          f"{sdk_refresh / bare_fetch:>7.2f}x")  # fmt: skip
    print(f"\nnotify:update_tool_list -> tools listener fired: median {refresh_ms:.1f} ms wall")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--computer":
        asyncio.run(host_computer(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--refreshes", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main_async(args.calls, args.refreshes))


if __name__ == "__main__":
    main()
