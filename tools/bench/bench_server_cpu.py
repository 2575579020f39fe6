"""Server CPU per relayed ``client:tool_call``: ``a2c-server`` against the bare relay floor.

Run: ``uv run python tools/bench/bench_server_cpu.py [--calls 2000] [--rounds 3]``.

Three processes per measurement: the server under test, a process of Computers that answer
every call at once, and this process, whose Agents drive the load. The load side is
deliberately SDK-free (plain python-socketio clients speaking the wire by hand), so it
costs the same against both servers and nothing of ours is measured on the client side.

What is measured is the server process's own CPU time (``/proc/<pid>/stat``, user + system)
over a fixed number of calls, divided by the number of calls, so the load generator's cost
and the machine's other work do not enter the figure. The reference is
``raw_relay.py``: a bare python-socketio relay under uvicorn with uvloop and httptools.

Configurations are "in flight x offices": N concurrent callers in total, caller k driving
office k mod M, so the office count changes while the concurrency does not. Each round
measures the relay and ``a2c-server`` back to back; the table shows the median of the
rounds' ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

import socketio
from _benchkit import NAMESPACE, cpu_seconds, join, rss_bytes, server

CONFIGS: tuple[tuple[int, int], ...] = ((1, 1), (32, 1), (1, 8), (32, 8))
REPLY = {"content": [{"type": "text", "text": "hi"}], "isError": False}


async def host_computers(url: str, kind: str, offices: int) -> None:
    """The Computers' process: answer every tool call at once, until stdin closes."""
    clients = []
    for index in range(offices):
        computer = socketio.AsyncClient(reconnection=False, handle_sigint=False)

        @computer.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
        async def answer(data: dict[str, Any]) -> dict[str, Any]:
            return REPLY

        clients.append(computer)
        await join(computer, url, kind, "computer", f"box-{index}", f"office-{index}")
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for computer in clients:
        await computer.disconnect()


async def drive(agents: Sequence[socketio.AsyncClient], calls: int, in_flight: int) -> float:
    """Run ``calls`` tool calls with ``in_flight`` callers; return the wall time."""
    remaining = calls

    async def caller(index: int) -> None:
        nonlocal remaining
        office = index % len(agents)
        agent = agents[office]
        while remaining > 0:
            remaining -= 1
            payload = {
                "agent": f"agent-{office}",
                "req_id": uuid.uuid4().hex,
                "computer": f"box-{office}",
                "tool_name": "echo",
                "params": {"text": "hi"},
                "timeout": 30,
            }
            answer = await agent.call("client:tool_call", payload, namespace=NAMESPACE, timeout=60)
            if answer != REPLY:
                raise RuntimeError(f"unexpected answer: {answer!r}")

    started = time.perf_counter()
    await asyncio.gather(*(caller(i) for i in range(in_flight)))
    return time.perf_counter() - started


async def measure(kind: str, configs: Sequence[tuple[int, int]], calls: int) -> dict[Any, Any]:
    """CPU µs per call and calls/s of the server ``kind`` for each configuration."""
    offices = max(m for _, m in configs)
    results: dict[Any, Any] = {}
    async with server(kind) as (url, pid):
        computers = subprocess.Popen(
            [sys.executable, __file__, "--computers", url, kind, str(offices)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert computers.stdout is not None and computers.stdin is not None
            line = await asyncio.get_running_loop().run_in_executor(None, computers.stdout.readline)
            if line.strip() != b"ready":
                raise RuntimeError("the Computers' process did not start")
            agents = []
            for index in range(offices):
                agent = socketio.AsyncClient(reconnection=False, handle_sigint=False)
                await join(agent, url, kind, "agent", f"agent-{index}", f"office-{index}")
                agents.append(agent)
            for in_flight, office_count in configs:
                subset = agents[:office_count]
                await drive(subset, 200, in_flight)  # warm-up
                before = cpu_seconds(pid)
                wall = await drive(subset, calls, in_flight)
                used = cpu_seconds(pid) - before
                results[(in_flight, office_count)] = (used / calls * 1e6, calls / wall)
            results["rss"] = rss_bytes(pid)
            for agent in agents:
                await agent.disconnect()
        finally:
            if computers.stdin is not None:
                computers.stdin.close()
            computers.wait(timeout=30)
    return results


async def main_async(calls: int, rounds: int) -> None:
    ratios: dict[tuple[int, int], list[float]] = {c: [] for c in CONFIGS}
    last: dict[str, dict[Any, Any]] = {}
    for round_index in range(rounds):
        for kind in ("raw", "a2c"):
            last[kind] = await measure(kind, CONFIGS, calls)
        for config in CONFIGS:
            ratios[config].append(last["a2c"][config][0] / last["raw"][config][0])
        print(f"round {round_index + 1}/{rounds} done", file=sys.stderr)
    print(f"{calls} calls per configuration, {rounds} rounds; server CPU µs per relayed call\n")
    header = f"{'in flight x offices':<22}{'raw µs':>9}{'a2c µs':>9}{'raw c/s':>9}{'a2c c/s':>9}"
    print(header + f"{'a2c/raw (median)':>19}")
    for config in CONFIGS:
        raw_cpu, raw_rate = last["raw"][config]
        a2c_cpu, a2c_rate = last["a2c"][config]
        label = f"{config[0]} x {config[1]}"
        median = statistics.median(ratios[config])
        spread = f"{min(ratios[config]):.2f}..{max(ratios[config]):.2f}"
        print(f"{label:<22}{raw_cpu:>9.0f}{a2c_cpu:>9.0f}{raw_rate:>9.0f}{a2c_rate:>9.0f}"
              f"{median:>10.2f}x ({spread})")  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--computers":
        url, kind, offices = sys.argv[2], sys.argv[3], int(sys.argv[4])
        asyncio.run(host_computers(url, kind, offices))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main_async(args.calls, args.rounds))


if __name__ == "__main__":
    main()
