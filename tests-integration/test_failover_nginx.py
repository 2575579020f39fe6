"""A node dies or restarts behind real nginx (the shipped sticky config): clients take their names back.

Two ``a2c-server --redis`` nodes behind ``docs/deploy/nginx-sticky.conf``; every client
connects through nginx from 127.0.0.1, so all of them land on one node, the one killed or
restarted. nginx re-targets at once (a refused connect goes to the next upstream): nothing
holds the clients back until the dead node's sessions are reaped, as real balancers do.

* ``kill -9``: a Computer and an SDK Agent (office 1), a second Computer and the MCP bridge
  ``a2c-agent mcp`` driven by the ``mcp`` ClientSession over stdio (office 2), and
  ``a2c-agent watch`` (office 3). ``--node-ttl 60``: the reaper cannot free a name within
  the test's waits, so only the take-back of a reconnecting client's own name can bring
  them back (without it the test fails).
* SIGTERM rolling restart of both nodes under a stream of calls: every call ends in
  success, in an answer that says it may have run, or in one that says it was not sent;
  none runs twice, none that ran looks like it did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from a2c_agent import (
    AgentState,
    AsyncAgent,
    result_text,
)
from a2c_protocol import A2CError
from a2c_testkit.call_stream import CallStream
from a2c_testkit.metrics import clients_held
from a2c_testkit.nginx import fail_timeout, nginx_process
from a2c_testkit.processes import bin_path, free_port, spawn
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    redis_node_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

PREFIX = "failover"
#: Long enough that a dead node is never reaped while a test waits (see the module doc).
KILL_NODE_TTL = 60.0
BACK_WITHIN = 45.0  # generous: a loaded 2-core host; the figures are in tools/bench


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


def node(
    procs: Any, redis: RedisServer, node_id: str, port: int, node_ttl: float | None = None
) -> contextlib.AbstractAsyncContextManager[ServerProcess]:
    return redis_node_process(procs.log_dir, redis.url, node_id, prefix=PREFIX,
                              node_ttl=node_ttl, port=port, track=procs.track)  # fmt: skip


async def echo(agent: AsyncAgent, box: str) -> bool:
    try:
        result = await agent.call_tool(box, "echo", {"text": "ping"}, timeout=10)
    except A2CError:
        return False
    return not result.is_error and result_text(result) == "desk: ping"


@contextlib.asynccontextmanager
async def stdio_bridge(url: str, office: str, log: Path) -> AsyncIterator[ClientSession]:
    argv = [bin_path("a2c-agent"), "--server", url, "--office", office, "--name", "bridge",
            "mcp"]  # fmt: skip
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def bridge_echo(session: ClientSession) -> bool:
    try:
        result = await session.call_tool("box-2__echo", {"text": "ping"})
    except Exception:
        return False
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    return not result.is_error and texts == ["desk: ping"]


async def test_kill_9_of_the_node_holding_every_client_costs_seconds_not_their_office(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    run = uuid.uuid4().hex[:8]
    office, bridged, watched = f"fo-{run}", f"fo-bridge-{run}", f"fo-watch-{run}"
    log_dir = procs.log_dir
    async with (
        node(procs, redis, "n1", free_port(), KILL_NODE_TTL) as n1,
        node(procs, redis, "n2", free_port(), KILL_NODE_TTL) as n2,
        nginx_process(log_dir, tmp_path / "nginx", [n1.port, n2.port], track=procs.track) as url,
        computer_process(log_dir, config=config, office=office, name="box", server_url=url,
                         track=procs.track) as box,
        computer_process(log_dir, config=config, office=bridged, name="box-2", server_url=url,
                         track=procs.track) as box2,
        AsyncAgent(url, name="planner") as agent,
        stdio_bridge(url, bridged, log_dir / "bridge.log") as bridge,
        spawn("watch", [bin_path("a2c-agent"), "--server", url, "--office", watched, "--name",
                        "watcher", "watch"], log_dir=log_dir) as watch,
    ):  # fmt: skip
        procs.track(watch)
        transitions: list[tuple[AgentState, str | None]] = []
        agent.add_state_listener(lambda old, new: transitions.append((new, agent.office_id)))
        await agent.join_office(office)
        await eventually(lambda: echo(agent, "box"), timeout=90, what="box answers")
        await eventually(lambda: bridge_echo(bridge), timeout=90, what="the bridge answers")
        await watch.wait_for_log("watching office", timeout=60)

        here = {n: await clients_held(n.url) for n in (n1, n2)}
        victim, survivor = (n1, n2) if here[n1] >= here[n2] else (n2, n1)
        assert await clients_held(survivor.url) == 0, here  # nginx put everyone on one node
        victim.process.kill()
        killed = time.monotonic()

        await eventually(lambda: echo(agent, "box"), timeout=BACK_WITHIN,
                         what="the Agent calling box again")  # fmt: skip
        agent_back = time.monotonic() - killed
        await eventually(lambda: bridge_echo(bridge), timeout=BACK_WITHIN,
                         what="the bridge calling box-2 again")  # fmt: skip
        bridge_back = time.monotonic() - killed
        # watch hears its office again: a Computer entering it now shows up.
        async with computer_process(log_dir, config=config, office=watched, name="box-3",
                                    server_url=url, track=procs.track):  # fmt: skip
            await watch.wait_for_log('"computer": "box-3"', timeout=BACK_WITHIN)
        print(f"kill -9: Agent calling again after {agent_back:.1f} s, bridge after "
              f"{bridge_back:.1f} s (node ttl {KILL_NODE_TTL:g} s)")  # fmt: skip

        assert box.running and box2.running and watch.running  # none of them gave up
        assert await clients_held(survivor.url) >= 5  # everyone moved over
        # The Agent was never CONNECTED outside its office (the half-state).
        assert (AgentState.CONNECTED, None) not in transitions, transitions
        assert transitions[-1] == (AgentState.CONNECTED, office), transitions
        for process, name in ((box, "box"), (box2, "box-2")):
            assert "giving up" not in process.logs(), name


# -- SIGTERM rolling restart -------------------------------------------------------------


async def test_sigterm_rolling_restart_under_a_stream_of_calls_loses_none(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    office = f"rolling-{uuid.uuid4().hex[:8]}"
    runs = tmp_path / "runs.log"
    runs.touch()
    log_dir = procs.log_dir
    ports = {"n1": free_port(), "n2": free_port()}

    async with AsyncExitStack() as stack:
        nodes = {i: await stack.enter_async_context(node(procs, redis, i, p))
                 for i, p in ports.items()}  # fmt: skip
        url = await stack.enter_async_context(
            nginx_process(log_dir, tmp_path / "nginx", list(ports.values()), track=procs.track)
        )
        await stack.enter_async_context(
            computer_process(log_dir, config=config, office=office, name="box", server_url=url,
                             track=procs.track))  # fmt: skip
        agent = await stack.enter_async_context(AsyncAgent(url, name="planner"))
        await agent.join_office(office)
        await eventually(lambda: echo(agent, "box"), timeout=90, what="box answers")
        calls = CallStream(agent, runs, seconds=0.3, timeout=10)
        streaming = asyncio.create_task(calls.run())
        await eventually(lambda: len(runs.read_text().split()) >= 10, what="calls running")

        here = {i: await clients_held(n.url) for i, n in nodes.items()}
        first = max(here, key=lambda i: here[i])
        order = [first, *(i for i in nodes if i != first)]
        for step, node_id in enumerate(order):
            # SIGTERM: it drains (calls out finish, new ones are refused unsent), closes
            # its connections; nginx sends the clients to the other node.
            moved = time.monotonic()
            assert await nodes[node_id].process.stop(timeout=30) == 0, node_id
            await eventually(lambda m=moved: calls.answered_after(m), timeout=BACK_WITHIN,  # type: ignore[misc]
                             what=f"calls answered after {node_id} stopped")  # fmt: skip
            print(f"rolling step {step + 1}: calls answered again "
                  f"{min(o.started for o in calls.outcomes.values() if o.ok and o.started > moved) - moved:.1f} s "
                  f"after SIGTERM of {node_id}")  # fmt: skip
            # The upgraded node comes back (same id and port) before the next one goes, and
            # the balancer takes it back: nginx skips a node that failed for fail_timeout
            # (docs/operations.md, "Rolling restart").
            nodes[node_id] = await stack.enter_async_context(
                node(procs, redis, node_id, ports[node_id]))  # fmt: skip
            await asyncio.sleep(fail_timeout() + 1)
        await asyncio.sleep(2)
        calls.stop()
        await asyncio.wait_for(streaming, 120)  # every call ended

    outcomes, ran = calls.outcomes, calls.ran()
    twice = sorted({i for i in ran if ran.count(i) > 1})
    hidden = sorted(i for i in set(ran) if not outcomes[i].ok and not outcomes[i].may_have_run)
    unclear = sorted(
        i for i, o in outcomes.items() if not o.ok and not o.may_have_run and not o.not_sent
    )
    ran_unsent = sorted(i for i in set(ran) if outcomes[i].not_sent)
    print(f"{len(outcomes)} calls, {sum(o.ok for o in outcomes.values())} answered, "
          f"{len(set(ran))} ran; errors {calls.error_kinds()}")  # fmt: skip
    assert not twice, f"ran twice: {twice}"
    assert not hidden, {i: repr(outcomes[i].error) for i in hidden}
    assert not ran_unsent, {i: repr(outcomes[i].error) for i in ran_unsent}
    assert not unclear, {i: repr(outcomes[i].error) for i in unclear}
