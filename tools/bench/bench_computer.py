"""What the Computer adds to a tool call, and what organizing a large desktop costs.

Run: ``uv run python tools/bench/bench_computer.py [--calls 1000]``.

1. Tool call overhead. Two copies of the same stdio MCP server (the testkit's ``plain``
   server) run side by side: one is called directly with the MCP client
   (``ClientSession.call_tool``), the other through the Computer's own path for a
   ``client:tool_call`` — decode the request, look the tool up, run it through the MCP
   session manager, encode the result — which is what the Socket.IO link calls. Calls
   alternate between the two paths so machine noise hits both alike. Reported: p50/p99
   wall time and this process's CPU per call for each, and the differences.
2. ``organize`` of 10,000 windows spread over 50 MCP servers (with a call history), the
   pure function behind ``client:get_desktop``: median of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
import uuid

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from a2c_computer import CallRecord, describe_window, organize
from a2c_computer._computer import ComputerCore
from a2c_protocol import ToolCallReq, from_wire, to_wire
from a2c_testkit.mcp_servers import stdio_server_config


def _quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def tool_call_overhead(calls: int) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "a2c_testkit.mcp_servers.plain"]
    )
    config = {
        "servers": {
            "plain": stdio_server_config("plain", "plain", tool_meta={"echo": {"auto_apply": True}})
        }
    }
    async with contextlib.AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        core = await stack.enter_async_context(ComputerCore(config))
        await core.wait_ready("plain")

        async def direct() -> None:
            result = await session.call_tool("echo", {"text": "hi"})
            assert not result.is_error

        async def computer() -> None:
            wire = {"agent": "bench", "req_id": uuid.uuid4().hex, "computer": "box",
                    "tool_name": "echo", "params": {"text": "hi"}, "timeout": 30}  # fmt: skip
            req = from_wire(ToolCallReq, wire)
            result = await core.call_tool(
                req.tool_name, req.params, timeout=req.timeout, req_id=req.req_id, agent=req.agent
            )
            answer = to_wire(result)
            assert answer["isError"] is False

        paths = {"direct MCP client": direct, "through the Computer": computer}
        wall: dict[str, list[float]] = {name: [] for name in paths}
        cpu: dict[str, float] = dict.fromkeys(paths, 0.0)
        for _ in range(50):  # warm-up
            for call in paths.values():
                await call()
        for _ in range(calls):
            for name, call in paths.items():
                c0, w0 = time.process_time(), time.perf_counter()
                await call()
                wall[name].append((time.perf_counter() - w0) * 1e3)
                cpu[name] += time.process_time() - c0
    print(f"tool call, {calls} calls per path (alternating), stdio MCP server 'plain'")
    print(f"{'path':<24}{'p50 ms':>9}{'p99 ms':>9}{'CPU µs/call':>13}")
    figures = {}
    for name in paths:
        p50, p99 = _quantiles(wall[name])
        figures[name] = (p50, p99, cpu[name] / calls * 1e6)
        print(f"{name:<24}{p50:>9.3f}{p99:>9.3f}{figures[name][2]:>13.0f}")
    d, c = figures["direct MCP client"], figures["through the Computer"]
    print(f"{'Computer overhead':<24}{c[0] - d[0]:>9.3f}{c[1] - d[1]:>9.3f}{c[2] - d[2]:>13.0f}\n")


def organize_10k(rounds: int) -> None:
    servers, per_server = 50, 200
    windows = []
    for s in range(servers):
        for w in range(per_server):
            resource = {
                "uri": f"window://srv{s}.example/w{w}",
                "name": f"w{w}",
                "annotations": {"priority": (w % 11) / 10},
                "_meta": {"fullscreen": False},
            }
            info = describe_window(f"server-{s:02d}", resource)
            assert info is not None
            windows.append((info, [{"uri": resource["uri"], "text": f"window {s}/{w} text"}]))
    history = [CallRecord(f"server-{s:02d}", "t", str(s), float(s), True) for s in range(0, 50, 5)]
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        desktop = organize(windows, None, history)
        timings.append((time.perf_counter() - started) * 1e3)
    assert len(desktop) == servers * per_server
    print(f"organize: {len(windows)} windows over {servers} MCP servers, {rounds} runs")
    print(f"median {statistics.median(timings):.1f} ms, min {min(timings):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    asyncio.run(tool_call_overhead(args.calls))
    organize_10k(args.rounds)


if __name__ == "__main__":
    main()
