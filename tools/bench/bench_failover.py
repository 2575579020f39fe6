"""Time from ``kill -9`` of a Server node to the first successful call again.

Run: ``uv run python tools/bench/bench_failover.py [--kills 10]`` (needs ``redis-server``
and ``nginx`` on PATH; both are started privately on free loopback ports).

Two ``a2c-server --redis`` nodes at their default settings (``--node-ttl 6``) behind the
shipped ``docs/deploy/nginx-sticky.conf``. Through nginx (so on one node, the victim):
a real ``a2c-computer run`` (``box``, office 1) and an SDK Agent (``planner``, office 2),
both at default settings. Connected straight to the other node, the survivor: an observer
Agent (office 1) that calls ``box``, and a scripted Computer (``peer``, office 2) that
``planner`` calls. Each round:

1. both probes call every 0.1 s (``timeout=1``);
2. the victim is killed with SIGKILL;
3. "through the Computer": seconds until the observer's first answered call to ``box``
   that started after the kill (``box`` reconnected through nginx and re-joined);
   "through the Agent": the same for ``planner``'s call to ``peer``;
4. the victim is started again (same id and port), and the round ends when nginx has it
   back in rotation (the shipped ``fail_timeout``).

The survivor of one round holds the clients in the next, so the nodes take turns. Goal:
median <= 10 s, max <= 20 s for both.

``--server-source SRC`` runs the nodes from another build's ``a2c_server`` (``git archive
<commit> packages/a2c-server/src | tar -x -C /tmp/base``, then ``--server-source
/tmp/base/packages/a2c-server/src``): with a build from before the take-back, the clients
(this checkout's) get back only by waiting out their held names until the dead node is
reaped, which is what a client without the reclaim secret meets.
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

from a2c_agent import AsyncAgent
from a2c_testkit.call_stream import Probe
from a2c_testkit.metrics import clients_held
from a2c_testkit.nginx import fail_timeout, nginx_process
from a2c_testkit.processes import free_port
from a2c_testkit.redis_server import redis_server
from a2c_testkit.scripted_computer import ScriptedComputer, scripted_tool
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    redis_node_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

PREFIX = "bench-failover"
PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}


async def one_round(
    nodes: dict[str, ServerProcess], planner: AsyncAgent, office: str, peer_office: str
) -> tuple[str, float, float]:
    here = {i: await clients_held(n.url) for i, n in nodes.items()}
    victim = max(here, key=lambda i: here[i])
    survivor = next(i for i in nodes if i != victim)
    async with (
        AsyncAgent(nodes[survivor].url, name="observer") as observer,
        ScriptedComputer(nodes[survivor].url, name="peer", office_id=peer_office) as peer,
    ):
        peer.tools = [scripted_tool("echo")]
        peer.tool_results["echo"] = PONG
        await observer.join_office(office)

        probes = {
            "computer": Probe(observer, "box", args={"text": "x"}, expect="desk: x", timeout=1),
            "agent": Probe(planner, "peer", expect="pong", timeout=1),
        }
        for probe in probes.values():
            probe.start()
        await eventually(
            lambda: all(p.first_ok_after(0.0) is not None for p in probes.values()),
            timeout=60, what="both probes answered before the kill",
        )  # fmt: skip
        nodes[victim].process.kill()
        killed = time.monotonic()
        await eventually(
            lambda: all(p.first_ok_after(killed) is not None for p in probes.values()),
            timeout=120, what="both probes answered after the kill",
        )  # fmt: skip
        for probe in probes.values():
            await probe.stop()
        computer_s = probes["computer"].first_ok_after(killed)
        agent_s = probes["agent"].first_ok_after(killed)
    assert computer_s is not None and agent_s is not None
    return victim, computer_s, agent_s


async def main(kills: int, source: str | None) -> int:
    log_dir = Path(tempfile.mkdtemp(prefix="bench-failover-"))
    ports = {"n1": free_port(), "n2": free_port()}
    run = uuid.uuid4().hex[:8]
    office, peer_office = f"bf-{run}", f"bf-peer-{run}"
    scene = write_scene(log_dir / "desk.json", {"name": "desk", "windows": []})
    config = write_config(log_dir / "computer.json", [stdio_scene_entry("desk", scene)])
    env = source_env(source)
    with redis_server() as redis:

        def node(node_id: str) -> contextlib.AbstractAsyncContextManager[ServerProcess]:
            return redis_node_process(log_dir, redis.url, node_id, prefix=PREFIX,
                                      port=ports[node_id], env=env)  # fmt: skip

        async with AsyncExitStack() as stack:
            nodes = {i: await stack.enter_async_context(node(i)) for i in ports}
            url = await stack.enter_async_context(
                nginx_process(log_dir, log_dir / "nginx", list(ports.values()))
            )
            box = await stack.enter_async_context(
                computer_process(log_dir, config=config, office=office, name="box",
                                 server_url=url))  # fmt: skip
            planner = await stack.enter_async_context(AsyncAgent(url, name="planner"))
            await planner.join_office(peer_office)
            rows: list[tuple[str, float, float]] = []
            for n in range(kills):
                victim, computer_s, agent_s = await one_round(nodes, planner, office, peer_office)
                rows.append((victim, computer_s, agent_s))
                print(f"kill {n + 1:2d} of {victim}: through the Computer {computer_s:5.2f} s, "
                      f"through the Agent {agent_s:5.2f} s", flush=True)  # fmt: skip
                if not box.running:
                    print("the Computer exited", file=sys.stderr)
                    return 1
                nodes[victim] = await stack.enter_async_context(node(victim))
                await asyncio.sleep(fail_timeout() + 1)  # nginx takes it back (see the doc)
    columns = {
        "through the Computer": [r[1] for r in rows],
        "through the Agent": [r[2] for r in rows],
    }
    for label, values in columns.items():
        print(f"{label}: median {statistics.median(values):.2f} s, max {max(values):.2f} s, "
              f"min {min(values):.2f} s over {len(values)} kills")  # fmt: skip
    print(f"(logs in {log_dir})")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--server-source", help="run the nodes from this a2c_server build")
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.kills, options.server_source)))
