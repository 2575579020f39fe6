"""Calls lost to a rolling restart of two Server nodes (SIGTERM, one node at a time).

Run: ``uv run python tools/bench/bench_rolling_restart.py [--rounds 3]`` (needs
``redis-server`` and ``nginx`` on PATH; both are started privately on free loopback ports).

Two ``a2c-server --redis`` nodes at their default settings behind the shipped
``docs/deploy/nginx-sticky.conf``; through nginx (so on one node) a real ``a2c-computer
run`` (``fbox``, the test kit's MCP server) and an SDK ``AsyncAgent`` calling its ``slow``
tool (10 ms) every 0.1 s at the SDK's default timeout. Each round restarts both nodes in
turn: SIGTERM, start again with the same id and port, wait until ``/healthz`` answers and
nginx has the node back (the shipped ``fail_timeout``), then the other node. At the end it
prints how many calls were made, how many failed (by kind), how many ran twice, and for
each SIGTERM the seconds until the first answered call that started after it.

``--server-source SRC`` runs the nodes from another build's ``a2c_server`` (see
``bench_failover.py``); to measure an older SDK too, run this script from that build's
checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

from _benchkit import source_env

from a2c_agent import AsyncAgent, result_text
from a2c_protocol import A2CError
from a2c_testkit.call_stream import CallStream
from a2c_testkit.metrics import clients_held
from a2c_testkit.nginx import fail_timeout, nginx_process
from a2c_testkit.processes import free_port
from a2c_testkit.redis_server import redis_server
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    redis_node_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

PREFIX = "bench-rolling"
SDK_DEFAULT_TIMEOUT = 60.0


async def echo(agent: AsyncAgent) -> bool:
    try:
        result = await agent.call_tool("fbox", "echo", {"text": "ping"}, timeout=10)
    except A2CError:
        return False
    return result_text(result) == "desk: ping"


async def main(rounds: int, source: str | None) -> int:
    log_dir = Path(tempfile.mkdtemp(prefix="bench-rolling-"))
    ports = {"a": free_port(), "b": free_port()}
    office = f"br-{uuid.uuid4().hex[:8]}"
    scene = write_scene(log_dir / "desk.json", {"name": "desk", "windows": []})
    config = write_config(log_dir / "computer.json", [stdio_scene_entry("desk", scene)])
    runs = log_dir / "runs.log"
    runs.touch()
    env = source_env(source)
    back: list[float] = []
    with redis_server() as redis:

        def node(node_id: str) -> contextlib.AbstractAsyncContextManager[ServerProcess]:
            return redis_node_process(log_dir, redis.url, node_id, prefix=PREFIX,
                                      port=ports[node_id], env=env)  # fmt: skip

        async with AsyncExitStack() as stack:
            nodes = {i: await stack.enter_async_context(node(i)) for i in ports}
            url = await stack.enter_async_context(
                nginx_process(log_dir, log_dir / "nginx", list(ports.values()))
            )
            await stack.enter_async_context(
                computer_process(log_dir, config=config, office=office, name="fbox",
                                 server_url=url))  # fmt: skip
            agent = await stack.enter_async_context(AsyncAgent(url, name="planner"))
            await agent.join_office(office)
            await eventually(lambda: echo(agent), timeout=90, what="fbox answers")
            calls = CallStream(agent, runs, seconds=0.01, timeout=SDK_DEFAULT_TIMEOUT,
                               caught=(Exception,), computer="fbox", every=0.1)  # fmt: skip
            streaming = asyncio.create_task(calls.run())
            await eventually(lambda: len(runs.read_text().split()) >= 5, what="calls running")
            here = {i: await clients_held(n.url) for i, n in nodes.items()}
            first = max(here, key=lambda i: here[i])
            order = [first, *(i for i in nodes if i != first)]
            for n in range(rounds):
                for node_id in order:
                    stopped = time.monotonic()
                    await nodes[node_id].process.stop(timeout=30)
                    await eventually(lambda s=stopped: calls.answered_after(s), timeout=120,  # type: ignore[misc]
                                     what=f"calls answered after {node_id} stopped")  # fmt: skip
                    after = min(o.started for o in calls.outcomes.values()
                                if o.ok and o.started > stopped) - stopped  # fmt: skip
                    back.append(after)
                    print(f"round {n + 1}, SIGTERM of node {node_id}: calls answered again "
                          f"{after:.2f} s after", flush=True)  # fmt: skip
                    nodes[node_id] = await stack.enter_async_context(node(node_id))
                    await asyncio.sleep(fail_timeout() + 1)  # nginx takes it back
            calls.stop()
            await asyncio.wait_for(streaming, 2 * SDK_DEFAULT_TIMEOUT)
    outcomes, ran = calls.outcomes, calls.ran()
    failed = sum(not o.ok for o in outcomes.values())
    twice = len({i for i in ran if ran.count(i) > 1})
    slowest = max(o.ended - o.started for o in outcomes.values())
    print(f"{len(outcomes)} calls, {failed} failed {calls.error_kinds()}, {twice} ran twice; "
          f"slowest call {slowest:.2f} s")  # fmt: skip
    print(f"calls answered again after a SIGTERM: median {statistics.median(back):.2f} s, "
          f"max {max(back):.2f} s over {len(back)} restarts")  # fmt: skip
    print(f"(logs in {log_dir})")
    return 1 if failed or twice else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="restarts of both nodes")
    parser.add_argument("--server-source", help="run the nodes from this a2c_server build")
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.rounds, options.server_source)))
