"""Server CPU per relayed ``client:tool_call``: ``a2c-server`` against the bare relay floor.

Run: ``uv run python tools/bench/bench_server_cpu.py [--calls 2000] [--rounds 3] [--traced]
[--log-level LEVEL] [a2c-server flags...]``.

``a2c-server`` runs at its default log level unless ``--log-level`` is given (its log goes
to this process's stderr: redirect it to see how much the relay writes). Flags after the
bench's own go to ``a2c-server`` (e.g. ``--audit-calls``).

``--traced`` turns OpenTelemetry tracing on in ``a2c-server`` (its ``[otel]`` extra, spans
exported over OTLP/HTTP to a sink in this process) and sends W3C trace context with every
call, so the table shows what a traced relay costs.

Three processes per measurement: the server under test, a process of Computers that answer
every call at once, and this process, whose Agents drive the load. The load side is
deliberately SDK-free (plain python-socketio clients speaking the wire by hand), so it
costs the same against both servers and nothing of ours is measured on the client side.

What is measured is the server process's own CPU time (``/proc/<pid>/stat``, user + system)
over a fixed number of calls, divided by the number of calls, so the load generator's cost
and the machine's other work do not enter the figure. The reference is
``raw_relay.py``: a bare python-socketio relay under uvicorn with uvloop and httptools.

Configurations are "in flight x offices": N concurrent callers in total, caller k driving
office k mod M, so the office count changes while the concurrency does not. Both servers
run at once and the load alternates between them in batches (``--batch``, 100 calls), so
the machine's other work falls on both alike; the table shows the median of the rounds'
ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import attrs
import socketio
from _benchkit import NAMESPACE, cpu_seconds, join, server

CONFIGS: tuple[tuple[int, int], ...] = ((1, 1), (32, 1), (1, 8), (32, 8))
REPLY = {"content": [{"type": "text", "text": "hi"}], "isError": False}
TRACE: dict[str, Any] = {}  # the a2c_trace field sent with each call (--traced)
SERVER: dict[str, Any] = {"log_level": None, "extra": []}  # how a2c-server is started


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
                **TRACE,
            }
            answer = await agent.call("client:tool_call", payload, namespace=NAMESPACE, timeout=60)
            if answer != REPLY:
                raise RuntimeError(f"unexpected answer: {answer!r}")

    started = time.perf_counter()
    await asyncio.gather(*(caller(i) for i in range(in_flight)))
    return time.perf_counter() - started


@contextlib.asynccontextmanager
async def running(kind: str, offices: int) -> AsyncIterator[Target]:
    """A server of ``kind`` with ``offices`` offices, each with an Agent and a Computer."""
    options = SERVER if kind == "a2c" else {}
    async with server(kind, options.get("extra", ()), options.get("log_level")) as (url, pid):
        computers = subprocess.Popen(
            [sys.executable, __file__, "--computers", url, kind, str(offices)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        agents: list[socketio.AsyncClient] = []
        try:
            assert computers.stdout is not None and computers.stdin is not None
            line = await asyncio.get_running_loop().run_in_executor(None, computers.stdout.readline)
            if line.strip() != b"ready":
                raise RuntimeError("the Computers' process did not start")
            for index in range(offices):
                agent = socketio.AsyncClient(reconnection=False, handle_sigint=False)
                await join(agent, url, kind, "agent", f"agent-{index}", f"office-{index}")
                agents.append(agent)
            yield Target(kind, pid, agents)
        finally:
            for agent in agents:
                await agent.disconnect()
            if computers.stdin is not None:
                computers.stdin.close()
            computers.wait(timeout=30)


@attrs.define
class Target:
    """One server under test and its load: CPU seconds, calls and wall time accumulated."""

    kind: str
    pid: int
    agents: list[socketio.AsyncClient]
    cpu: float = 0.0
    calls: int = 0
    wall: float = 0.0

    async def batch(self, calls: int, in_flight: int, offices: int) -> None:
        before = cpu_seconds(self.pid)
        self.wall += await drive(self.agents[:offices], calls, in_flight)
        self.cpu += cpu_seconds(self.pid) - before
        self.calls += calls


async def measure(calls: int, batch: int) -> dict[tuple[int, int], tuple[Target, Target]]:
    """Both servers at once, the load alternating between them ``batch`` calls at a time.

    Alternating in small batches pairs the samples: a burst of other work on the machine
    lands on both servers instead of on whichever was being measured at the time.
    """
    offices = max(m for _, m in CONFIGS)
    results: dict[tuple[int, int], tuple[Target, Target]] = {}
    async with running("raw", offices) as raw, running("a2c", offices) as a2c:
        for in_flight, office_count in CONFIGS:
            pair = (Target("raw", raw.pid, raw.agents), Target("a2c", a2c.pid, a2c.agents))
            for target in pair:
                await drive(target.agents[:office_count], 200, in_flight)  # warm-up
            for _ in range(max(1, calls // batch)):
                for target in pair:
                    await target.batch(batch, in_flight, office_count)
            results[(in_flight, office_count)] = pair
    return results


@contextlib.asynccontextmanager
async def otlp_sink() -> AsyncIterator[str]:
    """A loopback OTLP/HTTP endpoint that accepts and discards spans."""
    from aiohttp import web

    async def accept(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application()
    app.router.add_post("/v1/traces", accept)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def main_traced(calls: int, rounds: int, batch: int) -> None:
    async with otlp_sink() as endpoint:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        os.environ["OTEL_SERVICE_NAME"] = "a2c-server-bench"
        trace_id, span_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
        TRACE["a2c_trace"] = {"traceparent": f"00-{trace_id}-{span_id}-01"}
        await main_async(calls, rounds, batch)


async def main_async(calls: int, rounds: int, batch: int) -> None:
    ratios: dict[tuple[int, int], list[float]] = {c: [] for c in CONFIGS}
    last: dict[tuple[int, int], tuple[Target, Target]] = {}
    for round_index in range(rounds):
        last = await measure(calls, batch)
        for config, (raw, a2c) in last.items():
            ratios[config].append((a2c.cpu / a2c.calls) / (raw.cpu / raw.calls))
        print(f"round {round_index + 1}/{rounds} done", file=sys.stderr)
    print(
        f"{calls} calls per configuration and server, alternating in batches of {batch}, "
        f"{rounds} rounds; server CPU µs per relayed call (last round) and the median ratio\n"
    )
    header = f"{'in flight x offices':<22}{'raw µs':>9}{'a2c µs':>9}{'raw c/s':>9}{'a2c c/s':>9}"
    print(header + f"{'a2c/raw (median)':>19}")
    for config in CONFIGS:
        raw, a2c = last[config]
        label = f"{config[0]} x {config[1]}"
        median = statistics.median(ratios[config])
        spread = f"{min(ratios[config]):.2f}..{max(ratios[config]):.2f}"
        print(f"{label:<22}{raw.cpu / raw.calls * 1e6:>9.0f}{a2c.cpu / a2c.calls * 1e6:>9.0f}"
              f"{raw.calls / raw.wall:>9.0f}{a2c.calls / a2c.wall:>9.0f}"
              f"{median:>10.2f}x ({spread})")  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--computers":
        url, kind, offices = sys.argv[2], sys.argv[3], int(sys.argv[4])
        asyncio.run(host_computers(url, kind, offices))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=100, help="calls per alternation")
    parser.add_argument("--traced", action="store_true", help="tracing on in a2c-server")
    parser.add_argument("--log-level", default=None, help="a2c-server's (default: its own)")
    args, extra = parser.parse_known_args()
    SERVER.update(log_level=args.log_level, extra=extra)
    run = main_traced if args.traced else main_async
    asyncio.run(run(args.calls, args.rounds, args.batch))


if __name__ == "__main__":
    main()
