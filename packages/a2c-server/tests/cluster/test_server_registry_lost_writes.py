"""A registry that lost a node's acknowledged writes gets them back from the node.

A Redis failover promotes a replica that may have missed the last writes (replication is
asynchronous); an AOF may lose its last second. Emulated on a real ``redis-server`` by
putting the registry's keys back as they were before a write (DUMP / RESTORE): the node's
next heartbeat sees its write sequence behind what it saw acknowledged and resyncs, so a
seat its Agent left no longer blocks anyone, and a seat its Agent took cannot be taken.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from redis import asyncio as aioredis

from a2c_protocol import Role
from a2c_server import Member
from a2c_server._cluster._liveness import NodeLiveness
from a2c_server._cluster._redis_store import RedisStateStore, connect_redis
from a2c_server._exceptions import StateConflictError
from a2c_server._state._offices import Broadcast
from a2c_testkit.redis_server import RedisServer


def agent(sid: str, office: str) -> Member:
    return Member(sid=sid, role=Role.AGENT, a2c_version="0.2.3", name=sid, office_id=office)


async def snapshot(client: aioredis.Redis, prefix: str) -> dict[str, tuple[bytes, int]]:
    out: dict[str, tuple[bytes, int]] = {}
    for key in await client.keys("{" + prefix + "}*"):
        dump, ttl = await client.dump(key), await client.pttl(key)
        if dump is not None:
            out[key] = (dump, max(ttl, 0))
    return out


async def roll_back(
    client: aioredis.Redis, prefix: str, saved: dict[str, tuple[bytes, int]]
) -> None:
    for key in await client.keys("{" + prefix + "}*"):
        if key not in saved:
            await client.delete(key)
    for key, (dump, ttl) in saved.items():
        await client.restore(key, ttl, dump, replace=True)


@pytest.fixture
async def raw(redis: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis.url)  # bytes: DUMP payloads are binary
    yield client
    await client.aclose()


async def _nothing(notices: tuple[Broadcast, ...]) -> None:
    return None


async def _left(sid: str, office: str) -> None:
    return None


@pytest.mark.parametrize("lost", ["leave", "join"])
async def test_a_node_puts_back_what_the_registry_lost(
    redis: RedisServer, raw: aioredis.Redis, lost: str
) -> None:
    prefix = f"lost-{uuid.uuid4().hex[:8]}"
    a = RedisStateStore(connect_redis(redis.url), prefix=prefix, node_id="a")
    b = RedisStateStore(connect_redis(redis.url), prefix=prefix, node_id="b")
    liveness = NodeLiveness(a, ttl=30.0, broadcast=_nothing, leave_room=_left)
    try:
        await liveness.start()
        await b.heartbeat(30.0)
        if lost == "leave":
            await a.put(agent("alice", "o1"))
            saved = await snapshot(raw, prefix)
            await a.remove("alice")  # acknowledged, then lost
        else:
            saved = await snapshot(raw, prefix)
            await a.put(agent("alice", "o1"))  # acknowledged, then lost
        await roll_back(raw, prefix, saved)
        await liveness.tick()
        if lost == "leave":
            # The stale seat is gone: another Agent takes the office.
            assert await a.office_agent("o1") is None
            await b.put(agent("bob", "o1"))
        else:
            # The lost seat is back: nobody else can take it.
            assert await a.office_agent("o1") == "alice"
            with pytest.raises(StateConflictError, match="already has an agent"):
                await b.put(agent("bob", "o1"))
    finally:
        await liveness.stop()
        await a.aclose()
        await b.aclose()
