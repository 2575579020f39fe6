"""How nodes talk over Redis: node channels and batched publishes.

A call from node-0 to a Computer on node-1 goes on node-1's channel and its ack on
node-0's; broadcasts stay on the shared channel; a node channel nobody hears falls back to
the shared one. The python-socketio internals the manager builds on are pinned here too,
so an upstream change fails a test instead of silently changing routing.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
import socketio
from redis import asyncio as aioredis
from socketio.async_pubsub_manager import AsyncPubSubManager

from a2c_protocol import NAMESPACE, Event, Role
from a2c_server import Member, ServerSettings
from a2c_server._multinode import Publisher, _RedisManager, node_channel
from a2c_server._redis_store import RedisStateStore, connect_redis
from a2c_testkit.redis_server import RedisServer
from a2c_testkit.server import RunningServer, joined_raw, running_nodes

SETTINGS = ServerSettings(tool_call_buffer=0.5, node_ttl=1.5)
CALL = {"agent": "alice", "req_id": "r1", "computer": "c1", "tool_name": "echo",
        "params": {}, "timeout": 30}  # fmt: skip
PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}


# ---------------------------------------------------------------- upstream shape guards


def test_upstream_listener_decodes_what_listen_yields_and_filters_by_host_id() -> None:
    # _RedisManager replaces _listen (two channels) and _publish (addressed channels); the
    # routing is only right while upstream's listener works as below.
    source = inspect.getsource(AsyncPubSubManager._thread)
    assert "self._listen()" in source
    assert "data['method'] == 'callback'" in source
    assert "self._handle_callback(data)" in source
    assert "data.get('host_id') != self.host_id" in source
    handle = inspect.getsource(AsyncPubSubManager._handle_callback)
    assert "self.host_id == message.get('host_id')" in handle
    assert inspect.isasyncgenfunction(_RedisManager._listen)
    assert list(inspect.signature(AsyncPubSubManager._publish).parameters) == [
        "self",
        "data",
    ]


def _manager(locate: dict[str, str] | None = None) -> _RedisManager:
    nodes = locate or {}
    return _RedisManager(
        "redis://127.0.0.1:1/0", channel="t:socketio", node_id="node-0",
        locate=nodes.get, redis_options={},
    )  # fmt: skip


class Captured:
    """Stands in for the publisher: records (channel, message) and answers ``heard``."""

    def __init__(self, heard: int = 1) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.heard = heard

    def publish(self, channel: str, payload: str) -> asyncio.Future[int | None]:
        self.sent.append((channel, json.loads(payload)))
        future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        future.set_result(self.heard if ":node:" in channel else 2)
        return future


def _capture(manager: _RedisManager, heard: int = 1) -> Captured:
    captured = Captured(heard)
    manager._publisher = captured  # type: ignore[assignment]
    return captured


async def test_upstream_emit_with_a_callback_publishes_a_message_we_can_address() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)  # sets manager.server
    captured = _capture(manager)
    await manager.emit("client:tool_call", {"x": 1}, namespace=NAMESPACE, to="sid-b",
                       callback=lambda *a: None)  # fmt: skip
    ((channel, message),) = captured.sent
    assert channel == "t:socketio:node:node-1"
    assert {"method", "room", "skip_sid", "callback", "host_id"} <= message.keys()
    assert (message["method"], message["room"], message["host_id"]) == ("emit", "sid-b", "node-0")
    assert message["callback"] is not None


async def test_upstream_ack_goes_back_on_the_origin_nodes_channel_only() -> None:
    manager = _manager()
    captured = _capture(manager)
    await manager._return_callback("node-7", "sid-a", NAMESPACE, 3, {"ok": True})
    ((channel, message),) = captured.sent
    assert channel == node_channel("t:socketio", "node-7")
    assert (message["method"], message["host_id"], message["id"]) == ("callback", "node-7", 3)


async def test_broadcasts_and_unknown_sids_stay_on_the_shared_channel() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)
    captured = _capture(manager)
    await manager.emit("notify:x", {}, namespace=NAMESPACE, room="office-1", skip_sid="sid-a")
    await manager.emit("notify:y", {}, namespace=NAMESPACE, to="sid-b")  # no callback
    await manager.emit("client:z", {}, namespace=NAMESPACE, to="sid-unknown",
                       callback=lambda *a: None)  # fmt: skip
    assert [channel for channel, _ in captured.sent] == ["t:socketio"] * 3


async def test_a_node_channel_nobody_hears_falls_back_to_the_shared_channel() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)
    captured = _capture(manager, heard=0)
    await manager.emit("client:tool_call", {}, namespace=NAMESPACE, to="sid-b",
                       callback=lambda *a: None)  # fmt: skip
    channels = [channel for channel, _ in captured.sent]
    assert channels == ["t:socketio:node:node-1", "t:socketio"]
    assert captured.sent[0][1] == captured.sent[1][1]


async def test_redis_py_path_builds_its_clients_on_connect() -> None:
    manager = _manager()
    manager._redis_connect()
    assert manager.redis is not None and manager.pubsub is not None
    await manager.aclose()


# ------------------------------------------------------------------------- publisher


class FlakyTransport:
    """A publish transport that fails ``failures`` times, then records batches."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.batches: list[list[tuple[str, str]]] = []
        self.closed = False

    async def send(self, batch: list[tuple[str, str]]) -> list[int]:
        await asyncio.sleep(0)
        if self.failures:
            self.failures -= 1
            raise ConnectionError("Redis went away")
        self.batches.append(batch)
        return [1] * len(batch)

    async def aclose(self) -> None:
        self.closed = True


async def test_publisher_sends_concurrent_publishes_together_in_order() -> None:
    transport = FlakyTransport()
    publisher = Publisher(transport)
    results = await asyncio.gather(
        *(publisher.publish("a" if i % 2 else "b", str(i)) for i in range(20))
    )
    assert results == [1] * 20
    sent = [payload for batch in transport.batches for _, payload in batch]
    assert sent == [str(i) for i in range(20)]
    assert len(transport.batches) < 20
    await publisher.aclose()
    assert transport.closed


async def test_publisher_retries_once_and_logs_the_cause(caplog: pytest.LogCaptureFixture) -> None:
    transport = FlakyTransport(failures=1)
    publisher = Publisher(transport)
    with caplog.at_level(logging.WARNING, logger="a2c_server.multinode"):
        assert await publisher.publish("ch", "m") == 1
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "retrying" in record.getMessage()
    assert "Redis went away" in record.getMessage()


async def test_publisher_gives_up_loudly(caplog: pytest.LogCaptureFixture) -> None:
    transport = FlakyTransport(failures=2)
    publisher = Publisher(transport)
    with caplog.at_level(logging.WARNING, logger="a2c_server.multinode"):
        assert await asyncio.gather(publisher.publish("ch", "m1"), publisher.publish("ch", "m2"))
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    text = errors[0].getMessage()
    assert "giving up" in text and "messages=2" in text and "Redis went away" in text


async def test_publisher_gives_up_with_none_after_two_failures() -> None:
    publisher = Publisher(FlakyTransport(failures=2))
    assert await publisher.publish("ch", "m") is None


# ------------------------------------------------------------- two real nodes on Redis


@pytest.fixture
async def nodes(redis: RedisServer) -> AsyncIterator[RunningServer]:
    async with running_nodes(redis.url, SETTINGS) as srv:
        yield srv


class Spy:
    """Every message published on ``channels``, with its channel.

    It subscribes to each channel by name: PUBLISH counts pattern subscribers as listeners
    too, so a pattern would make every node channel look heard.
    """

    def __init__(self, url: str, channels: list[str]) -> None:
        self.client = aioredis.Redis.from_url(url)
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        self.channels = channels
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Spy:
        await self.pubsub.subscribe(*self.channels)
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def _run(self) -> None:
        async for message in self.pubsub.listen():
            if message["type"] == "message":
                self.seen.append((message["channel"].decode(), json.loads(message["data"])))

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self.pubsub.aclose()
        await self.client.aclose()

    def methods_on(self, channel: str) -> list[str]:
        return [m["method"] for c, m in self.seen if c == channel]


async def test_a_cross_node_call_and_its_ack_use_the_node_channels(
    nodes: RunningServer, redis: RedisServer
) -> None:
    n0, n1 = nodes.nodes
    prefix = n0.settings.redis_prefix
    shared = f"{prefix}:socketio"
    async with AsyncExitStack() as stack:
        alice = await joined_raw(stack, n0, "agent", "alice", "o1")
        c1 = await joined_raw(stack, n1, "computer", "c1", "o1")

        async def answer(payload: Any) -> dict[str, Any]:
            return PONG

        c1.sio.on(Event.TOOL_CALL.value, answer, namespace=NAMESPACE)
        assert (await alice.next_notification(Event.NOTIFY_ENTER_OFFICE))[1] == {
            "office_id": "o1",
            "computer": "c1",
        }
        channels = [shared, node_channel(shared, "node-0"), node_channel(shared, "node-1")]
        spy = await stack.enter_async_context(Spy(redis.url, channels))
        assert await alice.call(Event.TOOL_CALL, CALL) == PONG
        assert spy.methods_on(node_channel(shared, "node-1")) == ["emit"]
        assert spy.methods_on(node_channel(shared, "node-0")) == ["callback"]
        assert "emit" not in spy.methods_on(shared) and "callback" not in spy.methods_on(shared)
        # A broadcast still reaches every node on the shared channel.
        await joined_raw(stack, n1, "computer", "c2", "o1")
        assert (await alice.next_notification(Event.NOTIFY_ENTER_OFFICE))[1] == {
            "office_id": "o1",
            "computer": "c2",
        }
        assert "emit" in spy.methods_on(shared)


async def test_a_call_to_a_node_nobody_hears_goes_on_the_shared_channel_instead(
    nodes: RunningServer, redis: RedisServer
) -> None:
    n0 = nodes.nodes[0]
    prefix = n0.settings.redis_prefix
    shared = f"{prefix}:socketio"
    # A session registered by a node that does not listen (gone, or without node channels).
    ghost = RedisStateStore(connect_redis(redis.url), prefix=prefix, node_id="ghost")
    try:
        await ghost.heartbeat(60)
        await ghost.put(Member(sid="ghost-sid", role=Role.COMPUTER, a2c_version="0.2.3",
                               name="c1", office_id="o1"))  # fmt: skip
        async with AsyncExitStack() as stack:
            alice = await joined_raw(stack, n0, "agent", "alice", "o1")
            spy = await stack.enter_async_context(Spy(redis.url, [shared]))
            answer = await alice.call(Event.TOOL_CALL, {**CALL, "timeout": 1})
            assert isinstance(answer, dict) and answer["code"] == 408
            # Published on the ghost's channel first (nobody heard it), then shared.
            rooms = [m.get("room") for c, m in spy.seen if c == shared and m["method"] == "emit"]
            assert "ghost-sid" in rooms
    finally:
        await ghost.client.aclose()
