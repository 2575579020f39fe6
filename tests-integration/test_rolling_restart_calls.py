"""A rolling restart fails no call: two nodes behind nginx, SIGTERM'd in turn under calls.

redis-server, two ``a2c-server --redis`` nodes on their own ports behind the shipped
``docs/deploy/nginx-sticky.conf``, a real ``a2c-computer run`` with the test kit's MCP
server, and an SDK ``AsyncAgent`` calling a tool every 0.1 s at the SDK's default timeout.
Every client reaches the nodes through nginx from 127.0.0.1, so all of them sit on one
node: the one stopped first. Each node in turn gets SIGTERM, is started again (same id
and port) and is waited for until nginx takes it back (``fail_timeout``,
docs/operations.md "Rolling restart"); then the other one goes.

Every call must be answered: the calls refused unsent while the Agent moves (the link
down, a node refusing ``server_shutdown``, the Computer not back yet and its name kept
for its return) are sent again by the SDK, and none runs twice. The same holds for an MCP
host calling through the bridge (``a2c-agent mcp`` over stdio, its own office and
Computer, every 0.1 s too).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, result_text
from a2c_protocol import A2CError
from a2c_testkit.bridge import stdio_host, text_of
from a2c_testkit.call_stream import CallStream
from a2c_testkit.metrics import clients_held
from a2c_testkit.nginx import fail_timeout, nginx_process
from a2c_testkit.processes import free_port
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

PREFIX = "rolling"
BACK_WITHIN = 45.0  # generous: a loaded 2-core host
#: The SDK's default tool-call timeout: the stream calls as a user who sets nothing would.
SDK_DEFAULT_TIMEOUT = 60.0


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


def node(
    procs: Any, redis: RedisServer, node_id: str, port: int
) -> contextlib.AbstractAsyncContextManager[ServerProcess]:
    return redis_node_process(procs.log_dir, redis.url, node_id, prefix=PREFIX, port=port,
                              track=procs.track)  # fmt: skip


async def bridge_echo(host: Any) -> bool:
    try:
        result = await host.call_tool("gbox__echo", {"text": "ping"})
    except Exception:
        return False
    return not result.is_error and text_of(result) == "desk: ping"


async def echo(agent: AsyncAgent) -> bool:
    try:
        result = await agent.call_tool("fbox", "echo", {"text": "ping"}, timeout=10)
    except A2CError:
        return False
    return not result.is_error and result_text(result) == "desk: ping"


class BridgeCalls:
    """A host's calls of ``gbox__echo`` through the bridge every 0.1 s until stopped."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.failed: list[str] = []
        self.answered = 0
        self._stop = asyncio.Event()

    async def run(self) -> None:
        calls: list[asyncio.Task[None]] = []
        while not self._stop.is_set():
            calls.append(asyncio.create_task(self._one()))
            await asyncio.sleep(0.1)
        await asyncio.gather(*calls)

    def stop(self) -> None:
        self._stop.set()

    async def _one(self) -> None:
        try:
            result = await self.session.call_tool("gbox__echo", {"text": "ping"})
        except Exception as exc:
            self.failed.append(repr(exc))
            return
        text = text_of(result)
        if result.is_error or text != "desk: ping":
            self.failed.append(text)
        else:
            self.answered += 1


async def test_a_rolling_restart_of_two_nodes_fails_no_call(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    office = f"roll-{uuid.uuid4().hex[:8]}"
    runs = tmp_path / "runs.log"
    runs.touch()
    log_dir = procs.log_dir
    ports = {"a": free_port(), "b": free_port()}

    async with AsyncExitStack() as stack:
        nodes = {i: await stack.enter_async_context(node(procs, redis, i, p))
                 for i, p in ports.items()}  # fmt: skip
        url = await stack.enter_async_context(
            nginx_process(log_dir, tmp_path / "nginx", list(ports.values()), track=procs.track)
        )
        await stack.enter_async_context(
            computer_process(log_dir, config=config, office=office, name="fbox", server_url=url,
                             track=procs.track))  # fmt: skip
        await stack.enter_async_context(
            computer_process(log_dir, config=config, office=f"{office}-b", name="gbox",
                             server_url=url, track=procs.track))  # fmt: skip
        agent = await stack.enter_async_context(AsyncAgent(url, name="planner"))
        await agent.join_office(office)
        await eventually(lambda: echo(agent), timeout=90, what="fbox answers")
        host, _ = await stack.enter_async_context(
            stdio_host(url, f"{office}-b", log_dir / "bridge.log"))  # fmt: skip
        await eventually(lambda: bridge_echo(host), timeout=90, what="gbox answers the bridge")
        bridged = BridgeCalls(host)
        bridging = asyncio.create_task(bridged.run())
        calls = CallStream(agent, runs, seconds=0.01, timeout=SDK_DEFAULT_TIMEOUT,
                           computer="fbox", every=0.1)  # fmt: skip
        streaming = asyncio.create_task(calls.run())
        await eventually(lambda: len(runs.read_text().split()) >= 5, what="calls running")

        here = {i: await clients_held(n.url) for i, n in nodes.items()}
        first = max(here, key=lambda i: here[i])
        assert here[first] >= 2, here  # the Agent and the Computer, on the node going first
        for node_id in [first, *(i for i in nodes if i != first)]:
            stopped = time.monotonic()
            assert await nodes[node_id].process.stop(timeout=30) == 0, node_id
            await eventually(lambda s=stopped: calls.answered_after(s), timeout=BACK_WITHIN,  # type: ignore[misc]
                             what=f"calls answered after node {node_id} stopped")  # fmt: skip
            nodes[node_id] = await stack.enter_async_context(
                node(procs, redis, node_id, ports[node_id]))  # fmt: skip
            # nginx skips a node that refused a connection for fail_timeout: wait it out
            # before the next node goes, as docs/operations.md says to.
            await asyncio.sleep(fail_timeout() + 1)
        calls.stop()
        bridged.stop()
        await asyncio.wait_for(streaming, 2 * SDK_DEFAULT_TIMEOUT)  # every call ended
        await asyncio.wait_for(bridging, 2 * SDK_DEFAULT_TIMEOUT)

    outcomes, ran = calls.outcomes, calls.ran()
    failed = {i: repr(o.error) for i, o in outcomes.items() if not o.ok}
    twice = sorted({i for i in ran if ran.count(i) > 1})
    print(f"rolling restart: {len(outcomes)} calls, {len(failed)} failed, "
          f"errors {calls.error_kinds()}")  # fmt: skip
    print(f"through the bridge: {bridged.answered} answered, {len(bridged.failed)} failed")
    assert len(outcomes) >= 100  # the stream ran through both restarts
    assert not failed, failed
    assert not twice, f"ran twice: {twice}"
    assert bridged.answered >= 100 and not bridged.failed, bridged.failed
