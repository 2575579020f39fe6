"""The console sees the cluster: ``a2c-agent watch --console`` on node B follows an office
whose Agent and Computer are both on node A, with real processes (two ``a2c-server
--redis --console`` nodes, a real redis-server, ``a2c-computer run``, the ``a2c-agent``
command). Before, node B's feed carried only what node B relayed: nothing of that office."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from a2c_agent import AsyncAgent, result_text
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.redis_server import redis_server
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    server_process,
    write_config,
)
from a2c_testkit.watch_console import watching

ADMIN = "console-admin-token-for-cluster-4b2e"


@contextlib.asynccontextmanager
async def console_node(
    procs: Any, redis_url: str, prefix: str, node_id: str
) -> AsyncIterator[ServerProcess]:
    args = ["--redis", redis_url, "--redis-prefix", prefix, "--node-id", node_id,
            "--console", "--admin-token", ADMIN]  # fmt: skip
    async with server_process(procs.log_dir, name=f"node-{node_id}", track=procs.track,
                              extra_args=args) as node:  # fmt: skip
        yield node


async def test_watch_console_on_one_node_sees_a_call_relayed_by_another(
    procs: Any, tmp_path: Path
) -> None:
    office = f"office-{uuid.uuid4().hex[:8]}"
    prefix = f"console-{uuid.uuid4().hex[:8]}"
    config = write_config(tmp_path / "computer.json", [stdio_server_config("plain", "plain")])
    with redis_server() as redis:
        async with (
            console_node(procs, redis.url, prefix, "a") as node_a,
            console_node(procs, redis.url, prefix, "b") as node_b,
            AsyncAgent(node_a.url, name="planner") as agent,
            computer_process(procs.log_dir, config=config, server_url=node_a.url,
                             office=office, name="box", track=procs.track, confirm="allow"),
        ):  # fmt: skip
            await agent.join_office(office)
            await eventually(lambda: agent.tools.get("box"), what="box joined")
            async with watching(node_b.url, office, A2C_ADMIN_TOKEN=ADMIN) as watcher:
                # Node B lists the office from the shared registry from the start.
                await eventually(lambda: "planner (agent)" in watcher.err and "box (computer)"
                                 in watcher.err, timeout=60, what="B's first state")  # fmt: skip

                def echoed() -> bool:
                    return any(line["event"] == "call" and line["data"].get("tool") == "echo"
                               for line in watcher.lines)  # fmt: skip

                # Node A learns within a second or so that someone watches on another node
                # (it asks Redis once a second); calls before that are not published.
                for _ in range(120):
                    result = await agent.call_tool("box", "echo", {"text": "hi"}, timeout=30)
                    assert result_text(result) == "plain:echo:hi"
                    with contextlib.suppress(TimeoutError):
                        await eventually(echoed, timeout=1, what="a call line")
                    if echoed():
                        break
                assert echoed(), watcher.err
                # Office events of node A reach it too, once A publishes.
                async with computer_process(
                    procs.log_dir, config=config, server_url=node_a.url, office=office,
                    name="box2", track=procs.track, confirm="allow",
                ):  # fmt: skip
                    await eventually(lambda: agent.tools.get("box2"), what="box2 joined")
                    await eventually(
                        lambda: any(line["event"] == "notify:enter_office"
                                    and line["data"].get("computer") == "box2"
                                    for line in watcher.lines),
                        timeout=60, what="box2's enter line on node B",
                    )  # fmt: skip
            call = next(line for line in watcher.lines if line["event"] == "call"
                        and line["data"].get("tool") == "echo")  # fmt: skip
            assert call["data"]["computer"] == "box" and call["data"]["agent"] == "planner"
            assert call["data"]["outcome"] == "ok"
            assert "hi" not in str(watcher.lines)  # names only, across nodes as on one
            assert "Traceback" not in watcher.err
    await asyncio.sleep(0)
