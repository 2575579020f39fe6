"""Several Server nodes on one Redis: races, dead nodes, and Redis going away.

The rest of the server suite already runs on two Redis nodes (see conftest.py); these are
the situations only several nodes have.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import AsyncExitStack
from typing import Any

import attrs
import pytest
from redis import asyncio as aioredis

from a2c_protocol import NAMESPACE, Event, Role
from a2c_server import Member, ServerSettings
from a2c_server._cluster._redis_store import RedisStateStore, connect_redis
from a2c_server._state._rules import ROOM_HAS_AGENT
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.server import (
    RunningServer,
    connect_raw,
    echo_computer,
    joined_raw,
    running_nodes,
)
from a2c_testkit.triangle import eventually

SETTINGS = ServerSettings(tool_call_buffer=0.5, node_ttl=1.5)
CALL = {"agent": "alice", "req_id": "r1", "computer": "c1", "tool_name": "echo",
        "params": {}, "timeout": 60}  # fmt: skip


@pytest.fixture
async def nodes(redis: RedisServer) -> AsyncIterator[RunningServer]:
    async with running_nodes(redis.url, SETTINGS) as srv:
        yield srv


@pytest.fixture
async def patient_nodes(redis: RedisServer) -> AsyncIterator[RunningServer]:
    """Two nodes whose registry commands may wait 5 s: both nodes and every client share
    this test's event loop, so a burst of joins on a loaded machine can keep Redis's answers
    unread past the default 0.5 s (seen once in a full suite on 2 cores)."""
    settings = attrs.evolve(SETTINGS, registry_timeout=5.0)
    async with running_nodes(redis.url, settings) as srv:
        yield srv


@contextlib.asynccontextmanager
async def ghost_listens(node: RunningServer) -> AsyncIterator[None]:
    """The ghost node's channel has a subscriber, as a live node's has (calls go out)."""
    client = aioredis.Redis.from_url(SETTINGS_URL(node))
    pubsub = client.pubsub()
    await pubsub.subscribe(f"{node.settings.redis_prefix}:socketio:node:ghost")
    await pubsub.get_message(timeout=5)  # the confirmation
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            await pubsub.aclose()
        with contextlib.suppress(Exception):
            await client.aclose()


def store_of(node: RunningServer) -> RedisStateStore:
    store = node.app.store
    assert isinstance(store, RedisStateStore)
    return store


async def test_multinode_fifty_agents_race_for_one_seat_exactly_one_wins(
    patient_nodes: RunningServer,
) -> None:
    nodes = patient_nodes
    async with AsyncExitStack() as stack:
        agents = [
            await stack.enter_async_context(
                connect_raw(nodes.nodes[i % 2], "agent", transports=["websocket"])
            )
            for i in range(50)
        ]
        answers = await asyncio.gather(
            *(a.join("agent", f"agent-{i}", "contested") for i, a in enumerate(agents))
        )
        winners = [i for i, answer in enumerate(answers) if answer == (True, None)]
        assert len(winners) == 1, answers
        assert all(answers[i] == (False, ROOM_HAS_AGENT) for i in range(50) if i not in winners)
        # The registry agrees with the acks, from either node.
        winner_sid = agents[winners[0]].sio.get_sid(NAMESPACE)
        for node in nodes.nodes:
            store = store_of(node)
            assert await store.office_agent("contested") == winner_sid
            assert [m.sid for m in await store.office_members("contested")] == [winner_sid]
            for i in range(50):
                owner = await store.sid_of("contested", f"agent-{i}")
                assert owner == (winner_sid if i == winners[0] else None)
        assert (await nodes.app.health())["offices"] == 1


async def test_multinode_names_are_unique_in_an_office_across_nodes(
    nodes: RunningServer,
) -> None:
    async with AsyncExitStack() as stack:
        await joined_raw(stack, nodes.nodes[0], "computer", "twin", "o1")
        other = await stack.enter_async_context(connect_raw(nodes.nodes[1], "computer"))
        assert await other.join("computer", "twin", "o1") == (
            False,
            "Name 'twin' is already taken in office 'o1'",
        )
        # Another office is no conflict: names are per office.
        assert await other.join("computer", "twin", "o2") == (True, None)


async def test_multinode_dead_node_is_reaped_once_and_its_pending_call_settles(
    nodes: RunningServer,
) -> None:
    n0, n1 = nodes.nodes
    # A third node that registers a Computer and then falls silent (a kill -9 in effect).
    ghost = RedisStateStore(
        connect_redis(SETTINGS_URL(n0)), prefix=n0.settings.redis_prefix, node_id="ghost"
    )
    try:
        async with AsyncExitStack() as stack:
            alice = await joined_raw(stack, n0, "agent", "alice", "o1")
            watcher = await joined_raw(stack, n1, "computer", "c2", "o1")
            await stack.enter_async_context(ghost_listens(n0))
            await ghost.heartbeat(0.3)
            await ghost.put(Member(sid="ghost-sid", role=Role.COMPUTER, a2c_version="0.2.3",
                                   name="c1", office_id="o1"))  # fmt: skip
            # alice's call to the ghost's Computer is waiting for an answer that never comes.
            call = asyncio.ensure_future(alice.call(Event.TOOL_CALL, CALL, timeout=60))
            for client in (alice, watcher):
                assert await client.next_notification(Event.NOTIFY_LEAVE_OFFICE) == (
                    Event.NOTIFY_LEAVE_OFFICE,
                    {"office_id": "o1", "computer": "c1"},
                )
            answer = await asyncio.wait_for(call, 60)
            assert isinstance(answer, dict) and answer["code"] == 500
            assert answer["details"]["reason"] == "computer_disconnected"
            # Exactly once: both survivors tick again, nothing is left to reap...
            for node in (n0, n1):
                liveness = node.app.multinode.liveness  # type: ignore[union-attr]
                await liveness.tick()
                assert await store_of(node).reap_dead() == []
            assert await store_of(n0).sid_of("o1", "c1") is None
            # ...and the next notification anyone gets is the sentinel, not a second leave.
            await joined_raw(stack, n1, "computer", "c3", "o1")
            for client in (alice, watcher):
                assert (await client.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
    finally:
        await ghost.client.aclose()


def SETTINGS_URL(node: RunningServer) -> str:
    assert node.settings.redis_url is not None
    return node.settings.redis_url


async def test_multinode_restart_with_the_same_node_id_starts_clean(
    redis: RedisServer,
) -> None:
    settings = ServerSettings(node_ttl=60)
    prefix = "restart-test"
    async with (
        running_nodes(redis.url, settings, count=1, prefix=prefix) as first,
        AsyncExitStack() as stack,
    ):
        await joined_raw(stack, first, "computer", "c1", "o1")
    # A crash would leave c1 behind; simulate it with a store write under the same id.
    stale = RedisStateStore(connect_redis(redis.url), prefix=prefix, node_id="node-0")
    try:
        await stale.put(Member(sid="stale", role=Role.COMPUTER, a2c_version="0.2.3",
                               name="c1", office_id="o1"))  # fmt: skip
        await stale.heartbeat(60)  # still "alive": only a restart can clear it
        async with running_nodes(redis.url, settings, count=1, prefix=prefix) as again:
            store = store_of(again)
            await eventually(lambda: _is_none(store.sid_of("o1", "c1")), what="c1 forgotten")
            assert (await again.app.health())["connections"] == 0
    finally:
        await stale.client.aclose()


async def _is_none(value: Awaitable[Any]) -> bool:
    return await value is None


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


async def test_multinode_redis_outage_answers_503_and_recovers(
    private_redis: RedisServer,
) -> None:
    async with running_nodes(private_redis.url, SETTINGS) as srv:
        n0, n1 = srv.nodes
        async with AsyncExitStack() as stack:
            alice = await joined_raw(stack, n0, "agent", "alice", "o1")
            c1 = await joined_raw(stack, n1, "computer", "c1", "o1")
            echo_computer(c1)
            late = await stack.enter_async_context(connect_raw(n1, "computer"))
            leaver = await joined_raw(stack, n1, "computer", "c2", "o1")
            assert (await alice.call(Event.TOOL_CALL, CALL))["content"][0]["text"] == "pong"  # type: ignore[index]

            private_redis.stop()
            await leaver.sio.disconnect()  # its leave cannot be recorded nor broadcast now
            answer = await alice.call(Event.TOOL_CALL, CALL)
            assert isinstance(answer, dict)
            assert (answer["code"], answer["details"]) == (
                503, {"reason": "registry_unavailable", "delivered": False}
            )  # fmt: skip
            assert "Registry unavailable" in answer["message"]
            assert await late.join("computer", "c9", "o1") == (
                False,
                "Registry unavailable, try again later",
            )
            health = await n0.app.health()
            assert (health["status"], health["redis"]) == ("degraded", "unavailable")

            private_redis.start()  # empty: the nodes put their sessions back

            async def served() -> bool:
                # Until a node's Socket.IO channel is subscribed again a forward can be
                # lost: a short tool timeout turns that into a quick 408 and a retry.
                reply = await alice.call(Event.TOOL_CALL, {**CALL, "timeout": 2}, timeout=60)
                return isinstance(reply, dict) and reply.get("content") is not None

            await eventually(served, what="routed calls work again")
            # The office hears of c2 once the registry is back.
            assert await alice.next_notification(Event.NOTIFY_LEAVE_OFFICE, timeout=60) == (
                Event.NOTIFY_LEAVE_OFFICE,
                {"office_id": "o1", "computer": "c2"},
            )
            # Nothing half-written: c9 never joined, alice and c1 are back, exactly. Each
            # node puts its own sessions back at its next heartbeat, so node 0 (alice's)
            # may still be one beat behind node 1 here.
            expected = [("alice", Role.AGENT), ("c1", Role.COMPUTER)]

            async def restored() -> bool:
                members = await store_of(n1).office_members("o1")
                return sorted((m.name, m.role) for m in members) == expected

            await eventually(restored, what="both nodes put their sessions back")
            members = await store_of(n1).office_members("o1")
            assert sorted((m.name, m.role) for m in members) == expected
            assert await store_of(n0).sid_of("o1", "c9") is None
            assert await late.join("computer", "c9", "o1") == (True, None)
            assert (await n0.app.health())["status"] == "ok"


async def test_multinode_reaper_names_the_dead_node_apart_from_itself(
    nodes: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    n0, n1 = nodes.nodes
    ghost = RedisStateStore(
        connect_redis(SETTINGS_URL(n0)), prefix=n0.settings.redis_prefix, node_id="ghost-9"
    )
    caplog.set_level(logging.WARNING, logger="a2c_server.liveness")
    try:
        async with AsyncExitStack() as stack:
            alice = await joined_raw(stack, n0, "agent", "alice", "o1")
            await ghost.heartbeat(0.3)
            await ghost.put(Member(sid="ghost-sid", role=Role.COMPUTER, a2c_version="0.2.3",
                                   name="c1", office_id="o1"))  # fmt: skip
            await alice.next_notification(Event.NOTIFY_LEAVE_OFFICE)
    finally:
        await ghost.client.aclose()
    reaps = [r for r in caplog.records if r.getMessage().startswith("reaped sessions")]
    assert len(reaps) == 1, [r.getMessage() for r in reaps]
    fields = reaps[0].a2c  # type: ignore[attr-defined]
    node_ids = {store_of(n).node_id for n in (n0, n1)}
    assert fields["dead_node"] == "ghost-9" and fields["sessions"] == 1
    assert fields["node"] in node_ids  # the reaper, never the dead node
    assert "dead_node=ghost-9" in reaps[0].getMessage()


async def test_multinode_call_out_across_a_redis_restart_gets_its_computers_answer(
    private_redis: RedisServer,
) -> None:
    async with running_nodes(private_redis.url, SETTINGS) as srv, AsyncExitStack() as stack:
        n0, n1 = srv.nodes
        alice = await joined_raw(stack, n0, "agent", "alice", "o1")
        c1 = await joined_raw(stack, n1, "computer", "c1", "o1")
        received, release = asyncio.Event(), asyncio.Event()
        runs = 0

        async def answer(payload: Any) -> dict[str, Any]:
            nonlocal runs
            runs += 1
            received.set()
            await release.wait()
            return {"content": [{"type": "text", "text": "done"}], "isError": False}

        c1.sio.on(Event.TOOL_CALL.value, answer, namespace=NAMESPACE)
        call = asyncio.ensure_future(alice.call(Event.TOOL_CALL, CALL, timeout=90))
        await asyncio.wait_for(received.wait(), 30)

        private_redis.stop()
        remote = n0.app.multinode.remote  # type: ignore[union-attr]

        async def noticed() -> bool:
            return call.done() or remote.disrupted_calls() == 1

        await eventually(noticed, what="node 0 noticed the outage")
        private_redis.start()  # empty

        async def both_listen() -> bool:
            manager = n0.app.multinode.manager  # type: ignore[union-attr]
            channels = [manager.channel, *(f"{manager.channel}:node:{n.settings.node_id}"
                                           for n in (n0, n1))]  # fmt: skip
            try:
                counts = await store_of(n0).client.pubsub_numsub(*channels)
            except Exception:
                return False
            return [int(c) for _, c in counts] == [2, 1, 1]

        await eventually(both_listen, what="both nodes subscribed again")
        release.set()
        reply = await asyncio.wait_for(call, 60)
        # Before the fix: a 503 "try again" at the first check during the outage.
        assert isinstance(reply, dict) and reply.get("content") == [
            {"type": "text", "text": "done"}
        ], reply
        assert runs == 1


async def test_multinode_computer_lost_across_a_redis_restart_says_the_call_may_have_run(
    private_redis: RedisServer,
) -> None:
    async with running_nodes(private_redis.url, SETTINGS) as srv, AsyncExitStack() as stack:
        n0 = srv.nodes[0]
        # c1 lives on a node that dies while Redis is down (it never comes back).
        ghost = RedisStateStore(
            connect_redis(SETTINGS_URL(n0)), prefix=n0.settings.redis_prefix, node_id="ghost"
        )
        try:
            alice = await joined_raw(stack, n0, "agent", "alice", "o1")
            await stack.enter_async_context(ghost_listens(n0))
            await ghost.heartbeat(60)
            await ghost.put(Member(sid="ghost-sid", role=Role.COMPUTER, a2c_version="0.2.3",
                                   name="c1", office_id="o1"))  # fmt: skip
            call = asyncio.ensure_future(alice.call(Event.TOOL_CALL, CALL, timeout=90))
            remote = n0.app.multinode.remote  # type: ignore[union-attr]
            await eventually(lambda: _true(len(remote._watched) == 1), what="the call is out")
            private_redis.stop()
            await eventually(lambda: _true(call.done() or remote.disrupted_calls() == 1),
                             what="node 0 noticed the outage")  # fmt: skip
            private_redis.start()  # empty: c1 is not put back by anyone
            reply = await asyncio.wait_for(call, 60)
        finally:
            await ghost.client.aclose()
        assert isinstance(reply, dict) and reply["code"] == 500, reply
        assert reply["details"] == {
            "computer_name": "c1", "reason": "computer_disconnected", "delivered": True,
        }  # fmt: skip
        assert "may have run" in reply["message"]


async def _true(value: bool) -> bool:
    return value
