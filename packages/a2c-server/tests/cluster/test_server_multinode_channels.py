"""How nodes talk over Redis: node channels and batched publishes.

A call from node-0 to a Computer on node-1 goes on node-1's channel and its ack on
node-0's; broadcasts stay on the shared channel; a call to a node whose channel nobody
hears is answered 503 without being sent. The python-socketio internals the manager builds on are pinned here too,
so an upstream change fails a test instead of silently changing routing.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
import socketio
from redis import asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from socketio.async_pubsub_manager import AsyncPubSubManager

from a2c_protocol import NAMESPACE, Event, Role
from a2c_server import Member, ServerSettings, StoreUnavailableError
from a2c_server._cluster._multinode import _RedisManager, node_channel
from a2c_server._cluster._publish import Audience, Publisher, ReplylessPublish
from a2c_server._cluster._redis_store import RedisStateStore, connect_redis
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
    """Stands in for the publisher: records (channel, message); node channels are ``heard``."""

    def __init__(self, heard: bool = True) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.node_channels_heard = heard
        # What a call checks before it goes out (a2c_server._cluster._recovery.require_listener).
        self.audience = Audience(ttl=3600)
        self.audience.learn("t:socketio:node:node-1", 1 if heard else 0, time.monotonic())

    async def heard(self, channel: str) -> bool:
        return self.node_channels_heard

    def publish(self, channel: str, payload: str) -> None:
        self.sent.append((channel, json.loads(payload)))


def _capture(manager: _RedisManager, heard: bool = True) -> Captured:
    captured = Captured(heard)
    manager._publisher = captured  # type: ignore[assignment]
    manager.listening = True  # as once its listener has subscribed
    return captured


async def test_upstream_emit_with_a_callback_publishes_a_message_we_can_address() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)  # sets manager.server
    captured = _capture(manager)
    await manager.emit("client:tool_call", {"x": 1}, namespace=NAMESPACE, to="sid-b",
                       callback=lambda *a: None)  # fmt: skip
    ((channel, message),) = captured.sent
    assert channel == "t:socketio:node:node-1"
    assert {"method", "room", "callback", "host_id"} <= message.keys()
    assert "skip_sid" not in message  # None fields stay out: receivers read them with .get()
    assert (message["method"], message["room"], message["host_id"]) == ("emit", "sid-b", "node-0")
    assert message["callback"] is not None


async def test_a_remote_call_with_bytes_takes_upstreams_binary_path() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)
    captured = _capture(manager)
    await manager.emit("client:x", {"blob": b"\x00\x01"}, namespace=NAMESPACE, to="sid-b",
                       callback=lambda *a: None)  # fmt: skip
    ((channel, message),) = captured.sent
    assert channel == "t:socketio:node:node-1"
    assert message["binary"] is True  # the bytes travel as upstream's attachments
    # one callback registered: the fast path's is withdrawn before upstream's is made
    assert [key for key in manager.callbacks["sid-b"] if key != 0] == [message["callback"][2]]


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


async def test_a_call_to_a_node_channel_nobody_hears_is_refused_unsent() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)
    captured = _capture(manager, heard=False)
    with pytest.raises(StoreUnavailableError, match="node-1 is not listening"):
        await manager.emit("client:tool_call", {}, namespace=NAMESPACE, to="sid-b",
                           callback=lambda *a: None)  # fmt: skip
    assert captured.sent == []
    assert manager.callbacks.get("sid-b", {}) == {}  # no ack left waiting


async def test_a_call_while_this_node_does_not_listen_is_refused_unsent() -> None:
    manager = _manager({"sid-b": "node-1"})
    socketio.AsyncServer(client_manager=manager)
    captured = _capture(manager)
    manager.listen_failed(ConnectionError("Redis went away"), 0.1)
    with pytest.raises(StoreUnavailableError, match="not receiving"):
        await manager.emit("client:tool_call", {}, namespace=NAMESPACE, to="sid-b",
                           callback=lambda *a: None)  # fmt: skip
    assert captured.sent == []


async def test_redis_py_path_builds_its_clients_on_connect() -> None:
    manager = _manager()
    manager._redis_connect()
    assert manager.redis is not None and manager.pubsub is not None
    await manager.aclose()


# ------------------------------------------------------------------------- publisher


class FlakyTransport:
    """A publish transport that cannot connect ``failures`` times, and whose next
    ``write_failures`` writes fail; it records the batches written. Like the real one, it
    writes at once (``write_now``) only while nothing is failing."""

    def __init__(self, failures: int = 0, subscribers: int = 1, write_failures: int = 0) -> None:
        self.failures = failures
        self.write_failures = write_failures
        self.batches: list[list[tuple[str, str]]] = []
        self.counts = subscribers
        self.asked: list[str] = []
        self.closed = False

    async def ready(self) -> None:
        await asyncio.sleep(0)
        if self.failures:
            self.failures -= 1
            raise ConnectionError("Redis went away")

    def write_now(self, batch: list[tuple[str, str]]) -> bool:
        if self.failures or self.write_failures:
            return False
        self.batches.append(batch)
        return True

    async def send(self, batch: list[tuple[str, str]]) -> None:
        if self.write_failures:
            self.write_failures -= 1
            raise ConnectionError("Connection reset by peer")
        self.batches.append(batch)

    async def subscribers(self, channel: str) -> int:
        self.asked.append(channel)
        if self.failures:
            raise ConnectionError("Redis went away")
        return self.counts

    async def aclose(self) -> None:
        self.closed = True

    @property
    def sent(self) -> list[str]:
        return [payload for batch in self.batches for _, payload in batch]


async def test_publisher_writes_what_queued_meanwhile_together_in_order() -> None:
    transport = FlakyTransport()
    publisher = Publisher(transport)
    for i in range(20):
        publisher.publish("a" if i % 2 else "b", str(i))
        if i == 9:
            await asyncio.sleep(0)  # the first flush starts with what is queued so far
    await publisher.flushed()
    assert transport.sent == [str(i) for i in range(20)]
    assert len(transport.batches) == 2
    await publisher.aclose()
    assert transport.closed


async def flush(
    transport: FlakyTransport, caplog: pytest.LogCaptureFixture, *payloads: str
) -> tuple[Publisher, list[logging.LogRecord]]:
    """Publish ``payloads`` on one channel, wait for the flush; the publisher and the log."""
    publisher = Publisher(transport)
    with caplog.at_level(logging.WARNING, logger="a2c_server.multinode"):
        for payload in payloads:
            publisher.publish("ch", payload)
        await publisher.flushed()
    return publisher, list(caplog.records)


async def test_publisher_retries_once_and_logs_the_cause(caplog: pytest.LogCaptureFixture) -> None:
    transport = FlakyTransport(failures=1)
    _, (record,) = await flush(transport, caplog, "m")
    assert transport.sent == ["m"]
    assert record.levelno == logging.WARNING
    assert "retrying" in record.getMessage()
    assert "Redis went away" in record.getMessage()


async def test_publisher_gives_up_loudly_and_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    transport = FlakyTransport(failures=2)
    publisher, records = await flush(transport, caplog, "m1", "m2")
    errors = [r for r in records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    text = errors[0].getMessage()
    assert "giving up" in text and "messages=2" in text and "Redis went away" in text
    publisher.publish("ch", "m3")  # the next message is not held back by the lost ones
    await publisher.flushed()
    assert transport.sent == ["m3"]


async def test_publisher_never_writes_a_batch_twice(caplog: pytest.LogCaptureFixture) -> None:
    # A write that failed may have reached Redis in part: writing it again could deliver
    # a tool call twice, so it is logged as possibly lost instead.
    transport = FlakyTransport(write_failures=1)
    publisher, (record,) = await flush(transport, caplog, "call")
    assert transport.sent == []
    assert record.levelno == logging.ERROR
    text = record.getMessage()
    assert "may be lost" in text and "messages=1" in text and "reset by peer" in text
    publisher.publish("ch", "next")
    await publisher.flushed()
    assert transport.sent == ["next"]


async def test_publisher_close_lets_queued_messages_leave_first() -> None:
    transport = FlakyTransport()
    publisher = Publisher(transport)
    publisher.publish("ch", "last words")
    await publisher.aclose()
    assert transport.sent == ["last words"] and transport.closed


def test_audience_remembers_an_answer_for_its_ttl_only() -> None:
    audience = Audience(ttl=1.0)
    assert audience.heard("n1", now=10.0) is None
    audience.learn("n1", 2, now=10.0)
    audience.learn("n2", 0, now=10.0)
    assert audience.heard("n1", now=10.9) is True
    assert audience.heard("n2", now=10.9) is False
    assert audience.heard("n1", now=11.0) is None


async def test_publisher_asks_who_listens_once_per_ttl() -> None:
    transport = FlakyTransport(subscribers=0)
    publisher = Publisher(transport, audience=Audience(ttl=60.0))
    assert [await publisher.heard("n1") for _ in range(3)] == [False, False, False]
    assert transport.asked == ["n1"]


async def test_publisher_assumes_a_channel_is_heard_when_redis_cannot_say() -> None:
    # The publish that follows fails the same way, and that is where it is logged.
    transport = FlakyTransport(failures=1, subscribers=0)
    publisher = Publisher(transport)
    assert await publisher.heard("n1") is True
    transport.failures = 0
    assert await publisher.heard("n1") is False  # the failure was not remembered


# ------------------------------------------------------------- replyless publishing


async def test_replyless_publish_delivers_counts_and_survives_a_killed_connection(
    redis: RedisServer,
) -> None:
    listener = aioredis.Redis.from_url(redis.url)
    pubsub = listener.pubsub(ignore_subscribe_messages=True)
    transport = ReplylessPublish(redis.url)
    try:
        await pubsub.subscribe("ch")
        assert await transport.subscribers("ch") == 1
        assert await transport.subscribers("nobody") == 0

        async def received(count: int) -> list[bytes]:
            # get_message answers None for the (ignored) subscribe confirmation too.
            got: list[bytes] = []
            deadline = asyncio.get_running_loop().time() + 10.0
            while len(got) < count and asyncio.get_running_loop().time() < deadline:
                message = await pubsub.get_message(timeout=1.0)
                if message is not None:
                    got.append(message["data"])
            return got

        assert transport.write_now([("ch", "zero")]) is False  # not connected: not written
        await transport.ready()
        assert transport.write_now([("ch", "one"), ("ch", "two")]) is True
        assert await received(2) == [b"one", b"two"]
        # The commands are packed here, not by redis-py: lengths count UTF-8 bytes, and a
        # payload may hold what RESP itself is made of.
        odd = [("ch", "zwölf €"), ("ch", b'{"a":"\r\n$3\r\n*1"}'), ("ch", ""), ("kanäl", "x")]
        assert transport.write_now(odd) is True
        assert await received(3) == ["zwölf €".encode(), b'{"a":"\r\n$3\r\n*1"}', b""]
        assert transport.write_now([("ch", "after")]) is True  # Redis read it all as commands
        assert await received(1) == [b"after"]
        # Redis closes the publisher's connection: the next batch goes on a new one.
        name = "a2c-replyless-test"
        await transport._conn.send_command("CLIENT", "SETNAME", name)
        clients = await listener.client_list()
        (victim,) = [c for c in clients if c.get("name") == name]
        await listener.client_kill_filter(_id=victim["id"])
        for _ in range(500):  # until the end of the stream reaches the publisher's reader
            if transport._conn._reader.at_eof():
                break
            await asyncio.sleep(0.01)
        assert transport.write_now([("ch", "into a closed socket")]) is False
        await transport.ready()
        await transport.send([("ch", "three")])
        assert await received(1) == [b"three"]
    finally:
        await transport.aclose()
        await pubsub.aclose()
        await listener.aclose()


def test_redis_py_connection_internals_the_publisher_and_the_lookups_use() -> None:
    # ReplylessPublish.ready checks the connection's stream reader for the end of
    # the stream, and _mux.Multiplexer writes to its stream writer without awaiting;
    # redis-py has no public way to do either.
    source = inspect.getsource(AbstractConnection)
    assert "self._reader" in source and "self._writer" in source
    assert "def is_connected" in source


@pytest.mark.parametrize("protocol", [2, 3])
async def test_the_listener_yields_messages_of_both_channels_over_resp2_and_resp3(
    redis: RedisServer, protocol: int
) -> None:
    # The manager asks for RESP2; a URL may still ask for RESP3, where messages are push
    # notifications that read_response would otherwise skip.
    url = f"{redis.url}?protocol={protocol}"
    manager = _RedisManager(url, channel="p:socketio", node_id="node-0", locate={}.get,
                            redis_options={})  # fmt: skip
    publisher = aioredis.Redis.from_url(redis.url)
    received: list[Any] = []

    async def listen() -> None:
        async for batch in manager._listen():  # what one socket read brought
            received.extend(batch)

    task = asyncio.get_running_loop().create_task(listen())
    try:
        for _ in range(500):  # until both subscriptions are in place
            counts = dict(await publisher.pubsub_numsub("p:socketio", manager.node_channel))
            if all(counts.values()):
                break
            await asyncio.sleep(0.01)
        await publisher.publish("p:socketio:other", "not ours")
        await publisher.publish(manager.node_channel, "to this node")
        await publisher.publish("p:socketio", "to every node")
        for _ in range(500):
            if len(received) == 2:
                break
            await asyncio.sleep(0.01)
        assert received == [b"to this node", b"to every node"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await manager.aclose()
        await publisher.aclose()


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


async def test_a_call_to_a_node_nobody_hears_is_answered_503_at_once_and_not_sent(
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
            # Nobody subscribes to the ghost's node channel: published, the call would wait
            # out its timeout unheard. Not sent: trying again is safe.
            assert isinstance(answer, dict) and answer["code"] == 503, answer
            assert answer["details"] == {"reason": "registry_unavailable", "delivered": False}
            rooms = [m.get("room") for c, m in spy.seen if m.get("method") == "emit"]
            assert "ghost-sid" not in rooms
    finally:
        await ghost.client.aclose()
