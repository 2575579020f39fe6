"""A Redis restart never turns one call into "try again" plus an execution.

Two ``a2c-server --redis`` processes on one private redis-server; the Agent (library,
in-process) talks to node A, a real ``a2c-computer run`` to node B, so every call crosses
nodes. redis-server is stopped while the Computer runs a call and started again empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from a2c_agent import AsyncAgent, CallToolResult, RemoteError, result_text
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

NODE_TTL = 2.0


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


def node(procs: Any, redis: RedisServer, name: str) -> AbstractAsyncContextManager[ServerProcess]:
    return redis_node_process(
        procs.log_dir, redis.url, name, prefix="restart", node_ttl=NODE_TTL, track=procs.track
    )


@contextlib.asynccontextmanager
async def agent_on_a_box_on_b(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> AsyncIterator[tuple[ServerProcess, AsyncAgent]]:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    office = f"office-{uuid.uuid4()}"
    async with (
        node(procs, redis, "A") as a,
        node(procs, redis, "B") as b,
        AsyncAgent(a.url, name="planner") as agent,
    ):
        await agent.join_office(office)
        async with computer_process(procs.log_dir, config=config, office=office, name="box",
                                    server_url=b.url, track=procs.track):  # fmt: skip
            await eventually(lambda: "box" in agent.tools, what="box joined")
            yield a, agent


async def healthz(server: ServerProcess) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=10) as http:
        document: dict[str, Any] = (await http.get(f"{server.url}/healthz")).json()
    return document


async def started(marker: Path) -> bool:
    return marker.exists() and marker.read_text() == "started"


async def slow(agent: AsyncAgent, seconds: float, marker: Path) -> CallToolResult:
    return await agent.call_tool(
        "box", "slow", {"seconds": seconds, "marker": str(marker)}, timeout=60
    )


async def test_redis_restart_mid_call_is_never_answered_try_again(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    async with agent_on_a_box_on_b(procs, tmp_path, redis) as (_, agent):
        marker = tmp_path / "mid.marker"
        call = asyncio.create_task(slow(agent, 8, marker))
        await eventually(lambda: started(marker), what="the tool started on box")
        marker.unlink()  # a second execution would write it again

        redis.stop()
        node_a_log = procs.processes[0].log_path

        async def outage_seen() -> bool:
            # Node A's watch saw the registry go (fixed) or the call already ended (broken).
            return call.done() or "registry lost while a cross-node call" in node_a_log.read_text()

        await eventually(outage_seen, timeout=60, what="node A noticed the outage")
        redis.start()  # empty, like a restart without persistence

        outcome: CallToolResult | RemoteError
        try:
            outcome = await asyncio.wait_for(call, 120)
        except RemoteError as exc:
            outcome = exc
        if isinstance(outcome, RemoteError):
            # Not answered by its Computer: the one outcome must say the call may have run.
            assert outcome.code != 503, f"a delivered call was answered 'try again': {outcome}"
            assert (outcome.details or {}).get("delivered") is True, outcome
        else:
            assert not outcome.is_error and result_text(outcome) == "slept"
        assert not marker.exists(), "the tool ran a second time"


async def test_after_a_redis_restart_a_fresh_cross_node_call_runs_once(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    async with agent_on_a_box_on_b(procs, tmp_path, redis) as (a, agent):
        # A cross-node call before the restart: node A's watch learns the registry epoch.
        first = tmp_path / "first.marker"
        assert result_text(await slow(agent, 1.5, first)) == "slept"

        redis.stop()
        await eventually(lambda: _redis_is(a, "unavailable"), what="node A saw Redis go")
        redis.start()
        await eventually(lambda: _redis_is(a, "ok"), timeout=60, what="node A healthy again")

        # No call before the fresh one: wait until both nodes listen on pub/sub again.
        await eventually(lambda: _both_nodes_listen(redis), timeout=120, what="re-subscribed")

        # Longer than the watch's poll: a stale epoch answered 503 after 0.5 s here. Until the
        # registry has been back for --node-ttl a node answers 503 "not sent" (delivered:
        # false), which a client may retry: only a call that was sent may never be repeated.
        marker = tmp_path / "fresh.marker"
        call = asyncio.create_task(_slow_once_served(agent, 2, marker))
        await eventually(lambda: started(marker), what="the fresh call started on box")
        marker.unlink()
        result = await asyncio.wait_for(call, 60)
        assert not result.is_error and result_text(result) == "slept"
        assert not marker.exists(), "the tool ran a second time"


async def _slow_once_served(agent: AsyncAgent, seconds: float, marker: Path) -> CallToolResult:
    for _ in range(120):
        try:
            return await slow(agent, seconds, marker)
        except RemoteError as exc:
            if exc.code != 503 or (exc.details or {}).get("delivered") is not False:
                raise
            assert not await started(marker), "a call answered 'not sent' ran"
        await asyncio.sleep(0.5)
    raise AssertionError("the registry never served the call")


async def _redis_is(server: ServerProcess, state: str) -> bool:
    return (await healthz(server)).get("redis") == state


async def _both_nodes_listen(redis: RedisServer) -> bool:
    client = Redis.from_url(redis.url)
    try:
        counts = dict(await client.pubsub_numsub(
            "restart:socketio", "restart:socketio:node:A", "restart:socketio:node:B"))  # fmt: skip
    except RedisError:
        return False
    finally:
        await client.aclose()
    return list(counts.values()) == [2, 1, 1]
