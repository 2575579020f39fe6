"""Server CPU per relayed ``client:tool_call`` on one node and across two, in one run.

Run: ``uv run python tools/bench/bench_multinode.py [--calls 2000] [--in-flight 16] [--rounds 3]``
(needs ``redis-server`` on PATH; it starts a private one on a free loopback port).

Three setups, all running at once in each round:

- ``memory``: one ``a2c-server`` (the in-memory registry), Agent and Computer on it;
- ``redis 1 node``: the same with ``--redis``;
- ``redis 2 nodes``: the Agent on node A, the Computer on node B, every call and its ack
  crossing Redis pub/sub.

The load alternates between the setups ``--batch`` calls at a time (as in
``bench_server_cpu.py``), so a burst of other work on a shared machine lands on all three
instead of on whichever was being measured: measured one after the other, the cross-node
ratio of one unchanged build swung between 1.30x and 1.56x from run to run.

The figure is the Server processes' own CPU (``/proc/<pid>/stat``) per call, summed over
both nodes in the two-node setup (each node's share is shown under the table); Redis's
CPU is shown apart. Ratios are against ``memory`` in the same round (the table shows the
median over rounds, and the range). The load side (plain python-socketio clients,
Computers in their own process) is the one of ``bench_server_cpu.py``.

``--baseline SRC`` also runs the two Redis setups from another build's ``a2c_server``
(``git archive <commit> packages/a2c-server/src | tar -x -C /tmp/base``, then
``--baseline /tmp/base/packages/a2c-server/src``) in the same rounds, so a change's before
and after are measured under the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import socketio
from _benchkit import cpu_seconds, join, server
from bench_server_cpu import drive

from a2c_testkit.redis_server import RedisServer, redis_server

HERE = Path(__file__).resolve().parent
SETUPS = ("memory", "redis 1 node", "redis 2 nodes")
#: The same Redis setups run from the ``--baseline`` build, in the same rounds.
BASELINE_SETUPS = ("base 1 node", "base 2 nodes")


@attrs.define
class Setup:
    """One setup under test: its nodes, its Agent, and what its batches used so far."""

    name: str
    pids: list[int]
    agent: socketio.AsyncClient
    cpu: list[float] = attrs.field(factory=list)  # per node
    redis: float = 0.0
    calls: int = 0
    wall: float = 0.0

    async def batch(self, calls: int, in_flight: int, redis_pid: int) -> None:
        before = [cpu_seconds(pid) for pid in self.pids]
        redis_before = cpu_seconds(redis_pid)
        self.wall += await drive([self.agent], calls, in_flight)
        used = [cpu_seconds(pid) - b for pid, b in zip(self.pids, before, strict=True)]
        self.cpu = [a + b for a, b in zip(self.cpu or [0.0] * len(used), used, strict=True)]
        self.redis += cpu_seconds(redis_pid) - redis_before
        self.calls += calls

    def figures(self) -> tuple[float, ...]:
        """(server CPU µs per call, Redis CPU µs per call, calls/s, each node's µs)."""
        shares = tuple(used / self.calls * 1e6 for used in self.cpu)
        return (sum(shares), self.redis / self.calls * 1e6, self.calls / self.wall, *shares)


@contextlib.asynccontextmanager
async def started(
    setup: str, redis: RedisServer, source: str | None = None
) -> AsyncIterator[Setup]:
    """The nodes of ``setup``, a Computers' process on the last one, an Agent on the first.

    ``source``: another build's ``a2c_server`` to run the nodes of (see ``--baseline``).
    """
    prefix = uuid.uuid4().hex[:8]
    # A generous registry deadline: at a load average of 17 a lookup missed the 0.5 s
    # default and the bench stopped on the 503 (the deadline costs no CPU).
    redis_args = ["--redis", redis.url, "--redis-prefix", prefix, "--registry-timeout", "5"]
    args = [] if setup == "memory" else redis_args
    count = 2 if setup.endswith("2 nodes") else 1
    async with contextlib.AsyncExitStack() as stack:
        nodes = [
            await stack.enter_async_context(
                server("a2c", [*args, "--node-id", f"n{i}"] if args else [], source=source)
            )
            for i in range(count)
        ]
        agent_url, computer_url = nodes[0][0], nodes[-1][0]
        computers = subprocess.Popen(
            [sys.executable, str(HERE / "bench_server_cpu.py"), "--computers", computer_url,
             "a2c", "1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        agent = socketio.AsyncClient(reconnection=False, handle_sigint=False)
        try:
            assert computers.stdout is not None and computers.stdin is not None
            line = await asyncio.get_running_loop().run_in_executor(None, computers.stdout.readline)
            if line.strip() != b"ready":
                raise RuntimeError("the Computers' process did not start")
            await join(agent, agent_url, "a2c", "agent", "agent-0", "office-0")
            yield Setup(setup, [pid for _, pid in nodes], agent)
        finally:
            await agent.disconnect()
            if computers.stdin is not None:
                computers.stdin.close()
            computers.wait(timeout=30)


async def measure(
    redis: RedisServer, calls: int, in_flight: int, batch: int, baseline: str | None
) -> dict[str, tuple[float, ...]]:
    """One round: every setup at once, the load alternating ``batch`` calls at a time."""
    async with contextlib.AsyncExitStack() as stack:
        setups = [await stack.enter_async_context(started(name, redis)) for name in SETUPS]
        if baseline is not None:
            setups += [
                await stack.enter_async_context(started(name, redis, baseline))
                for name in BASELINE_SETUPS
            ]
        for setup in setups:
            await drive([setup.agent], 200, in_flight)  # warm-up
        for _ in range(max(1, calls // batch)):
            for setup in setups:
                await setup.batch(batch, in_flight, redis.pid or 0)
        return {setup.name: setup.figures() for setup in setups}


async def main_async(
    calls: int, in_flight: int, rounds: int, batch: int, baseline: str | None
) -> None:
    names = SETUPS + (BASELINE_SETUPS if baseline is not None else ())
    results: dict[str, list[tuple[float, ...]]] = {s: [] for s in names}
    with redis_server() as redis:
        for round_index in range(rounds):
            measured = await measure(redis, calls, in_flight, batch, baseline)
            for name, figures in measured.items():
                results[name].append(figures)
            print(f"round {round_index + 1}/{rounds} done", file=sys.stderr)
    print(f"{calls} calls, {in_flight} in flight, {rounds} rounds; CPU µs per relayed call\n")
    print(f"{'setup':<16}{'server µs':>11}{'redis µs':>10}{'calls/s':>9}{'x memory (median)':>20}")
    for setup in names:
        ratios = [r[0] / m[0] for r, m in zip(results[setup], results["memory"], strict=True)]
        server_us, redis_us, rate = (
            statistics.median(r[i] for r in results[setup]) for i in range(3)
        )
        spread = f"{min(ratios):.2f}..{max(ratios):.2f}"
        print(f"{setup:<16}{server_us:>11.0f}{redis_us:>10.0f}{rate:>9.0f}"
              f"{statistics.median(ratios):>11.2f}x ({spread})")  # fmt: skip
    builds = [("", "redis")] + ([("baseline ", "base")] if baseline is not None else [])
    for label, prefix in builds:
        one, two = results[f"{prefix} 1 node"], results[f"{prefix} 2 nodes"]
        ratio = [r[0] / o[0] for r, o in zip(two, one, strict=True)]
        agent_side, computer_side = (statistics.median(r[i] for r in two) for i in (3, 4))
        print(f"\n{label}two nodes: Agent's node {agent_side:.0f} µs, "
              f"Computer's node {computer_side:.0f} µs")  # fmt: skip
        print(f"{label}cross-node / one redis node: {statistics.median(ratio):.2f}x "
              f"({min(ratio):.2f}..{max(ratio):.2f}; goal <= 1.3x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=100, help="calls per turn of a setup")
    parser.add_argument(
        "--baseline",
        metavar="SRC",
        help="also run the Redis setups from the a2c_server package under SRC (another "
        "build, e.g. `git archive <commit> packages/a2c-server/src | tar -x -C /tmp/base`, "
        "then /tmp/base/packages/a2c-server/src), in the same rounds",
    )
    args = parser.parse_args()
    asyncio.run(main_async(args.calls, args.in_flight, args.rounds, args.batch, args.baseline))


if __name__ == "__main__":
    main()
