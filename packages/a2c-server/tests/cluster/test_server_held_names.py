"""A graceful shutdown keeps its Computers' names for their return (``_state._absent`` A6).

Two nodes on one Redis: a Computer on node 0, an Agent on node 1. Node 0 drains (as on
SIGTERM): its sessions hear the shutdown notice, and the Computer it cuts keeps its name
for ``--node-ttl`` seconds, so the Agent's call is refused unsent with a 503 the SDK waits
on, never a 404; when the Computer joins again (on node 1) the call goes through and the
hold is gone. A Computer that leaves any other way is a 404 at once, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from a2c_protocol import NAMESPACE, Event, ExtensionEvent
from a2c_server import ServerSettings
from a2c_server._cluster._redis_store import RedisStateStore
from a2c_testkit.redis_server import RedisServer
from a2c_testkit.server import RawClient, RunningServer, echo_computer, joined_raw, running_nodes
from a2c_testkit.triangle import eventually

# A hold longer than any wait of the test (it is --node-ttl): the 503 is seen in time.
SETTINGS = ServerSettings(tool_call_buffer=0.5, node_ttl=20.0)
CALL = {"agent": "alice", "req_id": "r1", "computer": "c1", "tool_name": "echo",
        "params": {}, "timeout": 10}  # fmt: skip


@pytest.fixture
async def nodes(redis: RedisServer) -> AsyncIterator[RunningServer]:
    async with running_nodes(redis.url, SETTINGS) as srv:
        yield srv


def store_of(node: RunningServer) -> RedisStateStore:
    store = node.app.store
    assert isinstance(store, RedisStateStore)
    return store


async def test_a_computer_cut_by_a_graceful_shutdown_is_waited_for_not_404(
    nodes: RunningServer,
) -> None:
    leaving, staying = nodes.nodes
    async with AsyncExitStack() as stack:
        agent = await joined_raw(stack, staying, "agent", "alice", "o1")
        box = await joined_raw(stack, leaving, "computer", "c1", "o1")
        told: asyncio.Queue[Any] = asyncio.Queue()
        box.sio.on(ExtensionEvent.NOTIFY_SESSION_EXPIRED.value, told.put, namespace=NAMESPACE)
        echo_computer(box)

        await leaving.app.drain.drain(0.0)  # SIGTERM's drain: nothing in flight
        assert await asyncio.wait_for(told.get(), 10) == {"reason": "server shutting down"}
        sid = box.sio.get_sid(NAMESPACE)
        await leaving.app.sio.disconnect(sid, namespace=NAMESPACE)  # the connections close
        await eventually(lambda: not box.sio.connected, what="the Computer cut")

        answer = await agent.call(Event.TOOL_CALL, CALL)
        assert isinstance(answer, dict), answer
        assert answer["code"] == 503, answer
        assert answer["details"] == {"computer_name": "c1", "reason": "computer_returning",
                                     "delivered": False}  # fmt: skip
        assert "reconnecting" in answer["message"] and "not sent" in answer["message"]
        held = await store_of(staying).held_for("o1", "c1")
        assert held is not None and 0 < held <= SETTINGS.node_ttl

        back = await joined_raw(stack, staying, "computer", "c1", "o1")  # it returns
        echo_computer(back)
        answer = await agent.call(Event.TOOL_CALL, {**CALL, "req_id": "r2"})
        assert answer == {"content": [{"type": "text", "text": "pong"}], "isError": False}
        assert await store_of(staying).held_for("o1", "c1") is None  # the join ended it


async def test_a_computer_that_left_without_a_shutdown_is_404_at_once(
    nodes: RunningServer,
) -> None:
    first, second = nodes.nodes
    async with AsyncExitStack() as stack:
        agent = await joined_raw(stack, second, "agent", "alice", "o1")
        box = await joined_raw(stack, first, "computer", "c1", "o1")
        await first.app.sio.disconnect(box.sio.get_sid(NAMESPACE), namespace=NAMESPACE)
        await eventually(lambda: not box.sio.connected, what="the Computer gone")
        await eventually(lambda: _not_found(agent), what="a 404 for a Computer that left")
        assert await store_of(second).held_for("o1", "c1") is None


async def test_a_hold_ends_with_its_time_then_the_name_is_404(nodes: RunningServer) -> None:
    node = nodes.nodes[1]
    async with AsyncExitStack() as stack:
        agent = await joined_raw(stack, node, "agent", "alice", "o1")
        await store_of(node).hold_name("o1", "c1", 0.3)
        answer = await agent.call(Event.TOOL_CALL, CALL)
        assert isinstance(answer, dict) and answer["code"] == 503, answer
        await eventually(lambda: _not_found(agent), what="the hold over")


async def _not_found(agent: RawClient) -> bool:
    answer = await agent.call(Event.TOOL_CALL, CALL)
    return isinstance(answer, dict) and answer.get("code") == 404
