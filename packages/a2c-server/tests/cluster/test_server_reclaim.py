"""Taking a name back after a reconnect, on two real nodes sharing Redis.

A client that lost its node reconnects to another one while its old session still holds
its name: with the same ``auth.a2c_reclaim`` it gets the name back at once, the old session
is removed in the same Lua script and disconnected wherever it still is; anyone else is
refused as before.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from a2c_protocol import NAMESPACE, Event, Role
from a2c_server import Member, ServerSettings
from a2c_server._cluster._redis_store import (
    RedisStateStore,
    connect_redis,
)
from a2c_server._exceptions import SessionReclaimedError, StateConflictError
from a2c_server._state._reclaim import reclaim_key
from a2c_testkit.redis_server import RedisServer
from a2c_testkit.server import (
    RawClient,
    RunningServer,
    connect_raw,
    connect_refusal,
    joined_raw,
    running_nodes,
)
from a2c_testkit.triangle import eventually

SETTINGS = ServerSettings(tool_call_buffer=0.5, node_ttl=1.5)
CALL = {"agent": "alice", "req_id": "r1", "computer": "box", "tool_name": "echo",
        "params": {}, "timeout": 60}  # fmt: skip


@pytest.fixture
async def nodes(redis: RedisServer) -> AsyncIterator[RunningServer]:
    async with running_nodes(redis.url, SETTINGS) as srv:
        yield srv


async def computer(stack: AsyncExitStack, node: RunningServer, secret: str | None) -> RawClient:
    auth = {"a2c_reclaim": secret} if secret is not None else None
    return await stack.enter_async_context(
        connect_raw(node, "computer", auth=auth, transports=["websocket"])
    )


def store_of(node: RunningServer) -> RedisStateStore:
    store = node.app.store
    assert isinstance(store, RedisStateStore)
    return store


async def test_reclaim_same_client_takes_its_name_back_from_a_live_session_on_another_node(
    nodes: RunningServer,
) -> None:
    n0, n1 = nodes.nodes
    secret = secrets.token_urlsafe(32)
    async with AsyncExitStack() as stack:
        alice = await joined_raw(stack, n0, "agent", "alice", "o1")
        old = await computer(stack, n0, secret)
        assert await old.join("computer", "box", "o1") == (True, None)
        await alice.next_notification(Event.NOTIFY_ENTER_OFFICE)

        # Somebody else, or a client without the secret, is refused as before (K4).
        for other in (secrets.token_urlsafe(32), None):
            thief = await computer(stack, n1, other)
            assert await thief.join("computer", "box", "o1") == (
                False, "Name 'box' is already taken in office 'o1'")  # fmt: skip

        # The same client (its old transport half-open, say) takes the name back at once.
        new = await computer(stack, n1, secret)
        assert await new.join("computer", "box", "o1") == (True, None)
        assert await alice.next_notification() == (
            Event.NOTIFY_LEAVE_OFFICE, {"office_id": "o1", "computer": "box"})  # fmt: skip
        assert await alice.next_notification() == (
            Event.NOTIFY_ENTER_OFFICE, {"office_id": "o1", "computer": "box"})  # fmt: skip
        await eventually(lambda: not old.sio.connected, what="old session disconnected")
        new_sid = new.sio.get_sid(NAMESPACE)
        room = await alice.call(Event.LIST_ROOM, {"agent": "alice", "req_id": "l1",
                                                  "office_id": "o1"})  # fmt: skip
        assert isinstance(room, dict)
        assert {(s["name"], s["sid"]) for s in room["sessions"]} == {
            ("alice", alice.sio.get_sid(NAMESPACE)), ("box", new_sid)}  # fmt: skip
        # The old session's disconnect announces nothing: the next notice is the sentinel.
        await joined_raw(stack, n1, "computer", "c3", "o1")
        assert await alice.next_notification() == (
            Event.NOTIFY_ENTER_OFFICE, {"office_id": "o1", "computer": "c3"})  # fmt: skip


async def test_reclaim_agent_takes_its_seat_back(nodes: RunningServer) -> None:
    n0, n1 = nodes.nodes
    secret = secrets.token_urlsafe(32)
    async with AsyncExitStack() as stack:
        auth = {"a2c_reclaim": secret}
        old = await stack.enter_async_context(
            connect_raw(n0, "agent", auth=auth, transports=["websocket"]))  # fmt: skip
        assert await old.join("agent", "alice", "o1") == (True, None)
        other = await stack.enter_async_context(
            connect_raw(n1, "agent", auth={"a2c_reclaim": secrets.token_urlsafe(32)},
                        transports=["websocket"]))  # fmt: skip
        assert await other.join("agent", "bob", "o1") == (False, "Room already has an agent")
        new = await stack.enter_async_context(
            connect_raw(n1, "agent", auth=auth, transports=["websocket"]))  # fmt: skip
        assert await new.join("agent", "alice", "o1") == (True, None)
        assert await store_of(n0).office_agent("o1") == new.sio.get_sid(NAMESPACE)
        await eventually(lambda: not old.sio.connected, what="old Agent session disconnected")


async def test_reclaim_from_a_dead_node_is_at_once_and_its_call_settles(
    nodes: RunningServer,
) -> None:
    n0, n1 = nodes.nodes
    secret = secrets.token_urlsafe(32)
    # A node that registered "box" and was then killed: its heartbeat has not expired yet
    # (60 s), so the reaper would not free the name for a long while.
    ghost = RedisStateStore(connect_redis(_url(n0)), prefix=n0.settings.redis_prefix,
                            node_id="ghost")  # fmt: skip
    old = Member(sid="ghost-sid", role=Role.COMPUTER, a2c_version="0.2.3", name="box",
                 office_id="o1", reclaim=reclaim_key({"a2c_reclaim": secret},
                                                     "anonymous-computer"))  # fmt: skip
    try:
        async with AsyncExitStack() as stack:
            alice = await joined_raw(stack, n0, "agent", "alice", "o1")
            await ghost.heartbeat(60)
            await ghost.put(old)
            pubsub = await _listen_as(n0, "ghost")
            try:
                call = asyncio.ensure_future(alice.call(Event.TOOL_CALL, CALL, timeout=60))
                await asyncio.sleep(0.3)  # the call is out to the ghost node
                new = await computer(stack, n1, secret)
                assert await new.join("computer", "box", "o1") == (True, None)
                answer: Any = await asyncio.wait_for(call, 30)
                assert answer["code"] == 500
                assert answer["details"]["reason"] == "computer_disconnected"
                assert answer["details"]["delivered"] is True
            finally:
                await pubsub.aclose()
            assert (await alice.next_notification())[0] is Event.NOTIFY_LEAVE_OFFICE
            assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
            # The ghost node, back from a pause, cannot put the replaced session back...
            with pytest.raises(SessionReclaimedError):
                await ghost.put(old)
            # ...and when its heartbeat lapses, the reaper has nothing left to announce.
            await ghost.client.delete(f"{{{n0.settings.redis_prefix}}}:node:ghost:alive")
            for node in (n0, n1):
                await node.app.multinode.liveness.tick()  # type: ignore[union-attr]
            await joined_raw(stack, n1, "computer", "c3", "o1")
            assert await alice.next_notification() == (
                Event.NOTIFY_ENTER_OFFICE, {"office_id": "o1", "computer": "c3"})  # fmt: skip
            assert await store_of(n0).sid_of("o1", "box") == new.sio.get_sid(NAMESPACE)
    finally:
        await ghost.client.aclose()


async def test_reclaim_resync_of_the_old_node_does_not_bring_the_session_back(
    nodes: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    n0, n1 = nodes.nodes
    secret = secrets.token_urlsafe(32)
    async with AsyncExitStack() as stack:
        alice = await joined_raw(stack, n1, "agent", "alice", "o1")
        old = await computer(stack, n0, secret)
        assert await old.join("computer", "box", "o1") == (True, None)
        old_sid = old.sio.get_sid(NAMESPACE)
        await alice.next_notification(Event.NOTIFY_ENTER_OFFICE)
        # The disconnect order never reaches n0 (as if cut from Redis when it went out)...
        with monkeypatch.context() as patch:
            patch.setattr(n1.app.sio, "disconnect", _ignore)
            new = await computer(stack, n1, secret)
            assert await new.join("computer", "box", "o1") == (True, None)
        assert (await alice.next_notification())[0] is Event.NOTIFY_LEAVE_OFFICE
        assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
        assert old.sio.connected and old_sid in store_of(n0).local_sessions()
        # ...which still hosts the old member when it resyncs: it stays out, and is ended.
        await n0.app.multinode.liveness.resync(announce=True)  # type: ignore[union-attr]
        assert await store_of(n0).sid_of("o1", "box") == new.sio.get_sid(NAMESPACE)
        await eventually(lambda: not old.sio.connected, what="old session ended by its node")
        assert old_sid not in store_of(n0).local_sessions()
        await joined_raw(stack, n1, "computer", "c3", "o1")
        assert await alice.next_notification() == (
            Event.NOTIFY_ENTER_OFFICE, {"office_id": "o1", "computer": "c3"})  # fmt: skip


@pytest.mark.parametrize("secret", ["short", 42, "not allowed: spaces and colons" * 2])
async def test_reclaim_malformed_secret_is_refused_with_400(
    nodes: RunningServer, secret: object
) -> None:
    refused = await connect_refusal(nodes, {"role": "computer", "a2c_reclaim": secret},
                                    ["websocket"])  # fmt: skip
    assert refused["data"]["code"] == 400
    assert "a2c_reclaim" in refused["data"]["message"]


async def test_redis_take_over_takes_only_the_holders_it_was_given(redis: RedisServer) -> None:
    """The Lua PUT re-checks atomically that the holders are the ones the decision named
    (a lost race): any other holder is a conflict that changes nothing."""
    store = RedisStateStore(connect_redis(redis.url), prefix="take-over", node_id="n")
    reclaim = reclaim_key({"a2c_reclaim": secrets.token_urlsafe(32)}, "anonymous-agent")

    def agent(sid: str) -> Member:
        return Member(sid=sid, role=Role.AGENT, a2c_version="0.2.3", name="bot",
                      office_id="o", reclaim=reclaim)  # fmt: skip

    try:
        old = agent("old")
        await store.put(old)
        for given in ((), ("someone-else",)):
            with pytest.raises(StateConflictError):
                await store.take_over(agent("new"), given)
        assert await store.get("new") is None and await store.office_agent("o") == "old"
        assert await store.take_over(agent("new"), ("old",)) == [old]
        assert await store.sid_of("o", "bot") == "new" and await store.get("old") is None
        assert await store.remove("old") is None  # its office heard it leave already
    finally:
        await store.client.aclose()


async def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


async def _listen_as(node: RunningServer, node_id: str) -> Any:
    """A subscriber on ``node_id``'s channel: a call to its Computer goes out (it was alive)."""
    client = connect_redis(_url(node))
    pubsub = client.pubsub()
    await pubsub.subscribe(f"{node.settings.redis_prefix}:socketio:node:{node_id}")
    await pubsub.get_message(timeout=5)

    class _Closer:
        async def aclose(self) -> None:
            await pubsub.aclose()
            await client.aclose()

    return _Closer()


def _url(node: RunningServer) -> str:
    assert node.settings.redis_url is not None
    return node.settings.redis_url
